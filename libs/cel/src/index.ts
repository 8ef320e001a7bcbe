// @orch/cel: the CEL environments orch evaluates: DRA device selectors (DeviceClass, spec 2.7) and
// CustomResourceDefinition validation rules (spec 2.12).
export {
  CEL_SELECTOR_EXPRESSION_MAX_COST,
  CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
  compileDeviceSelector,
  evaluateDeviceClass,
  type CompileResult,
  type Device,
  type DeviceAttribute,
  type DeviceCapacity,
  type DeviceClassSelectors,
  type DeviceSelectorProgram,
  type EvaluationResult,
} from "./device-selector.js";
export { Quantity, QuantityError } from "./quantity.js";
export { Semver, SemverError } from "./semver.js";
export {
  CEL_MAX_REQUEST_SIZE_BYTES,
  CRD_ESTIMATED_COST_LIMIT,
  CRD_RULE_ESTIMATED_COST_LIMIT,
  celCostErrorMessage,
  celMaxCardinality,
  CRD_RULE_PER_CALL_COST_LIMIT,
  CRD_RULES_RUNTIME_COST_BUDGET,
  compileCelExpression,
  compileCrdRules,
  escapeFieldName,
  isCelIdentifier,
  type CelProgram,
  type CompiledCrdRule,
  type CrdRule,
  type RuleEvaluation,
  type RuleField,
  type RuleType,
  type RuleTypeSize,
} from "./crd-rules.js";
export { compileRegexp, regexpFind, regexpFindAll, regexpMatches, type CompiledRegexp } from "./re2.js";
export { celEquals, concatLists, type ListKind } from "./values.js";
export {
  MATCH_CONDITION_COST_LIMIT,
  compileMatchCondition,
  type CompiledMatchCondition,
  type MatchConditionInput,
} from "./match-conditions.js";
export {
  ADMISSION_PER_CALL_COST_LIMIT,
  ADMISSION_RUNTIME_COST_BUDGET,
  AdmissionActivation,
  OUT_OF_BUDGET,
  compileAdmissionExpression,
  type AdmissionDeclarations,
  type AdmissionExpression,
  type AdmissionInput,
  type ExpressionResult,
  type ExpressionReturn,
} from "./admission-expressions.js";
export {
  AuthorizationPending,
  authorizerFor,
  type AuthorizationAnswer,
  type AuthorizationAnswers,
  type AuthorizationQuestion,
  type AuthorizerValue,
} from "./authorizer-library.js";
export { type FieldTree, undefinedFieldIssues } from "./field-check.js";
