// RBAC escalation prevention, as Kubernetes' policy-based role and binding storage does it
// (pkg/registry/rbac/escalation_check.go, pkg/registry/rbac/validation/{rule,policy_comparator,policy_compact}.go):
// a caller may grant only what it holds, unless it has `escalate` (roles) or `bind` (bindings).
import type { ObjectHeader, PolicyRule, RoleRef } from "@orch/api";
import { errors, goQuote, jsonEqual } from "@orch/machinery";
import { resourceAttributes } from "../../generic/authorizer.js";
import type { ClusterReader, RequestContext } from "../../generic/kind.js";

/** The group whose members the apiserver trusts with everything (Kubernetes' SystemPrivilegedGroup). */
export const SYSTEM_MASTERS = "system:masters";

/** Rules that only cluster-admin holds: needed to set an aggregationRule, which can gather anything. */
export const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] },
];

/** EscalationAllowed: the apiserver's own requests and system:masters skip the checks. */
export const escalationAllowed = (ctx: RequestContext): boolean => !ctx.authorizer || ctx.user.groups.includes(SYSTEM_MASTERS);

/** IsOnlyMutatingGCFields: an update that touches only owner references and finalizers is not a grant. */
export function onlyGarbageCollectionFields(obj: ObjectHeader, old: ObjectHeader): boolean {
  const { ownerReferences: _o, finalizers: _f, managedFields: _m, selfLink: _s, ...meta } = obj.metadata;
  const { ownerReferences: _oo, finalizers: _of, managedFields: _om, selfLink: _os, ...oldMeta } = old.metadata;
  return jsonEqual({ ...obj, metadata: meta }, { ...old, metadata: oldMeta });
}

/** Whether the caller may do `verb` on a role kind (`escalate`, `bind`), asked as Kubernetes asks it. */
export async function mayOnRole(
  ctx: RequestContext,
  verb: "escalate" | "bind",
  rbacGroup: string,
  resource: "roles" | "clusterroles",
  namespace: string,
  name: string,
): Promise<boolean> {
  if (!ctx.authorizer) return true;
  const decision = await ctx.authorizer.authorize(resourceAttributes(ctx.user, verb, { apiGroup: rbacGroup, resource, namespace, name }));
  return decision.allowed;
}

/** GetRoleReferenceRules: the rules of the role a binding names; 404 when it does not exist. */
export async function roleReferenceRules(
  roleRef: RoleRef,
  namespace: string,
  rbacGroup: string,
  cluster: ClusterReader,
): Promise<PolicyRule[]> {
  const resource = roleRef.kind === "Role" ? "roles" : "clusterroles";
  const role = await cluster.get(rbacGroup, resource, roleRef.kind === "Role" ? namespace : "", roleRef.name);
  if (!role) throw errors.notFound({ group: rbacGroup, resource }, roleRef.name);
  return (role.rules as PolicyRule[] | undefined) ?? [];
}

/**
 * ConfirmNoEscalation: undefined when the caller's rules in `namespace` cover `rules`, otherwise
 * Kubernetes' message listing what is missing.
 */
export async function missingPermissions(ctx: RequestContext, rules: PolicyRule[], namespace: string): Promise<string | undefined> {
  if (!ctx.authorizer) return undefined;
  const owner = await ctx.authorizer.rulesFor(ctx.user, namespace);
  const missing = uncovered(owner.rules, rules);
  if (missing.length === 0) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  const groups = `[${ctx.user.groups.map(goQuote).join(" ")}]`;
  let msg = `user ${goQuote(ctx.user.username)} (groups=${groups}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join("\n")}`;
  if (owner.errors.length > 0) msg += `; resolution errors: [${owner.errors.join(" ")}]`;
  return msg;
}

/** Throws Kubernetes' 403 when the caller does not hold every rule it grants. */
export async function confirmNoEscalation(
  ctx: RequestContext,
  gr: { group: string; resource: string },
  name: string,
  rules: PolicyRule[],
  namespace: string,
): Promise<void> {
  const missing = await missingPermissions(ctx, rules, namespace);
  if (missing) throw errors.forbidden(gr, name, missing);
}

/** Covers: the sub-rules (one verb, group, resource, name each) of `servant` that no owner rule covers. */
export function uncovered(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  return servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = rule.verbs ?? [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of verbs) {
        if (rule.resourceNames?.length) {
          for (const name of rule.resourceNames) {
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
          }
        } else {
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        }
      }
    }
  }
  // Non-resource URLs combine only with verbs.
  for (const url of rule.nonResourceURLs ?? []) for (const verb of verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const has = (set: readonly string[] | undefined, x: string) => (set ?? []).includes(x);
const hasAll = (set: readonly string[] | undefined, xs: readonly string[] | undefined) => (xs ?? []).every((x) => has(set, x));

const nonResourceURLCovers = (owner: string, sub: string) =>
  owner === sub || (owner.endsWith("*") && sub.startsWith(owner.replace(/\*+$/, "")));

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, "*") || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, "*") || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = has(owner.resources, "*") || hasAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((u) => (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, u)));
  const ownerNames = owner.resourceNames ?? [];
  const names = sub.resourceNames?.length ? ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames) : ownerNames.length === 0;
  return verbs && groups && resources && names && urls;
}

/** CompactRules: single group/resource rules that differ only by verb become one rule. */
function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const isSimple =
      !rule.resourceNames?.length && !rule.nonResourceURLs?.length && rule.apiGroups?.length === 1 && rule.resources?.length === 1;
    if (!isSimple) {
      compacted.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups, rule.resources]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...(existing.verbs ?? []), ...(rule.verbs ?? [])];
    else simple.set(key, { apiGroups: rule.apiGroups, resources: rule.resources, verbs: [...(rule.verbs ?? [])] });
  }
  return [...compacted, ...simple.values()];
}

const quotedList = (xs: readonly string[]) => `[${xs.map(goQuote).join(" ")}]`;

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${quotedList(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${quotedList(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quotedList(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${quotedList(rule.resourceNames)}`);
  if (rule.verbs?.length) parts.push(`Verbs:${quotedList(rule.verbs)}`);
  return `{${parts.join(", ")}}`;
}
