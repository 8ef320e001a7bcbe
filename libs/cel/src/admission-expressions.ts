// The CEL environment of admission expressions (k8s.io/apiserver/pkg/admission/plugin/cel): what
// ValidatingAdmissionPolicies (validations, messageExpression, auditAnnotations, matchConditions,
// variables) and webhooks' matchConditions evaluate. Variables `object`, `oldObject`, `request`,
// `namespaceObject` (untyped here: Kubernetes types the last two), `params` when the policy has a
// paramKind, `authorizer` (authorizer-library.ts) where Kubernetes declares it (not in messageExpression),
// and `variables`, whose members are evaluated when first read, once per evaluation, as Kubernetes'
// composition does.
// Costs: each expression is metered against celconfig.PerCallLimit, and one evaluation of a policy
// shares celconfig.RuntimeCELCostBudget (RuntimeCELCostBudgetMatchConditions for match conditions).
import type { Environment } from "@marcbachmann/cel-js";
import { AUTHORIZER_TYPE, type AuthorizerValue, registerAuthorizerLibrary } from "./authorizer-library.js";
import { type Parsed, baseEnvironment, celRuntimeMessage, compileExpression } from "./compile.js";
import { type AstNode, CostLimitExceeded, instrument } from "./metering.js";
import { costRun, metered } from "./runtime-cost.js";

/** celconfig.PerCallLimit. */
export const ADMISSION_PER_CALL_COST_LIMIT = 1_000_000;
/** celconfig.RuntimeCELCostBudget: what all expressions of one policy evaluation may use together. */
export const ADMISSION_RUNTIME_COST_BUDGET = 10_000_000;
/** celconfig.RuntimeCELCostBudgetMatchConditions. */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;

/** The message of a budget running out: the whole evaluation fails (activation.Evaluate). */
export const OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run";

/** What an expression must evaluate to (its ExpressionAccessor.ReturnTypes). */
export type ExpressionReturn = "bool" | "string" | "string-or-null" | "any";

/** Which optional variables an expression may use (Kubernetes' OptionalVariableDeclarations). */
export interface AdmissionDeclarations {
  params: boolean;
  /** Default true: every admission expression but a messageExpression. */
  authorizer?: boolean;
}

const environments = new Map<string, Environment>();

/**
 * One metered environment per combination of `params` and `authorizer`: the base environment CRD
 * rules also start from (compile.ts), with the admission variables.
 */
function environment(params: boolean, authorizer: boolean): Environment {
  const key = `${params}/${authorizer}`;
  let env = environments.get(key);
  if (!env) {
    env = baseEnvironment
      .clone()
      .registerVariable("object", "dyn")
      .registerVariable("oldObject", "dyn")
      .registerVariable("request", "dyn")
      .registerVariable("namespaceObject", "dyn")
      .registerVariable("variables", "dyn");
    if (params) env.registerVariable("params", "dyn");
    if (authorizer) registerAuthorizerLibrary(env).registerVariable("authorizer", AUTHORIZER_TYPE);
    instrument(env, costRun);
    environments.set(key, env);
  }
  return env;
}

/** cel-go's names of the engine's types, as Kubernetes' messages print them. */
function goTypeName(type: string): string {
  return type
    .replaceAll("<", "(")
    .replaceAll(">", ")")
    .replace(/^null$/, "null_type");
}

function returnTypeError(returns: ExpressionReturn, type: string): string | undefined {
  const got = goTypeName(type);
  switch (returns) {
    case "any":
      return undefined;
    case "string-or-null":
      return type === "string" || type === "null" ? undefined : `must evaluate to one of [string null_type] but got ${got}`;
    default:
      return type === returns ? undefined : `must evaluate to ${returns} but got ${got}`;
  }
}

/** One compiled expression; `error` is Kubernetes' compile-time detail when it does not compile. */
export interface AdmissionExpression {
  readonly expression: string;
  readonly error?: string;
  /** Internal: the program. */
  readonly program?: Parsed;
}

/**
 * plugincel.CompileCELExpression: parse and check in the environment (with `params` or not), and the
 * result type against what the expression must return. Errors read `compilation failed: ERROR: …` or
 * `must evaluate to bool but got dyn`.
 */
