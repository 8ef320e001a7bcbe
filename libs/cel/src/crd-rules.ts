// The CEL environment of CustomResourceDefinition validation rules (`x-*-validations`), as
// apiextensions-apiserver pkg/apiserver/schema/cel (compilation.go) builds it: `self` typed by the
// schema node the rule sits on, `oldSelf` the same type (or optional<type> with optionalOldSelf), the
// Kubernetes libraries orch has (quantity, semver, lists, regex), and a metered evaluator with
// Kubernetes' per-call cost limit. This module knows types, not schemas: @orch/schema derives a
// RuleType from a structural schema and walks the object.
import { type Environment, Optional } from "@marcbachmann/cel-js";
import { type CompileOptions, type Parsed, baseEnvironment as base, celRuntimeMessage, compileExpression } from "./compile.js";
import { estimateCost } from "./cost-estimate.js";
import { type AstNode, CostLimitExceeded, instrument } from "./metering.js";
import { compileRegexp } from "./re2.js";
import { costRun, metered } from "./runtime-cost.js";
import { asWritten } from "./timestamps.js";
import { INVALID_NULL, InvalidIntOrString, RuleObject, celEquals, withListKind, withUnknownFields } from "./values.js";

/** celconfig.PerCallLimit: the runtime cost one rule evaluation may use. */
export const CRD_RULE_PER_CALL_COST_LIMIT = 1_000_000;
/** celconfig.RuntimeCELCostBudget: the runtime cost all rules of one object may use together. */
export const CRD_RULES_RUNTIME_COST_BUDGET = 10_000_000;
/** validation.go StaticEstimatedCostLimit: the estimated cost one rule may have, times its cardinality. */
export const CRD_RULE_ESTIMATED_COST_LIMIT = 10_000_000;
/** validation.go StaticEstimatedCRDCostLimit: the estimated cost all rules of a CRD version may have. */
export const CRD_ESTIMATED_COST_LIMIT = 100_000_000;
/** celconfig.MaxRequestSizeBytes: the largest request, which bounds unbounded lists, maps and strings. */
export const CEL_MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/**
 * How many times a rule can run in one object when a list or map above it is unbounded
 * (compilation.go maxCardinality): as many values of its node's smallest size as fit in a request.
 */
export const celMaxCardinality = (minSerializedSize: number): number => Math.floor(CEL_MAX_REQUEST_SIZE_BYTES / (minSerializedSize + 1));

