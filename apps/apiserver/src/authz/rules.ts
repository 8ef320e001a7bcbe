// RBAC rule matching exactly as Kubernetes' authorizer does it (plugin/pkg/auth/authorizer/rbac/rbac.go,
// pkg/apis/rbac/v1/evaluation_helpers.go): `*` wildcards, `resource/subresource` and `*/subresource`,
// resourceNames, and non-resource URLs with a trailing `*`.
import type { PolicyRule } from "@orch/api";
import type { AuthorizationAttributes } from "@orch/registry";

const ALL = "*";

export const verbMatches = (rule: PolicyRule, verb: string): boolean => (rule.verbs ?? []).some((v) => v === ALL || v === verb);

export const apiGroupMatches = (rule: PolicyRule, group: string): boolean => (rule.apiGroups ?? []).some((g) => g === ALL || g === group);

/** `combined` is `resource/subresource` when there is a subresource. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some(
    (r) =>
      r === ALL ||
      r === combined ||
      // `*/subresource` matches that subresource of every resource.
      (subresource !== "" && r.length === subresource.length + 2 && r.startsWith("*/") && r.endsWith(subresource)),
  );
}

export const resourceNameMatches = (rule: PolicyRule, name: string): boolean =>
  !rule.resourceNames?.length || rule.resourceNames.includes(name);

export const nonResourceURLMatches = (rule: PolicyRule, path: string): boolean =>
  (rule.nonResourceURLs ?? []).some((u) => u === ALL || u === path || (u.endsWith("*") && path.startsWith(u.replace(/\*+$/, ""))));

export function ruleAllows(attributes: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attributes.verb)) return false;
  if (!attributes.resourceRequest) return nonResourceURLMatches(rule, attributes.path);
  const combined = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  return (
    apiGroupMatches(rule, attributes.apiGroup) &&
    resourceMatches(rule, combined, attributes.subresource) &&
    resourceNameMatches(rule, attributes.name)
  );
}
