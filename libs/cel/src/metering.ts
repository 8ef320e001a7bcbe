// Runtime cost metering for @marcbachmann/cel-js 8 environments. It relies on two properties of the
// engine: every AST node evaluates its children through `evaluator.run(child, ctx)`, and a node
// evaluates as `node.evaluate(evaluator, node, ctx)`. An environment's evaluator gets a counting `run`
// (runtime-cost.ts prices each node as cel-go would); nothing global in the engine is touched.
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

/** What a node being evaluated keeps of its children: their values and what they cost, by slot. */
export interface Frame {
  readonly slots: ReadonlyMap<AstNode, number>;
  readonly values: unknown[];
  readonly costs: number[];
  /** The evaluator and context its first child was evaluated with: where the others are, too. */
  evaluator?: Evaluator;
  ctx?: unknown;
}

/** The iterations of the comprehension being evaluated, and the size of its range. */
export interface Iterations {
  steps: number;
  range: number;
  /** The range's value, and the evaluator and context it was evaluated with, once it was. */
  items?: unknown;
  evaluator?: Evaluator;
  ctx?: unknown;
}

/** The running evaluation's account: cost so far, its limit, and where the evaluation is. */
export interface Meter {
  cost: number;
  readonly limit: number;
  node: AstNode | undefined;
  frame: Frame | undefined;
  iterations: Iterations | undefined;
}

let meter: Meter | undefined;

/** The meter of the evaluation running now, if any. */
export const activeMeter = (): Meter | undefined => meter;

/** The node the running evaluation is at (undefined outside an evaluation). */
export const currentNode = (): AstNode | undefined => meter?.node;

/** Runs `evaluate` with `m` as the active meter. */
export function withMeter<T>(m: Meter, evaluate: () => T): T {
  const outer = meter;
  meter = m;
  try {
    return evaluate();
  } finally {
    meter = outer;
  }
}

/**
 * What a spent meter throws: one instance, built once. The engine catches errors inside comprehensions
 * and goes on with the next element, so once the limit is passed every remaining node throws; an
 * error built each time (its stack captured) made that tail cost seconds.
 */
export const COST_LIMIT_EXCEEDED = new CostLimitExceeded();

export function charge(m: Meter, cost: number): void {
  m.cost += cost;
  if (m.cost > m.limit) throw COST_LIMIT_EXCEEDED;
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
