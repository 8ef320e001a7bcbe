// RoleBinding (rbac.authorization.<domain>/v1, namespaced): Kubernetes' validation (roleRef immutable)
// and its policy-based storage (pkg/registry/rbac/rolebinding/policybased): a caller binds a role only
// with `bind` on it, or when it already holds all the role's permissions in the namespace.
import { type NamingProfile, RoleBinding, defaultRoleBinding } from "@orch/api";
import type { ClusterReader, KindDefinition, RequestContext } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";
import { confirmNoEscalation, escalationAllowed, mayOnRole, onlyGarbageCollectionFields, roleReferenceRules } from "./rbac-escalation.js";
import { bindingColumns, validateBinding, validateRbacName, validateRoleRefUnchanged } from "./rbac-validation.js";

/** The escalation check both binding kinds share; `namespace` is "" for a ClusterRoleBinding. */
export function bindingAdmission(group: string, resource: "rolebindings" | "clusterrolebindings") {
  return async (binding: RoleBinding, old: RoleBinding | undefined, ctx: RequestContext, cluster: ClusterReader) => {
    if (escalationAllowed(ctx) || (old && onlyGarbageCollectionFields(binding, old))) return [];
    const namespace = resource === "rolebindings" ? (binding.metadata.namespace ?? "") : "";
    const { kind, name } = binding.roleRef;
    // `bind` is asked in the binding's namespace, so it can be delegated per namespace.
    if (await mayOnRole(ctx, "bind", group, kind === "Role" ? "roles" : "clusterroles", namespace, name)) return [];
    const rules = await roleReferenceRules(binding.roleRef, namespace, group, cluster);
    await confirmNoEscalation(ctx, { group, resource }, binding.metadata.name ?? "", rules, namespace);
    return [];
  };
}

export const roleBindings = (p: NamingProfile): KindDefinition => {
  const group = p.group("rbac.authorization");
  const validate = (binding: RoleBinding) => validateBinding(binding, true, group);
  return defineKind({
    group,
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    namespaced: true,
    schema: RoleBinding,
    strategy: {
      defaults: (binding) => defaultRoleBinding(binding, group),
      validateName: validateRbacName,
      validate,
      validateUpdate: (obj, old) => [...validate(obj), ...validateRoleRefUnchanged(obj, old)],
      admit: bindingAdmission(group, "rolebindings"),
    },
    printerColumns: bindingColumns,
  });
};
