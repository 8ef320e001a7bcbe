// ClusterRole (rbac.authorization.<domain>/v1): Kubernetes' validation, including aggregationRule, and
// its policy-based storage (pkg/registry/rbac/clusterrole/policybased): a caller grants only what it
// holds cluster-wide unless it may `escalate`, and only cluster-admin may set an aggregationRule.
import { ClusterRole, type NamingProfile } from "@orch/api";
import { errors } from "@orch/machinery";
import type { KindDefinition, RequestContext } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";
import {
  FULL_AUTHORITY,
  confirmNoEscalation,
  escalationAllowed,
  mayOnRole,
  missingPermissions,
  onlyGarbageCollectionFields,
} from "./rbac-escalation.js";
import { roleColumns, validateAggregationRule, validatePolicyRules, validateRbacName } from "./rbac-validation.js";

const rulesOf = (o: ClusterRole) => o.rules ?? [];
const aggregationRuleOf = (o: ClusterRole) => o.aggregationRule;

export const clusterRoles = (p: NamingProfile): KindDefinition => {
  const group = p.group("rbac.authorization");
  const gr = { group, resource: "clusterroles" };
  const validate = (obj: ClusterRole) => [...validatePolicyRules(rulesOf(obj), false), ...validateAggregationRule(aggregationRuleOf(obj))];
  const admit = async (obj: ClusterRole, old: ClusterRole | undefined, ctx: RequestContext) => {
    if (escalationAllowed(ctx) || (old && onlyGarbageCollectionFields(obj, old))) return [];
    const name = obj.metadata.name ?? "";
    if (await mayOnRole(ctx, "escalate", group, "clusterroles", "", old ? name : "")) return [];
    await confirmNoEscalation(ctx, gr, name, rulesOf(obj), "");
    // An aggregationRule can gather anything (and, removed, stop tightening): it takes * on *.
    if (aggregationRuleOf(obj) || (old && aggregationRuleOf(old))) {
      if (await missingPermissions(ctx, FULL_AUTHORITY, "")) {
        throw errors.forbidden(gr, name, "must have cluster-admin privileges to use the aggregationRule");
      }
    }
    return [];
  };
  return defineKind({
    group,
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
    schema: ClusterRole,
    strategy: { validateName: validateRbacName, validate, validateUpdate: validate, admit },
    printerColumns: roleColumns,
  });
};
