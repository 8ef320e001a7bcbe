export * from "./generic/kind.js";
export * from "./kinds/apiextensions/custom-resource-kind.js";
export * from "./generic/authorizer.js";
export * from "./generic/services.js";
export { KeptObjects, storageClusterReader } from "./generic/cluster-reader.js";
export * from "./generic/registry.js";
export * from "./generic/store.js";
export type * from "./generic/admission.js";
export { MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from "./kinds/admissionregistration/webhook-configuration.js";
export {
  VALIDATING_ADMISSION_POLICIES,
  VALIDATING_ADMISSION_POLICY_BINDINGS,
} from "./kinds/admissionregistration/validating-admission-policy.js";
export { ACCEPTED_ADMISSION_REVIEW_VERSIONS } from "./kinds/admissionregistration/webhook-validation.js";
// What the configurations' validation compiles, for the apiserver that evaluates it.
export { compileMatchCondition, type CompiledMatchCondition } from "@orch/cel";
// The admission CEL environment, for the apiserver's admission policies.
export {
  ADMISSION_RUNTIME_COST_BUDGET,
  AdmissionActivation,
  OUT_OF_BUDGET,
  authorizerFor,
  compileAdmissionExpression,
  type AdmissionExpression,
  type AuthorizationAnswer,
  type AuthorizationAnswers,
  type AuthorizationQuestion,
  type FieldTree,
  undefinedFieldIssues,
} from "@orch/cel";
export * from "./generic/watch.js";
export { NamespacePhases } from "./generic/namespace-phases.js";
export type { ListOptions } from "./generic/list-options.js";
export { builtinKinds } from "./kinds/index.js";
export { compactString, uncovered } from "./kinds/rbac/rbac-escalation.js";
export { builtinObjects, ensureBuiltinObjects } from "./kinds/bootstrap.js";
export {
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  type PortRange,
  type RangeAllocator,
  ServiceAllocators,
  heldValues,
  parseIpv4Range,
  parsePortRange,
} from "./kinds/core/service-allocator.js";
