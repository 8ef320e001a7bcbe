// The CEL environment of admission webhooks' matchConditions
// (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions): `object`, `oldObject` and `request`
// (the AdmissionRequest), each untyped; a condition must evaluate to a bool. `authorizer` is not
// declared: orch has no CEL authorizer library yet, so a condition that uses it does not compile.
import { Environment } from "@marcbachmann/cel-js";
import { registerExtensionLibraries } from "./extension-libraries.js";
import { registerQuantityAndSemver } from "./libraries.js";
import { CostLimitExceeded, metered } from "./metering.js";

/** Kubernetes' per-expression runtime cost limit for admission CEL. */
export const MATCH_CONDITION_COST_LIMIT = 1_000_000;

const env = registerExtensionLibraries(registerQuantityAndSemver(new Environment({ enableOptionalTypes: true })))
  .registerVariable("object", "dyn")
  .registerVariable("oldObject", "dyn")
  .registerVariable("request", "dyn");

type Parsed = ReturnType<Environment["parse"]>;

export interface MatchConditionInput {
  object: unknown;
  oldObject: unknown;
  request: unknown;
}

export interface CompiledMatchCondition {
  /** Why the expression does not compile, as Kubernetes' `compilation failed: …` detail. */
  readonly error?: string;
  /** True or false; a string when evaluation failed. */
  evaluate(input: MatchConditionInput): boolean | string;
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** JSON as CEL values: integers are ints, objects are maps. */
function toCel(value: unknown): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (isRecord(value)) return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value;
}

export function compileMatchCondition(expression: string): CompiledMatchCondition {
  let parsed: Parsed;
  try {
    parsed = env.parse(expression);
    const checked = parsed.check();
    if (!checked.valid) throw checked.error ?? new Error("type check failed");
    if (checked.type !== "bool" && checked.type !== "dyn") {
      return { error: "cel expression must evaluate to a bool", evaluate: () => "cel expression must evaluate to a bool" };
    }
  } catch (e) {
    const detail = `compilation failed: ${(e as Error).message}`;
    return { error: detail, evaluate: () => detail };
  }
  return {
    evaluate(input) {
      const ctx = { object: toCel(input.object), oldObject: toCel(input.oldObject), request: toCel(input.request) };
      const { value, error } = metered(MATCH_CONDITION_COST_LIMIT, () =>
        (parsed as unknown as (c: Record<string, unknown>) => unknown)(ctx),
      );
      if (error !== undefined) return error instanceof CostLimitExceeded ? error.message : String((error as Error).message ?? error);
      return typeof value === "boolean" ? value : "cel expression must evaluate to a bool";
    },
  };
}
