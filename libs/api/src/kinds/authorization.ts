// authorization.{api_domain}/v1 review kinds: SubjectAccessReview, SelfSubjectAccessReview,
// LocalSubjectAccessReview and SelfSubjectRulesReview. Mirrors k8s.io/api/authorization/v1/types.go.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, bool, mapOf, opt, rawJson, str } from "../schema.js";

export const ResourceAttributes = v.object({
  namespace: opt(str()),
  verb: opt(str()),
  group: opt(str()),
  version: opt(str()),
  resource: opt(str()),
  subresource: opt(str()),
  name: opt(str()),
  // Authorizing with selectors is not something RBAC looks at; they are accepted and ignored.
  fieldSelector: opt(rawJson()),
  labelSelector: opt(rawJson()),
});
export type ResourceAttributes = v.InferOutput<typeof ResourceAttributes>;

export const NonResourceAttributes = v.object({
  path: opt(str()),
  verb: opt(str()),
});
export type NonResourceAttributes = v.InferOutput<typeof NonResourceAttributes>;

export const SubjectAccessReviewSpec = v.object({
  resourceAttributes: opt(v.nullable(ResourceAttributes)),
  nonResourceAttributes: opt(v.nullable(NonResourceAttributes)),
  user: opt(str()),
  groups: opt(atomicList(str())),
  extra: opt(mapOf(atomicList(str()))),
  uid: opt(str()),
});
export type SubjectAccessReviewSpec = v.InferOutput<typeof SubjectAccessReviewSpec>;

export const SubjectAccessReviewStatus = v.object({
  allowed: opt(bool(), false),
  denied: opt(bool()),
  reason: opt(str()),
  evaluationError: opt(str()),
});
export type SubjectAccessReviewStatus = v.InferOutput<typeof SubjectAccessReviewStatus>;

export const SubjectAccessReview = objectOf({
  spec: SubjectAccessReviewSpec,
  status: opt(SubjectAccessReviewStatus, {}),
});
export type SubjectAccessReview = v.InferOutput<typeof SubjectAccessReview>;

export const LocalSubjectAccessReview = SubjectAccessReview;

export const SelfSubjectAccessReviewSpec = v.object({
  resourceAttributes: opt(v.nullable(ResourceAttributes)),
  nonResourceAttributes: opt(v.nullable(NonResourceAttributes)),
});

export const SelfSubjectAccessReview = objectOf({
  spec: SelfSubjectAccessReviewSpec,
  status: opt(SubjectAccessReviewStatus, {}),
});
export type SelfSubjectAccessReview = v.InferOutput<typeof SelfSubjectAccessReview>;

export const ResourceRule = v.object({
  verbs: atomicList(str()),
  apiGroups: opt(atomicList(str())),
  resources: opt(atomicList(str())),
  resourceNames: opt(atomicList(str())),
});
export type ResourceRule = v.InferOutput<typeof ResourceRule>;

export const NonResourceRule = v.object({
  verbs: atomicList(str()),
  nonResourceURLs: opt(atomicList(str())),
});
export type NonResourceRule = v.InferOutput<typeof NonResourceRule>;

export const SubjectRulesReviewStatus = v.object({
  resourceRules: opt(atomicList(ResourceRule), []),
  nonResourceRules: opt(atomicList(NonResourceRule), []),
  incomplete: opt(bool(), false),
  evaluationError: opt(str()),
});

export const SelfSubjectRulesReview = objectOf({
  spec: opt(v.object({ namespace: opt(str()) }), {}),
  status: opt(SubjectRulesReviewStatus, {}),
});
export type SelfSubjectRulesReview = v.InferOutput<typeof SelfSubjectRulesReview>;
