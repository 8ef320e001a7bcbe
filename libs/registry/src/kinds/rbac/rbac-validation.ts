// RBAC validation as Kubernetes has it (pkg/apis/rbac/validation/validation.go), shared by the four
// RBAC kinds, and their printer columns (pkg/printers/internalversion).
import type { ObjectHeader, PolicyRule, RoleBinding, RoleRef, Subject } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  fieldError,
  isValidPathSegmentName,
  labelSelectorFromObject,
  nameIsDNSSubdomain,
  validateLabelSelector,
} from "@orch/machinery";
import type { PrinterColumn } from "../../generic/kind.js";
import { AGE, column } from "../../generic/define.js";

/** ValidateRBACName: names only need to be one URL path segment. */
export const validateRbacName = (name: string): string[] => isValidPathSegmentName(name);

/** ValidatePolicyRule: verbs always; nonResourceURLs only in cluster roles and alone; otherwise groups and resources. */
export function validatePolicyRules(rules: readonly PolicyRule[] | undefined, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  (rules ?? []).forEach((rule, i) => {
    const at = FieldPath.root("rules").index(i);
    if (!rule.verbs?.length) errs.push(fieldError.required(at.child("verbs"), "verbs must contain at least one value"));
    if (rule.nonResourceURLs?.length) {
      if (namespaced) {
        errs.push(
          fieldError.invalid(at.child("nonResourceURLs"), rule.nonResourceURLs, "namespaced rules cannot apply to non-resource URLs"),
        );
      }
      if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length) {
        errs.push(
          fieldError.invalid(
            at.child("nonResourceURLs"),
            rule.nonResourceURLs,
            "rules cannot apply to both regular resources and non-resource URLs",
          ),
        );
      }
      return;
    }
    if (!rule.apiGroups?.length) errs.push(fieldError.required(at.child("apiGroups"), "resource rules must supply at least one api group"));
    if (!rule.resources?.length) errs.push(fieldError.required(at.child("resources"), "resource rules must supply at least one resource"));
    if (rule.resourceNames?.length && (rule.resources?.length ?? 0) > 1) {
      errs.push(fieldError.required(at.child("resourceNames"), "resource names cannot apply to multiple resources"));
    }
  });
  return errs;
}

/** A ClusterRole's aggregationRule: at least one selector, each a valid label selector. */
export function validateAggregationRule(rule: { clusterRoleSelectors?: unknown[] } | undefined): FieldError[] {
  if (!rule) return [];
  const at = FieldPath.root("aggregationRule", "clusterRoleSelectors");
  const selectors = (rule.clusterRoleSelectors ?? []) as Parameters<typeof labelSelectorFromObject>[0][];
  if (selectors.length === 0) {
    return [fieldError.required(at, "at least one clusterRoleSelector required if aggregationRule is non-nil")];
  }
  const errs: FieldError[] = [];
  selectors.forEach((selector, i) => {
    errs.push(...validateLabelSelector(selector, at.index(i)));
    try {
      labelSelectorFromObject(selector);
    } catch {
      errs.push(fieldError.invalid(at.index(i), selector, "invalid label selector."));
    }
  });
  return errs;
}

/** The roleRef and subjects of a binding; `namespaced` for a RoleBinding. */
export function validateBinding(binding: RoleBinding, namespaced: boolean, rbacGroup: string): FieldError[] {
  const errs: FieldError[] = [];
  const ref = binding.roleRef;
  if (ref.apiGroup !== rbacGroup) errs.push(fieldError.notSupported("roleRef.apiGroup", ref.apiGroup, [rbacGroup]));
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"];
  if (!kinds.includes(ref.kind)) errs.push(fieldError.notSupported("roleRef.kind", ref.kind, kinds));
  if (!ref.name) errs.push(fieldError.required("roleRef.name"));
  else for (const msg of validateRbacName(ref.name)) errs.push(fieldError.invalid("roleRef.name", ref.name, msg));
  (binding.subjects ?? []).forEach((subject, i) =>
    errs.push(...validateSubject(subject, namespaced, rbacGroup, FieldPath.root("subjects").index(i))),
  );
  return errs;
}

function validateSubject(subject: Subject, namespaced: boolean, rbacGroup: string, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!subject.name) errs.push(fieldError.required(at.child("name")));
  switch (subject.kind) {
    case "ServiceAccount":
      if (subject.name)
        for (const msg of nameIsDNSSubdomain(subject.name, false)) errs.push(fieldError.invalid(at.child("name"), subject.name, msg));
      if (subject.apiGroup) errs.push(fieldError.notSupported(at.child("apiGroup"), subject.apiGroup, [""]));
      if (!namespaced && !subject.namespace) errs.push(fieldError.required(at.child("namespace")));
      break;
    case "User":
    case "Group":
      if (!subject.name)
        errs.push(fieldError.invalid(at.child("name"), subject.name, `${subject.kind.toLowerCase()} name cannot be empty`));
      if (subject.apiGroup !== rbacGroup) errs.push(fieldError.notSupported(at.child("apiGroup"), subject.apiGroup ?? "", [rbacGroup]));
      break;
    default:
      errs.push(fieldError.notSupported(at.child("kind"), subject.kind, ["ServiceAccount", "User", "Group"]));
  }
  return errs;
}

/** The roleRef never changes: a binding to another role is another binding. */
export function validateRoleRefUnchanged(obj: RoleBinding, old: RoleBinding): FieldError[] {
  const now = obj.roleRef;
  const before = old.roleRef;
  if (now.apiGroup === before.apiGroup && now.kind === before.kind && now.name === before.name) return [];
  // Kubernetes validates its internal type, which has no JSON tags: the value prints with Go's field names.
  const printed = { APIGroup: now.apiGroup, Kind: now.kind, Name: now.name };
  return [fieldError.invalid("roleRef", printed, "cannot change roleRef")];
}

/** Roles print their creation time as RFC 3339 text. */
export const roleColumns: PrinterColumn[] = [column("Created At", "string", (o) => o.metadata.creationTimestamp ?? "")];

const subjectsOf = (o: ObjectHeader, kind: string) =>
  ((o.subjects as Subject[] | undefined) ?? [])
    .filter((s) => s.kind === kind)
    .map((s) => (kind === "ServiceAccount" ? `${s.namespace ?? ""}/${s.name}` : s.name))
    .join(", ");

export const bindingColumns: PrinterColumn[] = [
  column("Role", "string", (o) => `${(o.roleRef as RoleRef).kind}/${(o.roleRef as RoleRef).name}`),
  AGE,
  column("Users", "string", (o) => subjectsOf(o, "User"), 1),
  column("Groups", "string", (o) => subjectsOf(o, "Group"), 1),
  column("ServiceAccounts", "string", (o) => subjectsOf(o, "ServiceAccount"), 1),
];
