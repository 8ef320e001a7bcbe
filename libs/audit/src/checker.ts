// Which level a request is audited at: the first rule that matches it, else None (Kubernetes'
// pkg/audit/policy/checker.go, rule for rule).
import type { Level, Policy, PolicyRule, Stage } from "./policy.js";

/** Who made a request and what it asks, in the terms of Kubernetes' authorizer.Attributes. */
export type RequestAttributes = {
  /** Absent when authentication failed. */
  user?: { username: string; groups: readonly string[] };
  verb: string;
} & (
  | { resourceRequest: true; namespace: string; apiGroup: string; resource: string; subresource: string; name: string }
  | { resourceRequest: false; path: string }
);

/** What the policy says about one request. */
export interface RequestAuditConfig {
  level: Level;
  omitStages: readonly Stage[];
  omitManagedFields: boolean;
}

export class PolicyChecker {
  private readonly rules: readonly (PolicyRule & { config: RequestAuditConfig })[];
  private readonly unmatched: RequestAuditConfig;

  constructor(policy: Policy) {
    // A rule omits the stages the policy omits as well as its own.
    this.rules = policy.rules.map((rule) => ({
      ...rule,
      config: {
        level: rule.level,
        omitStages: [...new Set([...policy.omitStages, ...rule.omitStages])],
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
      },
    }));
    this.unmatched = { level: "None", omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields };
  }

  evaluate(attributes: RequestAttributes): RequestAuditConfig {
    for (const rule of this.rules) if (ruleMatches(rule, attributes)) return rule.config;
    return this.unmatched;
  }
}

function ruleMatches(rule: PolicyRule, attributes: RequestAttributes): boolean {
  const { user } = attributes;
  if (rule.users.length > 0 && (!user || !rule.users.includes(user.username))) return false;
  if (rule.userGroups.length > 0 && !user?.groups.some((g) => rule.userGroups.includes(g))) return false;
  if (rule.verbs.length > 0 && !rule.verbs.includes(attributes.verb)) return false;
  // A rule names resources, or URLs, or neither (then it matches every request).
  if (rule.namespaces.length > 0 || rule.resources.length > 0) return resourceMatches(rule, attributes);
  if (rule.nonResourceURLs.length > 0)
    return !attributes.resourceRequest && rule.nonResourceURLs.some((spec) => pathMatches(attributes.path, spec));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === "*" || spec === path) return true;
  // Kubernetes trims every trailing `*` (TrimRight), so `/api**` is `/api*`.
  return spec.endsWith("*") && path.startsWith(spec.replace(/\*+$/, ""));
}

function resourceMatches(rule: PolicyRule, attributes: RequestAttributes): boolean {
  if (!attributes.resourceRequest) return false;
  // Cluster-scoped resources have the namespace "".
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(attributes.namespace)) return false;
  if (rule.resources.length === 0) return true;
  const { apiGroup, resource, subresource, name } = attributes;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const group of rule.resources) {
    if (group.group !== apiGroup) continue;
    if (group.resources.length === 0) return true;
    if (group.resourceNames.length > 0 && !group.resourceNames.includes(name)) continue;
    for (const spec of group.resources) {
      if (spec === combined || spec === "*") return true;
      if (subresource && spec.startsWith("*/") && subresource === spec.slice(2)) return true;
      if (spec.endsWith("/*") && resource === spec.slice(0, -2)) return true;
    }
  }
  return false;
}
