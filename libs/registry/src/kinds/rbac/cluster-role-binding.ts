// ClusterRoleBinding (rbac.authorization.<domain>/v1): a RoleBinding's rules, cluster-wide, to
// ClusterRoles only (pkg/registry/rbac/clusterrolebinding/policybased).
import { ClusterRoleBinding, type NamingProfile, defaultRoleBinding } from "@orch/api";
import type { KindDefinition } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";
import { bindingAdmission } from "./role-binding.js";
import { bindingColumns, validateBinding, validateRbacName, validateRoleRefUnchanged } from "./rbac-validation.js";

export const clusterRoleBindings = (p: NamingProfile): KindDefinition => {
  const group = p.group("rbac.authorization");
  const validate = (binding: ClusterRoleBinding) => validateBinding(binding, false, group);
  return defineKind({
    group,
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
    schema: ClusterRoleBinding,
    strategy: {
      defaults: (binding) => defaultRoleBinding(binding, group),
      validateName: validateRbacName,
      validate,
      validateUpdate: (obj, old) => [...validate(obj), ...validateRoleRefUnchanged(obj, old)],
      admit: bindingAdmission(group, "clusterrolebindings"),
    },
    printerColumns: bindingColumns,
  });
};
