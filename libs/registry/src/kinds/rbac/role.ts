// Role (rbac.authorization.<domain>/v1, namespaced): Kubernetes' validation (pkg/apis/rbac/validation)
// and its policy-based storage (pkg/registry/rbac/role/policybased): a caller grants only what it holds
// in the namespace, unless it may `escalate` roles.
import { type NamingProfile, Role } from "@orch/api";
import type { KindDefinition, RequestContext } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";
import { confirmNoEscalation, escalationAllowed, mayOnRole, onlyGarbageCollectionFields } from "./rbac-escalation.js";
import { roleColumns, validatePolicyRules, validateRbacName } from "./rbac-validation.js";

const rulesOf = (o: Role) => o.rules ?? [];

export const roles = (p: NamingProfile): KindDefinition => {
  const group = p.group("rbac.authorization");
  const gr = { group, resource: "roles" };
  const admit = async (obj: Role, old: Role | undefined, ctx: RequestContext) => {
    if (escalationAllowed(ctx) || (old && onlyGarbageCollectionFields(obj, old))) return [];
    const namespace = obj.metadata.namespace ?? "";
    // On create the request names no object, so `escalate` limited to resourceNames does not apply.
    if (await mayOnRole(ctx, "escalate", group, "roles", namespace, old ? (obj.metadata.name ?? "") : "")) return [];
    await confirmNoEscalation(ctx, gr, obj.metadata.name ?? "", rulesOf(obj), namespace);
    return [];
  };
  return defineKind({
    group,
    version: "v1",
    kind: "Role",
    plural: "roles",
    namespaced: true,
    schema: Role,
    strategy: {
      validateName: validateRbacName,
      validate: (obj) => validatePolicyRules(rulesOf(obj), true),
      validateUpdate: (obj) => validatePolicyRules(rulesOf(obj), true),
      admit,
    },
    printerColumns: roleColumns,
  });
};
