// Numbers of different types (int, uint, double) compare as cel-go compares them, in comparisons,
// `in` and list indexes.
import { describe, expect, it } from "vitest";
import { compileCelExpression } from "../src/index.js";

function evaluate(expression: string, variables: Record<string, string> = {}, activation: Record<string, unknown> = {}) {
  const compiled = compileCelExpression(expression, variables);
  if (!compiled.ok) throw new Error(compiled.message);
  return compiled.program.evaluate(activation);
}

describe("numbers across types", () => {
  it("compares an int with a double as cel-go does near 2^63", () => {
    // 2^63 - 1 is 2^63 as a double: cel-go finds them equal.
    expect(evaluate("dyn(9223372036854775807) < 9223372036854775808.0")).toMatchObject({ ok: true, value: false });
    expect(evaluate("dyn(9223372036854775807) >= 9223372036854775808.0")).toMatchObject({ ok: true, value: true });
    expect(evaluate("dyn(1) < 1.5 && dyn(2u) > 1.5 && dyn(-1) < 0u")).toMatchObject({ ok: true, value: true });
  });

  it("finds a number in a list of another numeric type", () => {
    expect(evaluate("x in [1, 2, 3]", { x: "dyn" }, { x: 3 })).toMatchObject({ ok: true, value: true });
    expect(evaluate("dyn(3u) in [1, 2, 3] && !(dyn(4u) in [1, 2, 3])")).toMatchObject({ ok: true, value: true });
  });

  it("indexes a list by a uint or an integral double", () => {
    expect(evaluate("[7, 8, 9][dyn(1u)] == 8 && [7, 8, 9][dyn(2.0)] == 9")).toMatchObject({ ok: true, value: true });
    expect(evaluate("[7, 8, 9][dyn(1.5)]")).toMatchObject({ ok: false, message: "unsupported index value" });
  });

  it("a map literal's int keys stay ints", () => {
    expect(evaluate("{6: 'six', 7: 'seven'}.exists_one(k, k % 5 == 2) && {6: 'six'}[6] == 'six'")).toMatchObject({ ok: true, value: true });
  });
});
