// cel-go's optional library in CRD rules beyond `?` syntax: optMap()/optFlatMap(), selection on an
// absent or open optional, has() through an optional, type(optional).
import { describe, expect, it } from "vitest";
import { type RuleType, compileCrdRules } from "../src/index.js";

const type: RuleType = {
  kind: "object",
  fields: [
    { name: "m", type: { kind: "map", value: { kind: "string" } } },
    { name: "spec", type: { kind: "object", fields: [{ name: "name", type: { kind: "string" } }] } },
  ],
};

function evaluate(rule: string, self: unknown) {
  const [compiled] = compileCrdRules(type, [{ rule }]);
  expect(compiled?.error).toBeUndefined();
  return compiled!.evaluate(self, undefined, 1_000_000);
}

describe("the optional library", () => {
  it("optMap() maps a present value and keeps none", () => {
    const rule = "self.m[?'k'].optMap(v, v.size()).orValue(0) == 3";
    expect(evaluate(rule, { m: { k: "abc" } })).toMatchObject({ ok: true, value: true });
    expect(evaluate("!self.m[?'k'].optMap(v, v.size()).hasValue()", { m: {} })).toMatchObject({ ok: true, value: true });
  });

  it("optFlatMap() chains optionals", () => {
    const rule = "self.?spec.optFlatMap(s, s.?name).orValue('none')";
    expect(evaluate(`${rule} == 'web'`, { spec: { name: "web" } })).toMatchObject({ ok: true, value: true });
    expect(evaluate(`${rule} == 'none'`, { spec: {} })).toMatchObject({ ok: true, value: true });
  });

  it("selects on optional.none(), tests presence through an optional, and names the optional type", () => {
    expect(evaluate("!optional.none().?name.hasValue()", {})).toMatchObject({ ok: true, value: true });
    // An empty list's element type is open too: compared as dyn, as in cel-go.
    expect(evaluate("[].all(e, e > 0)", {})).toMatchObject({ ok: true, value: true });
    expect(evaluate("has(optional.of(self.m).k) && !has(optional.of(self.m).x)", { m: { k: "v" } })).toMatchObject({
      ok: true,
      value: true,
    });
    expect(evaluate("type(self.m[?'k']) == optional_type", { m: {} })).toMatchObject({ ok: true, value: true });
  });
});
