// Values keep cel-go's ranges in CRD rules: an int is an int64, a duration Go's time.Duration
// (±292 years), a timestamp lies in years 0001–9999; leaving them is cel-go's error, not a value.
import { describe, expect, it } from "vitest";
import { type RuleType, compileCrdRules } from "../src/index.js";

const type: RuleType = {
  kind: "object",
  fields: [
    { name: "t", type: { kind: "timestamp" } },
    { name: "d", type: { kind: "duration" } },
    { name: "x", type: { kind: "double" } },
  ],
};

function compile(rule: string) {
  const [compiled] = compileCrdRules(type, [{ rule }]);
  return compiled!;
}

const evaluate = (rule: string, self: unknown) => compile(rule).evaluate(self, undefined, 1_000_000);

describe("value ranges", () => {
  it("refuses a timestamp beyond year 9999 or before year 1", () => {
    expect(evaluate("self.t + duration('1s') > self.t", { t: "9999-12-31T23:59:59Z" })).toMatchObject({
      ok: false,
      message: "timestamp overflow",
    });
    expect(evaluate("self.t - duration('1s') < self.t", { t: "0001-01-01T00:00:00Z" })).toMatchObject({
      ok: false,
      message: "timestamp overflow",
    });
    expect(evaluate("self.t + duration('1s') > self.t", { t: "2026-11-27T00:00:00Z" })).toMatchObject({ ok: true, value: true });
  });

  it("refuses a duration beyond Go's time.Duration", () => {
    // 2562047h is the longest whole number of hours a time.Duration holds.
    expect(evaluate("self.d + self.d > self.d", { d: "2562047h" })).toMatchObject({ ok: false, message: "integer overflow" });
    expect(evaluate("self.t - timestamp('0001-01-01T00:00:00Z') > self.d", { t: "9999-01-01T00:00:00Z", d: "1s" })).toMatchObject({
      ok: false,
      message: "integer overflow",
    });
    expect(compile("duration('2562048h') > self.d").error?.detail).toContain("invalid duration argument");
  });

  it("refuses an int conversion beyond int64", () => {
    expect(evaluate("int(self.x) > 0", { x: 1e19 })).toMatchObject({ ok: false, message: "integer overflow" });
    expect(evaluate("int(self.x) < 0", { x: -(2 ** 63) })).toMatchObject({ ok: false, message: "integer overflow" });
  });
});
