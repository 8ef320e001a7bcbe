// `&&` and `||` as cel-go evaluates them when an operand fails: an operand that decides the result
// absorbs the other's error, and when neither decides, the left operand's error is the one reported.
import { describe, expect, it } from "vitest";
import { type RuleType, compileCrdRules } from "../src/index.js";

const type: RuleType = { kind: "object", fields: [{ name: "m", type: { kind: "map", value: { kind: "int" } } }] };

function evaluate(rule: string, self: unknown) {
  const [compiled] = compileCrdRules(type, [{ rule }]);
  expect(compiled?.error).toBeUndefined();
  return compiled!.evaluate(self, undefined, 1_000_000);
}

describe("errors in && and ||", () => {
  it("reports the left operand's error when both fail", () => {
    expect(evaluate("self.m['a'] == 1 && self.m['b'] == 1", { m: {} })).toMatchObject({ ok: false, message: "no such key: a" });
    expect(evaluate("self.m['a'] == 1 || self.m['b'] == 1", { m: {} })).toMatchObject({ ok: false, message: "no such key: a" });
  });

  it("reports the left operand's error on every evaluation of a compiled rule, not only the first", () => {
    const [compiled] = compileCrdRules(type, [{ rule: "self.m['a'] == 1 && self.m['b'] == 1" }]);
    for (let i = 0; i < 3; i++) expect(compiled!.evaluate({ m: {} }, undefined, 1_000_000)).toMatchObject({ message: "no such key: a" });
  });

  it("reports the failing operand's error when the other does not decide", () => {
    expect(evaluate("self.m['a'] == 1 || self.m['b'] == 1", { m: { a: 2 } })).toMatchObject({ ok: false, message: "no such key: b" });
    expect(evaluate("self.m['a'] == 1 && self.m['b'] == 1", { m: { b: 1 } })).toMatchObject({ ok: false, message: "no such key: a" });
  });

  it("absorbs an error when the other operand decides", () => {
    expect(evaluate("self.m['a'] == 1 || self.m['b'] == 1", { m: { b: 1 } })).toMatchObject({ ok: true, value: true });
    expect(evaluate("self.m['a'] == 1 && self.m['b'] == 1", { m: { b: 2 } })).toMatchObject({ ok: true, value: false });
  });
});
