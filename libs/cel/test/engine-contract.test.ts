// What orch relies on inside @marcbachmann/cel-js (pinned to 8.0.0 in package.json): metering.ts
// instruments an environment's evaluator through the AST, which is not the engine's public API. If an
// upgrade changes any of this, these tests say which part, before cost limits silently stop working.
import { Environment } from "@marcbachmann/cel-js";
import { describe, expect, it } from "vitest";
import { type AstNode, CostLimitExceeded, type Evaluator, activeMeter, charge, instrument } from "../src/metering.js";
import { metered } from "../src/runtime-cost.js";

describe("the CEL engine's internals orch depends on", () => {
  it("a parsed expression is callable and carries its AST: nodes with op, args, start and evaluate", () => {
    const env = new Environment();
    const parsed = env.parse("1 + 2 == 3");
    parsed.check();
    expect(typeof parsed).toBe("function");
    const root = parsed.ast as unknown as AstNode;
    expect(typeof root.op).toBe("string");
    expect(typeof root.start).toBe("number");
    expect(typeof root.evaluate).toBe("function");
    expect(Array.isArray(root.args)).toBe(true);
    expect((parsed as unknown as (c: object) => unknown)({})).toBe(true);
  });

  it("every node is evaluated through the evaluator's run(), which instrument() replaces", () => {
    const env = new Environment().registerVariable("xs", "list<int>");
    const seen: string[] = [];
    instrument(env, function (this: Evaluator, node: AstNode, ctx: unknown) {
      seen.push(node.op);
      return node.evaluate(this, node, ctx);
    });
    const parsed = env.parse("xs.all(x, x > 0) && size(xs) == 3");
    parsed.check();
    expect((parsed as unknown as (c: object) => unknown)({ xs: [1n, 2n, 3n] })).toBe(true);
    // Children, comprehension steps included, go through run(): more nodes than the root alone.
    expect(seen.length).toBeGreaterThan(5);
  });

  it("a metered evaluation counts what the engine runs, and fails over its limit", () => {
    const env = new Environment().registerVariable("xs", "list<int>");
    instrument(env, function (this: Evaluator, node: AstNode, ctx: unknown) {
      const meter = activeMeter();
      if (meter) charge(meter, 1);
      return node.evaluate(this, node, ctx);
    });
    const parsed = env.parse("xs.all(x, x > 0)");
    parsed.check();
    const run = () => (parsed as unknown as (c: object) => unknown)({ xs: Array.from({ length: 100 }, (_, i) => BigInt(i + 1)) });
    const within = metered(1_000_000, run);
    expect(within.value).toBe(true);
    expect(within.cost).toBeGreaterThan(100);
    expect(metered(50, run).error).toBeInstanceOf(CostLimitExceeded);
  });
});
