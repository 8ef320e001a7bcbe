// The CEL environment of DRA device selectors (k8s.io/dynamic-resource-allocation/cel): one typed
// variable `device` (kubernetes.DRADevice), Kubernetes' quantity and semver libraries, cel.bind()
// and optional values from the engine, and a metered evaluator that enforces a cost bound.
//
// The metering relies on two properties of @marcbachmann/cel-js 8: every AST node evaluates its
// children through `evaluator.run(child, ctx)`, and a node evaluates as `node.evaluate(evaluator,
// node, ctx)`. The environment is private to this module, so its evaluator's `run` is replaced by a
// counting one; nothing global in the engine is touched.
import { Environment } from "@marcbachmann/cel-js";
import { Quantity } from "./quantity.js";
import { regexpProblem } from "./regexp-guard.js";
import { registerQuantityAndSemver } from "./libraries.js";

/** The value of `device`: the input of a selector, as Kubernetes declares it. */
export class DRADevice {
  constructor(
    readonly driver: string,
    readonly attributes: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
    readonly capacity: ReadonlyMap<string, ReadonlyMap<string, Quantity>>,
    readonly allowMultipleAllocations: boolean,
  ) {}
}

/** The engine's AST node, as far as this module relies on it. */
export interface AstNode {
  readonly op: string;
  readonly args: unknown;
  readonly start: number;
  evaluate(evaluator: unknown, node: AstNode, ctx: unknown): unknown;
}

interface Evaluator {
  run(node: AstNode, ctx: unknown): unknown;
}

/** Raised when an evaluation exceeds its cost limit. */
export class CostLimitExceeded extends Error {
  constructor() {
    // cel-go's interpreter.CostLimitExceeded text, as Kubernetes reports it.
    super("operation cancelled: actual cost limit exceeded");
  }
}

/** The running evaluation's account: cost so far, its limit, and the node being evaluated. */
interface Meter {
  cost: number;
  readonly limit: number;
  node: AstNode | undefined;
}

let meter: Meter | undefined;

/** Ops whose result the engine builds afresh: they also pay for its size (cel-go charges ~0.1 per element). */
const SIZED_OPS = new Set(["+", "call", "rcall"]);

function sizeOf(v: unknown): number {
  if (typeof v === "string" || Array.isArray(v) || v instanceof Uint8Array) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  return 0;
}

function charge(m: Meter, cost: number): void {
  m.cost += cost;
  if (m.cost > m.limit) throw new CostLimitExceeded();
}

/** Whether `node` is the pattern argument of a `matches()` call `parent`. */
function isMatchesPattern(parent: AstNode, node: AstNode): boolean {
  if (parent.op === "rcall") {
    const [name, , args] = parent.args as [string, AstNode, AstNode[]];
    return name === "matches" && args[0] === node;
  }
  if (parent.op === "call") {
    const [name, args] = parent.args as [string, AstNode[]];
    return name === "matches" && args[1] === node;
  }
  return false;
}

const env = registerQuantityAndSemver(new Environment({ enableOptionalTypes: true }))
  .registerType({
    name: "kubernetes.DRADevice",
    ctor: DRADevice,
    fields: {
      driver: "string",
      attributes: "map<string, map<string, dyn>>",
      capacity: "map<string, map<string, kubernetes.Quantity>>",
      allowMultipleAllocations: "bool",
    },
  })
  .registerVariable("device", "kubernetes.DRADevice");

/** Finds the environment's evaluator by evaluating a probe whose root hands it over. */
function captureEvaluator(): Evaluator {
  const probe = env.parse("true");
  probe.check();
  let captured: Evaluator | undefined;
  const root = probe.ast as unknown as { evaluate: AstNode["evaluate"] };
  root.evaluate = (evaluator) => {
    captured = evaluator as Evaluator;
    return true;
  };
  probe({});
  if (!captured) throw new Error("@orch/cel: could not reach the CEL evaluator");
  return captured;
}

const evaluator = captureEvaluator();
evaluator.run = function meteredRun(this: Evaluator, node: AstNode, ctx: unknown): unknown {
  const m = meter;
  if (!m) return node.evaluate(this, node, ctx);
  const parent = m.node;
  charge(m, 1);
  m.node = node;
  let result: unknown;
  try {
    result = node.evaluate(this, node, ctx);
  } finally {
    m.node = parent;
  }
  if (SIZED_OPS.has(node.op)) charge(m, Math.ceil(sizeOf(result) / 10));
  if (parent && typeof result === "string" && isMatchesPattern(parent, node)) {
    const problem = regexpProblem(result);
    if (problem) throw new Error(problem);
  }
  return result;
};

export { env as draEnvironment };

/** The node the running evaluation is at (undefined outside an evaluation). */
export const currentNode = (): AstNode | undefined => meter?.node;

/**
 * Runs `evaluate` under a fresh meter. The cost is checked again at the end: the engine swallows
 * errors inside `||`, `&&` and comprehensions when another operand decides the result, and an
 * exceeded limit must still fail the evaluation.
 */
export function metered<T>(root: AstNode, limit: number, evaluate: () => T): { value?: T; error?: unknown; cost: number } {
  const m: Meter = { cost: 1, limit, node: root };
  const outer = meter;
  meter = m;
  try {
    const value = evaluate();
    return m.cost > limit ? { error: new CostLimitExceeded(), cost: m.cost } : { value, cost: m.cost };
  } catch (error) {
    return { error: m.cost > limit ? new CostLimitExceeded() : error, cost: m.cost };
  } finally {
    meter = outer;
  }
}