export function compileAdmissionExpression(
  expression: string,
  returns: ExpressionReturn,
  options: AdmissionDeclarations,
): AdmissionExpression {
  const env = environment(options.params, options.authorizer ?? true);
  // The same compilation as CRD rules: cel-go's literals (`[?x]`, `{?k: v}`, `br'…'`), has() on any
  // selection, literal validators, Kubernetes' semantics; objects here are untyped JSON.
  const compiled = compileExpression(env, expression, { structuralEquality: false });
  if ("issue" in compiled) return { expression, error: `compilation failed: ${compiled.issue}` };
  const wrongType = returnTypeError(returns, compiled.type);
  return wrongType ? { expression, error: wrongType } : { expression, program: compiled.parsed };
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** JSON as CEL values: integers are ints, objects are maps. */
export function toCel(value: unknown): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (isRecord(value)) return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value;
}

/** The inputs of one evaluation, as JSON. `params` is absent when the policy declares no paramKind. */
export interface AdmissionInput {
  object: unknown;
  oldObject: unknown;
  request: unknown;
  namespaceObject?: unknown;
  params?: unknown;
  /** `authorizer`: the request's user's (authorizer-library.ts `authorizerFor`). */
  authorizer?: AuthorizerValue;
}

/** The result of one expression: its value, or the error Kubernetes reports for it. */
export type ExpressionResult = { value: unknown } | { error: string };

/**
 * One evaluation (Kubernetes' activation): the inputs converted once, the variables evaluated when
 * first read, and the cost budget the expressions evaluated in it share.
 */
export class AdmissionActivation {
  private readonly ctx: Record<string, unknown>;
  private remaining: number;

  constructor(input: AdmissionInput, variables: readonly { name: string; compiled: AdmissionExpression }[], budget: number) {
    this.remaining = budget;
    this.ctx = {
      object: toCel(input.object ?? null),
      oldObject: toCel(input.oldObject ?? null),
      request: toCel(input.request),
      namespaceObject: toCel(input.namespaceObject ?? null),
    };
    if ("params" in input) this.ctx.params = toCel(input.params ?? null);
    if (input.authorizer) this.ctx.authorizer = input.authorizer;
    // A plain object whose members are getters: the engine reads members of plain objects as map
    // entries, so `variables.x` runs x's expression on first read (inside the reading expression's
    // meter, as Kubernetes adds a variable's cost to the expression that uses it) and keeps its result.
    const values: Record<string, unknown> = {};
    for (const { name, compiled } of variables) {
      let result: { value: unknown } | { error: Error } | undefined;
      Object.defineProperty(values, name, {
        enumerable: true,
        get: () => {
          result ??= this.evaluateVariable(name, compiled);
          if ("error" in result) throw result.error;
          return result.value;
        },
      });
    }
    this.ctx.variables = values;
  }

  private evaluateVariable(name: string, compiled: AdmissionExpression): { value: unknown } | { error: Error } {
    if (!compiled.program) return { error: new Error(`composited variable "${name}" fails to compile: ${compiled.error}`) };
    try {
      return { value: (compiled.program as unknown as (c: Record<string, unknown>) => unknown)(this.ctx) };
    } catch (e) {
      if (e instanceof CostLimitExceeded) throw e;
      return { error: new Error(`composited variable "${name}" fails to evaluate: ${(e as Error).message}`) };
    }
  }

  /**
   * Evaluates one expression. Returns undefined when the shared budget ran out: the caller stops, as
   * Kubernetes fails the whole evaluation with OUT_OF_BUDGET.
   */
  evaluate(compiled: AdmissionExpression): ExpressionResult | undefined {
    if (!compiled.program) return { error: `compilation error: ${compiled.error}` };
    const program = compiled.program as unknown as (c: Record<string, unknown>) => unknown;
    const limit = Math.min(ADMISSION_PER_CALL_COST_LIMIT, this.remaining);
    const { value, error, cost } = metered(limit, () => program(this.ctx), compiled.program.ast as unknown as AstNode);
    if (error instanceof CostLimitExceeded && limit < ADMISSION_PER_CALL_COST_LIMIT) return undefined;
    this.remaining -= cost;
    if (error !== undefined)
      return { error: `expression '${compiled.expression}' resulted in error: ${celRuntimeMessage(error).split("\n")[0]}` };
    return { value };
  }
}
