// Protobuf field tables for k8s.io/api/authorization/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const authorizationV1: MessageTable = {
  FieldSelectorAttributes: `1:rawSelector:string 2:requirements:[]FieldSelectorRequirement`,
  LabelSelectorAttributes: `1:rawSelector:string 2:requirements:[]LabelSelectorRequirement`,
  LocalSubjectAccessReview: `1:metadata:ObjectMeta 2:spec:SubjectAccessReviewSpec 3:status:SubjectAccessReviewStatus`,
  NonResourceAttributes: `1:path:string 2:verb:string`,
  NonResourceRule: `1:verbs:[]string 2:nonResourceURLs:[]string`,
  ResourceAttributes: `1:namespace:string 2:verb:string 3:group:string 4:version:string 5:resource:string
    6:subresource:string 7:name:string 8:fieldSelector:FieldSelectorAttributes
    9:labelSelector:LabelSelectorAttributes`,
  ResourceRule: `1:verbs:[]string 2:apiGroups:[]string 3:resources:[]string 4:resourceNames:[]string`,
  SelfSubjectAccessReview: `1:metadata:ObjectMeta 2:spec:SelfSubjectAccessReviewSpec
    3:status:SubjectAccessReviewStatus`,
  SelfSubjectAccessReviewSpec: `1:resourceAttributes:ResourceAttributes
    2:nonResourceAttributes:NonResourceAttributes`,
  SelfSubjectRulesReview: `1:metadata:ObjectMeta 2:spec:SelfSubjectRulesReviewSpec 3:status:SubjectRulesReviewStatus`,
  SelfSubjectRulesReviewSpec: `1:namespace:string`,
  SubjectAccessReview: `1:metadata:ObjectMeta 2:spec:SubjectAccessReviewSpec 3:status:SubjectAccessReviewStatus`,
  SubjectAccessReviewSpec: `1:resourceAttributes:ResourceAttributes 2:nonResourceAttributes:NonResourceAttributes
    3:user:string 4:groups:[]string 5:extra:map:[]string 6:uid:string`,
  SubjectAccessReviewStatus: `1:allowed:!bool 4:denied:bool 2:reason:string 3:evaluationError:string`,
  SubjectRulesReviewStatus: `1:resourceRules:[]ResourceRule 2:nonResourceRules:[]NonResourceRule 3:incomplete:!bool
    4:evaluationError:string`,
};
