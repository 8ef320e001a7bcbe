// Timestamps to the nanosecond, as Go's time.Time in cel-go: the engine's JavaScript Date holds
// milliseconds, and timestamps.ts keeps the nanoseconds below them through parsing, arithmetic,
// comparison, equality and printing — in literals and in a schema's date-time fields alike.
import { describe, expect, it } from "vitest";
import { type RuleType, compileCelExpression, compileCrdRules } from "../src/index.js";

const value = (expression: string) => {
  const compiled = compileCelExpression(expression);
  if (!compiled.ok) throw new Error(compiled.message);
  const result = compiled.program.evaluate({});
  return result.ok ? result.value : result.message;
};

describe("timestamps keep their nanoseconds", () => {
  it("adds and subtracts durations and timestamps to the nanosecond", () => {
    expect(value("timestamp('2024-01-01T00:00:00.000000001Z') + duration('1ns') == timestamp('2024-01-01T00:00:00.000000002Z')")).toBe(
      true,
    );
    expect(value("timestamp('2024-01-01T00:00:00.000000001Z') > timestamp('2024-01-01T00:00:00Z')")).toBe(true);
    expect(value("timestamp('2024-01-01T00:00:00.000000001Z') == timestamp('2024-01-01T00:00:00Z')")).toBe(false);
    expect(value("timestamp('2024-01-01T00:00:01.5Z') - timestamp('2024-01-01T00:00:00.000000001Z') == duration('1499999999ns')")).toBe(
      true,
    );
    expect(value("timestamp('2024-01-01T00:00:00Z') - duration('1ns') < timestamp('2024-01-01T00:00:00Z')")).toBe(true);
    expect(value("[timestamp('2024-01-01T00:00:00.000000001Z')] == [timestamp('2024-01-01T00:00:00Z')]")).toBe(false);
  });

  it("prints up to nine fractional digits, without trailing zeros (RFC 3339 nano)", () => {
    expect(value("string(timestamp('2024-01-01T00:00:00.123456789Z'))")).toBe("2024-01-01T00:00:00.123456789Z");
    expect(value("string(timestamp('2024-01-01T00:00:00.120Z'))")).toBe("2024-01-01T00:00:00.12Z");
    expect(value("string(timestamp('2024-01-01T00:00:00.000000001Z') - duration('1ns'))")).toBe("2024-01-01T00:00:00Z");
  });

  it("goes out of range at the nanosecond after 9999-12-31T23:59:59.999999999Z", () => {
    expect(value("timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')")).toBe("timestamp overflow");
    expect(value("string(timestamp('9999-12-31T23:59:59.999999998Z') + duration('1ns'))")).toBe("9999-12-31T23:59:59.999999999Z");
  });

  it("reads a date-time field of a schema to the nanosecond", () => {
    const ts: RuleType = { kind: "timestamp" };
    const type: RuleType = {
      kind: "object",
      fields: [
        { name: "start", type: ts },
        { name: "end", type: ts },
      ],
    };
    const [rule] = compileCrdRules(type, [{ rule: "self.end - self.start == duration('1ns') && self.end > self.start" }]);
    const self = { start: "2024-05-01T10:00:00.999999999Z", end: "2024-05-01T10:00:01Z" };
    expect(rule!.evaluate(self, undefined, 1_000_000)).toMatchObject({ ok: true, value: true });
  });
});

describe("timestamps keep the offset they were written with", () => {
  it("prints a timestamp in its own offset, as Go's RFC 3339 does, through duration arithmetic too", () => {
    expect(value("string(timestamp('2011-08-18T19:03:37.01+01:00'))")).toBe("2011-08-18T19:03:37.01+01:00");
    expect(value("string(timestamp('2011-08-18T19:03:37-05:30') + duration('1h'))")).toBe("2011-08-18T20:03:37-05:30");
    expect(value("string(timestamp('2011-08-18T19:03:37+00:00'))")).toBe("2011-08-18T19:03:37Z");
  });

  it("compares and reads accessors in UTC whatever the offset", () => {
    expect(value("timestamp('2011-08-18T19:03:37+01:00') == timestamp('2011-08-18T18:03:37Z')")).toBe(true);
    expect(value("timestamp('2011-08-18T19:03:37+01:00').getHours()")).toBe(18n);
  });
});

describe("timestamp() takes what Go's RFC 3339 parser takes", () => {
  it("nine fractional digits with an offset (35 characters; the engine alone stops at 30)", () => {
    expect(value("string(timestamp('2011-08-18T19:03:37.000000001-05:30') + duration('1h'))")).toBe("2011-08-18T20:03:37.000000001-05:30");
  });
});
