// rbac.authorization.{api_domain}/v1 kinds: Role, ClusterRole, RoleBinding, ClusterRoleBinding.
// Mirrors k8s.io/api/rbac/v1/types.go; defaults from pkg/apis/rbac/v1/defaults.go.
import * as v from "valibot";
import { LabelSelector, objectOf } from "../meta.js";
import { atomicList, opt, str } from "../schema.js";
import { listOf } from "./meta-list.js";

// Go decodes a missing required field as its zero value; validation then reports it (422, not 400).
export const PolicyRule = v.object({
  verbs: opt(atomicList(str())),
  apiGroups: opt(atomicList(str())),
  resources: opt(atomicList(str())),
  resourceNames: opt(atomicList(str())),
  nonResourceURLs: opt(atomicList(str())),
});
export type PolicyRule = v.InferOutput<typeof PolicyRule>;

export const Subject = v.object({
  kind: opt(str(), ""),
  apiGroup: opt(str()),
  name: opt(str(), ""),
  namespace: opt(str()),
});
export type Subject = v.InferOutput<typeof Subject>;

export const RoleRef = v.object({
  apiGroup: opt(str(), ""),
  kind: opt(str(), ""),
  name: opt(str(), ""),
});
export type RoleRef = v.InferOutput<typeof RoleRef>;

export const AggregationRule = v.object({
  clusterRoleSelectors: opt(atomicList(LabelSelector)),
});

export const Role = objectOf({
  rules: opt(atomicList(PolicyRule)),
});
export type Role = v.InferOutput<typeof Role>;
export const RoleList = listOf(Role);

export const ClusterRole = objectOf({
  rules: opt(atomicList(PolicyRule)),
  aggregationRule: opt(AggregationRule),
});
export type ClusterRole = v.InferOutput<typeof ClusterRole>;
export const ClusterRoleList = listOf(ClusterRole);

export const RoleBinding = objectOf({
  subjects: opt(atomicList(Subject)),
  roleRef: opt(RoleRef, { apiGroup: "", kind: "", name: "" }),
});
export type RoleBinding = v.InferOutput<typeof RoleBinding>;
export const RoleBindingList = listOf(RoleBinding);

export const ClusterRoleBinding = RoleBinding;
export type ClusterRoleBinding = RoleBinding;
export const ClusterRoleBindingList = listOf(ClusterRoleBinding);

/** SetDefaults_RoleBinding and SetDefaults_Subject: the RBAC group where a reference leaves it out. */
export function defaultRoleBinding(binding: RoleBinding, rbacGroup: string): void {
  if (!binding.roleRef.apiGroup) binding.roleRef.apiGroup = rbacGroup;
  for (const subject of binding.subjects ?? []) {
    if (!subject.apiGroup && (subject.kind === "User" || subject.kind === "Group")) subject.apiGroup = rbacGroup;
  }
}
