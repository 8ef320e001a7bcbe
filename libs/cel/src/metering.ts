// Runtime cost metering for @marcbachmann/cel-js 8 environments. It relies on two properties of the
// engine: every AST node evaluates its children through `evaluator.run(child, ctx)`, and a node
// evaluates as `node.evaluate(evaluator, node, ctx)`. An environment's evaluator gets a counting `run`;
// nothing global in the engine is touched.
import type { Environment } from "@marcbachmann/cel-js";

/** The engine's AST node, as far as orch relies on it. */
export interface AstNode {
  readonly op: string;
  readonly args: unknown;
  readonly start: number;
  evaluate(evaluator: unknown, node: AstNode, ctx: unknown): unknown;
}

export interface Evaluator {
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
export interface Meter {
  cost: number;
  readonly limit: number;
  node: AstNode | undefined;
}

let meter: Meter | undefined;

/** The meter of the evaluation running now, if any. */
export const activeMeter = (): Meter | undefined => meter;

/** The node the running evaluation is at (undefined outside an evaluation). */
export const currentNode = (): AstNode | undefined => meter?.node;

export function charge(m: Meter, cost: number): void {
  m.cost += cost;
  if (m.cost > m.limit) throw new CostLimitExceeded();
}

const instrumented = new WeakSet<object>();

/**
 * Gives `env`'s evaluator the counting `run` (once per evaluator): found by evaluating a probe whose
 * root hands it over.
 */
export function instrument(env: Environment, run: (this: Evaluator, node: AstNode, ctx: unknown) => unknown): void {
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
  if (instrumented.has(captured)) return;
  instrumented.add(captured);
  captured.run = run;
}

/**
 * Runs `evaluate` under a fresh meter (its root, when given, counts as the first node). The cost is
 * checked again at the end: the engine swallows errors inside `||`, `&&` and comprehensions when
 * another operand decides the result, and an exceeded limit must still fail the evaluation.
 */
export function metered<T>(limit: number, evaluate: () => T, root?: AstNode): { value?: T; error?: unknown; cost: number } {
  const m: Meter = { cost: root ? 1 : 0, limit, node: root };
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
