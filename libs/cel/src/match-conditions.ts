// Admission webhooks' matchConditions (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions):
// expressions of the admission environment (admission-expressions.ts) over `object`, `oldObject` and
// `request` (and `authorizer`), each of which must be a bool; together they share
// RuntimeCELCostBudgetMatchConditions.
import {
  ADMISSION_PER_CALL_COST_LIMIT,
  AdmissionActivation,
  type AdmissionInput,
  MATCH_CONDITIONS_COST_BUDGET,
  OUT_OF_BUDGET,
  compileAdmissionExpression,
} from "./admission-expressions.js";

/** Kubernetes' per-expression runtime cost limit for admission CEL. */
export const MATCH_CONDITION_COST_LIMIT = ADMISSION_PER_CALL_COST_LIMIT;

export type MatchConditionInput = Pick<AdmissionInput, "object" | "oldObject" | "request" | "authorizer">;

export interface CompiledMatchCondition {
  /** Why the expression does not compile, as Kubernetes' detail (`compilation failed: …`, `must evaluate to bool but got dyn`). */
  readonly error?: string;
  /** True or false; a string when evaluation failed. */
  evaluate(input: MatchConditionInput): boolean | string;
}

export function compileMatchCondition(expression: string): CompiledMatchCondition {
  const compiled = compileAdmissionExpression(expression, "bool", { params: false });
  return {
    ...(compiled.error ? { error: compiled.error } : {}),
    evaluate(input) {
      const result = new AdmissionActivation(input, [], MATCH_CONDITIONS_COST_BUDGET).evaluate(compiled);
      if (!result) return OUT_OF_BUDGET;
      return "error" in result ? result.error : result.value === true;
    },
  };
}
