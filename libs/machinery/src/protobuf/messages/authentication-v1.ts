// Protobuf field tables for k8s.io/api/authentication/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const authenticationV1: MessageTable = {
  BoundObjectReference: `1:kind:string 2:apiVersion:string 3:name:string 4:uid:string`,
  SelfSubjectReview: `1:metadata:ObjectMeta 2:status:SelfSubjectReviewStatus`,
  SelfSubjectReviewStatus: `1:userInfo:UserInfo`,
  TokenRequest: `1:metadata:ObjectMeta 2:spec:TokenRequestSpec 3:status:TokenRequestStatus`,
  TokenRequestSpec: `1:audiences:[]string 4:expirationSeconds:?int64 3:boundObjectRef:BoundObjectReference`,
  TokenRequestStatus: `1:token:!string 2:expirationTimestamp:Time`,
  TokenReview: `1:metadata:ObjectMeta 2:spec:TokenReviewSpec 3:status:TokenReviewStatus`,
  TokenReviewSpec: `1:token:string 2:audiences:[]string`,
  TokenReviewStatus: `1:authenticated:bool 2:user:UserInfo 4:audiences:[]string 3:error:string`,
  UserInfo: `1:username:string 2:uid:string 3:groups:[]string 4:extra:map:[]string`,
};