/** validation.go getCostErrorMessage, word for word (Go's %f and %.1f). */
export function celCostErrorMessage(costName: string, cost: number, limit: number): string {
  const exceed = cost / limit;
  const f = exceed > 100 ? "more than 100x" : exceed < 1.5 ? `${exceed.toFixed(6)}x` : `${exceed.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

export { type CelError, type CompileOptions, celIssue } from "./compile.js";
export { CEL_RESERVED_WORDS, type RuleField, type RuleType, type RuleTypeSize, escapeFieldName, isCelIdentifier } from "./rule-types.js";
import { type RuleType, escapeFieldName } from "./rule-types.js";

// ---------------------------------------------------------------------------------------------
// Rule types and values
// ---------------------------------------------------------------------------------------------

type Ctor = new () => RuleObject;

/** The engine's names of the well-known types. */
const celScalarName = (kind: string): string =>
  kind === "timestamp" ? "google.protobuf.Timestamp" : kind === "duration" ? "google.protobuf.Duration" : kind;

let typeCounter = 0;

/** The CEL declarations of one rule type tree: a class per object type, and value conversion. */
class TypeSet {
  private readonly names = new Map<RuleType, string>();
  private readonly classes = new Map<RuleType, Ctor>();
  private readonly order: RuleType[] = [];
  readonly rootName: string;

  constructor(readonly root: RuleType) {
    // Kubernetes names the type of self afresh for each CRD, so that rules cannot depend on it.
    this.rootName = this.celType(root, `selfType${++typeCounter}`);
  }

  /** The CEL spelling of a type, registering object types (children before parents). */
  private celType(t: RuleType, name: string): string {
    switch (t.kind) {
      case "object": {
        const known = this.names.get(t);
        if (known) return known;
        t.fields.forEach((f, i) => this.celType(f.type, `${name}_${i}`));
        this.names.set(t, name);
        this.classes.set(t, class extends RuleObject {});
        this.order.push(t);
        return name;
      }
      case "map":
        return `map<string, ${this.celType(t.value, `${name}_v`)}>`;
      case "list":
        return `list<${this.celType(t.item, `${name}_i`)}>`;
      default:
        return celScalarName(t.kind);
    }
  }

  declare(env: Environment): void {
    for (const t of this.order) {
      if (t.kind !== "object") continue;
      const fields: Record<string, string> = {};
      for (const f of t.fields) {
        const celName = escapeFieldName(f.name);
        if (celName) fields[celName] = this.typeName(f.type);
      }
      const name = this.names.get(t)!;
      env.registerType(name, { ctor: this.classes.get(t)!, fields });
      // cel-go compares objects of a schema type field by field (self == oldSelf).
      env.registerOperator(`${name} == ${name}`, celEquals);
      // cel-go lets null compare with an object type (`self.spec == null`); an object is never null.
      env.registerOperator(`${name} == null`, (a: unknown) => a === null);
    }
  }

  private typeName(t: RuleType): string {
    if (t.kind === "object") return this.names.get(t)!;
    if (t.kind === "map") return `map<string, ${this.typeName(t.value)}>`;
    if (t.kind === "list") return `list<${this.typeName(t.item)}>`;
    return celScalarName(t.kind);
  }

  /** A decoded JSON value as CEL sees it under type `t` (UnstructuredToVal). */
  toCel(value: unknown, t: RuleType): unknown {
    if (value === null || value === undefined) return null;
    switch (t.kind) {
      case "object": {
        if (!isRecord(value)) return untypedToCel(value);
        const out = new (this.classes.get(t)!)();
        const known = new Set<string>();
        for (const f of t.fields) {
          known.add(f.name);
          const celName = escapeFieldName(f.name);
          if (celName && Object.hasOwn(value, f.name) && value[f.name] !== null) out[celName] = this.toCel(value[f.name], f.type);
        }
        if (!t.preservesUnknownFields) return out;
        return withUnknownFields(out, Object.fromEntries(Object.entries(value).filter(([k]) => !known.has(k))));
      }
      case "map":
        return isRecord(value) ? new Map(Object.entries(value).map(([k, v]) => [k, this.itemToCel(v, t.value)])) : untypedToCel(value);
      case "list":
        return Array.isArray(value)
          ? withListKind(
              value.map((v) => this.itemToCel(v, t.item)),
              t.listKind,
            )
          : untypedToCel(value);
      case "int":
        return typeof value === "number" && Number.isInteger(value) ? BigInt(value) : untypedToCel(value);
      case "double":
        return typeof value === "number" ? value : untypedToCel(value);
      case "bytes":
        return typeof value === "string" ? new Uint8Array(Buffer.from(value, "base64")) : untypedToCel(value);
      case "timestamp":
        return typeof value === "string" ? asWritten(new Date(value), value) : untypedToCel(value);
      case "duration":
        return typeof value === "string" ? parseDuration(value) : untypedToCel(value);
      case "dyn":
        if (t.intOrString && typeof value !== "string" && !(typeof value === "number" && Number.isInteger(value))) {
          return new InvalidIntOrString();
        }
        return untypedToCel(value);
      default:
        return untypedToCel(value);
    }
  }

  /** An item of a list or map: null reads as null where the item schema is nullable. */
  private itemToCel(value: unknown, t: RuleType): unknown {
    return value === null && !t.nullable ? INVALID_NULL : this.toCel(value, t);
  }
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** A value without a declared type: integers are CEL ints, objects are maps. */
function untypedToCel(value: unknown): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(untypedToCel);
  if (isRecord(value)) return new Map(Object.entries(value).map(([k, v]) => [k, untypedToCel(v)]));
  return value;
}

/** A duration-formatted string as a CEL duration (a string that is not one stays a string). */
function parseDuration(text: string): unknown {
  try {
    return base.evaluate(`duration(${JSON.stringify(text)})`);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

/** One x-*-validations entry, as far as compilation and evaluation need it. */
export interface CrdRule {
  rule: string;
  message?: string | undefined;
  messageExpression?: string | undefined;
  optionalOldSelf?: boolean | undefined;
}

export type RuleEvaluation =
  | { ok: true; value: unknown; cost: number }
  /** `overload`, `cost` and `runtime` are the three ways Kubernetes words a failed evaluation. */
  | { ok: false; reason: "overload" | "cost" | "runtime"; message: string; cost: number };

export interface CompiledCrdRule {
  /** `Required` when the rule is empty; `Invalid` for parse, type and result-type errors. */
  readonly error?: { type: "Required" | "Invalid"; detail: string };
  readonly messageExpressionError?: string;
  /** The estimated worst-case cost of one evaluation (cel-go's EstimateCost max); 0 when it did not compile. */
  readonly maxCost: number;
  /** The same for the messageExpression, when there is one that compiled. */
  readonly messageExpressionMaxCost?: number;
  /** The rule refers to `oldSelf`: a transition rule. */
  readonly usesOldSelf: boolean;
  readonly hasMessageExpression: boolean;
  /** Evaluates the rule; `oldSelf` undefined means there is no old value. */
  evaluate(self: unknown, oldSelf: unknown, costLimit: number): RuleEvaluation;
  evaluateMessage(self: unknown, oldSelf: unknown, costLimit: number): RuleEvaluation;
}

/** The error of the first constant pattern of a find()/findAll() call that RE2 refuses. */
function constantPatternError(node: unknown): string | undefined {
  if (typeof node !== "object" || node === null) return undefined;
  const n = node as { op?: unknown; args?: unknown };
  if (n.op === "rcall" && Array.isArray(n.args) && (n.args[0] === "find" || n.args[0] === "findAll")) {
    const pattern = (n.args[2] as { op?: string; args?: unknown }[] | undefined)?.[0];
    if (pattern?.op === "value" && typeof pattern.args === "string") {
      const compiled = compileRegexp(pattern.args);
      if (!compiled.ok) return compiled.message;
    }
  }
  const children = Array.isArray(n.args) ? n.args.flat() : [n.args];
  for (const c of children) {
    const found = constantPatternError(c);
    if (found) return found;
  }
  return undefined;
}

function refersTo(node: unknown, name: string): boolean {
  if (typeof node !== "object" || node === null) return false;
  const n = node as { op?: unknown; args?: unknown };
  if (n.op === "id" && n.args === name) return true;
  const children = Array.isArray(n.args) ? n.args.flat() : [n.args];
  return children.some((c) => refersTo(c, name));
}

/** Rule environments of one type tree: `oldSelf` plain or optional, created when first needed. */
class RuleEnvironments {
  private readonly types: TypeSet;
  private readonly envs = new Map<boolean, Environment>();

  constructor(type: RuleType) {
    this.types = new TypeSet(type);
  }

  env(optionalOldSelf: boolean): Environment {
    let env = this.envs.get(optionalOldSelf);
    if (!env) {
      env = base.clone();
      this.types.declare(env);
      const selfType = this.types.rootName;
      env.registerVariable("self", selfType).registerVariable("oldSelf", optionalOldSelf ? `optional<${selfType}>` : selfType);
      instrument(env, costRun);
      this.envs.set(optionalOldSelf, env);
    }
    return env;
  }

  activation(self: unknown, oldSelf: unknown, optionalOldSelf: boolean): Record<string, unknown> {
    const ctx: Record<string, unknown> = { self: this.types.toCel(self, this.types.root) };
    const old = oldSelf === undefined ? undefined : this.types.toCel(oldSelf, this.types.root);
    if (optionalOldSelf) ctx.oldSelf = old === undefined ? Optional.none() : Optional.of(old);
    else if (old !== undefined) ctx.oldSelf = old;
    return ctx;
  }
}

function run(parsed: Parsed, ctx: Record<string, unknown>, costLimit: number): RuleEvaluation {
  const program = parsed as unknown as (c: Record<string, unknown>) => unknown;
  const { value, error, cost } = metered(costLimit, () => program(ctx), parsed.ast as unknown as AstNode);
  if (error === undefined) return { ok: true, value, cost };
  const message = celRuntimeMessage(error);
  if (error instanceof CostLimitExceeded) return { ok: false, reason: "cost", message, cost };
  return { ok: false, reason: message.startsWith("no such overload") ? "overload" : "runtime", message, cost };
}

/** Compiles the rules of one schema node against its type (compilation.go Compile). */
export function compileCrdRules(type: RuleType, rules: readonly CrdRule[]): CompiledCrdRule[] {
  if (rules.length === 0) return [];
  const envs = new RuleEnvironments(type);
  return rules.map((rule): CompiledCrdRule => {
    const optional = rule.optionalOldSelf === true;
    const env = envs.env(optional);
    const failed = (error: CompiledCrdRule["error"], usesOldSelf = false): CompiledCrdRule => ({
      ...(error ? { error } : {}),
      maxCost: 0,
      usesOldSelf,
      hasMessageExpression: false,
      evaluate: () => ({ ok: true, value: true, cost: 0 }),
      evaluateMessage: () => ({ ok: true, value: "", cost: 0 }),
    });
    if (rule.rule.trim() === "") return failed({ type: "Required", detail: "rule is not specified" });
    const compiled = compileExpression(env, rule.rule);
    if ("issue" in compiled) return failed({ type: "Invalid", detail: `compilation failed: ${compiled.issue}` });
    if (compiled.type !== "bool") return failed({ type: "Invalid", detail: "cel expression must evaluate to a bool" });
    // cel-go compiles a constant find()/findAll() pattern when it builds the program (OptimizeRegex).
    const badPattern = constantPatternError(compiled.parsed.ast);
    if (badPattern) return failed({ type: "Invalid", detail: `program instantiation failed: ${badPattern}` });
    const usesOldSelf = refersTo(compiled.parsed.ast, "oldSelf");
    let messageExpressionError: string | undefined;
    let message: Parsed | undefined;
    if (rule.messageExpression !== undefined && rule.messageExpression !== "") {
      const m = compileExpression(env, rule.messageExpression);
      if ("issue" in m) messageExpressionError = `messageExpression compilation failed: ${m.issue}`;
      else if (m.type !== "string") messageExpressionError = "must evaluate to a string";
      else message = m.parsed;
    }
    return {
      maxCost: estimateCost(compiled.parsed.ast, type).max,
      ...(message ? { messageExpressionMaxCost: estimateCost(message.ast, type).max } : {}),
      usesOldSelf,
      hasMessageExpression: message !== undefined,
      ...(messageExpressionError ? { messageExpressionError } : {}),
      evaluate: (self, oldSelf, costLimit) => run(compiled.parsed, envs.activation(self, oldSelf, optional), costLimit),
      evaluateMessage: (self, oldSelf, costLimit) =>
        message ? run(message, envs.activation(self, oldSelf, optional), costLimit) : { ok: true, value: "", cost: 0 },
    };
  });
}

/** An expression compiled in the rule environment with declared variables (see compileCelExpression). */
export interface CelProgram {
  /** The checked result type, in the engine's spelling (`bool`, `list<int>`, `dyn`). */
  readonly type: string;
  evaluate(activation: Readonly<Record<string, unknown>>, costLimit?: number): RuleEvaluation;
}

/**
 * Compiles `expression` in the environment of CRD rules (the same libraries, Kubernetes' semantics and
 * literal checks, metering) with the given variables instead of `self`: `variables` maps a name to its
 * type in the engine's spelling (`int`, `list<string>`, `map<string, dyn>`). It is how the cel-spec
 * conformance suite measures the environment rule authors get; values are the engine's (BigInt ints).
 * `options.constantFolding: false` prices the program as cel-go does without cel.OptOptimize (how
 * Kubernetes' and cel-go's own cost tables are computed); Kubernetes' programs fold constants.
 */
export function compileCelExpression(
  expression: string,
  variables: Readonly<Record<string, string>> = {},
  options: CompileOptions = {},
): { ok: true; program: CelProgram } | { ok: false; message: string } {
  const env = base.clone();
  for (const [name, type] of Object.entries(variables)) env.registerVariable(name, type);
  instrument(env, costRun);
  const compiled = compileExpression(env, expression, options);
  if ("issue" in compiled) return { ok: false, message: `compilation failed: ${compiled.issue}` };
  return {
    ok: true,
    program: {
      type: compiled.type,
      evaluate: (activation, costLimit = CRD_RULE_PER_CALL_COST_LIMIT) => run(compiled.parsed, { ...activation }, costLimit),
    },
  };
}
