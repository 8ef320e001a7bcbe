// The static cost estimate of x-kubernetes-validations rules: Kubernetes' own table
// (apiextensions-apiserver v0.32 pkg/apiserver/schema/cel/compilation_test.go TestCostEstimation),
// each rule on the schema its generator builds, estimated without limits ("calc") and with the
// maxItems/maxProperties/maxLength set ("set"). A 0 expectation is not checked, as there.
import { type JSONSchemaProps, crdSchemaFor } from "@orch/api";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { rulesOf } from "../src/cel.js";
import { compileNode } from "../src/structural.js";

type Gen = (max: number | undefined) => Record<string, unknown>;
const rules = (r: string) => ({ "x-kubernetes-validations": [{ rule: r }] });
const scalar = (t: string): Record<string, unknown> => {
  if (t === "int-or-string") return { "x-kubernetes-int-or-string": true };
  if (t === "duration" || t === "date" || t === "date-time") return { type: "string", format: t };
  return { type: t };
};
const maxItems = (m: number | undefined) => (m === undefined ? {} : { maxItems: m });
const maxProps = (m: number | undefined) => (m === undefined ? {} : { maxProperties: m });
const maxLen = (m: number | undefined) => (m === undefined ? {} : { maxLength: m });
const requiredObject = () => ({
  type: "object",
  required: ["required"],
  properties: { required: { type: "string" }, optional: { type: "string" } },
});

const genArray =
  (t: string, r: string): Gen =>
  (m) => ({ type: "array", items: scalar(t), ...maxItems(m), ...rules(r) });
const genArrayOfArrays =
  (t: string, r: string): Gen =>
  (m) => ({ type: "array", items: { type: "array", items: { type: t } }, ...maxItems(m), ...rules(r) });
const genObjectArray =
  (r: string): Gen =>
  (m) => ({ type: "array", items: requiredObject(), ...maxItems(m), ...rules(r) });
const genMapArray =
  (t: string, r: string): Gen =>
  (m) => ({
    type: "array",
    items: { type: "object", additionalProperties: { type: t } },
    ...maxItems(m),
    ...rules(r),
  });
const genMap =
  (t: string, r: string): Gen =>
  (m) => ({ type: "object", additionalProperties: scalar(t), ...maxProps(m), ...rules(r) });
const genMapOf =
  (item: Record<string, unknown>, r: string): Gen =>
  (m) => ({ type: "object", additionalProperties: item, ...maxProps(m), ...rules(r) });
const genString =
  (r: string): Gen =>
  (m) => ({ type: "string", ...maxLen(m), ...rules(r) });
const genEnum =
  (r: string, ...values: string[]): Gen =>
  (m) => ({ type: "string", enum: values, ...maxLen(m), ...rules(r) });
const genBytes =
  (r: string): Gen =>
  (m) => ({ type: "string", format: "byte", ...maxLen(m), ...rules(r) });
const genNestedSpec =
  (r: string): Gen =>
  (m) => ({ type: "object", additionalProperties: { type: "string", ...maxLen(m) }, ...maxProps(m), ...rules(r) });
const genAllMaxNested =
  (r: string): Gen =>
  (m) => ({
    type: "array",
    items: { type: "object", additionalProperties: { ...requiredObject(), ...maxProps(m) }, ...maxProps(m) },
    ...maxItems(m),
    ...rules(r),
  });
const genOneMaxNested =
  (r: string): Gen =>
  (m) => ({
    type: "array",
    items: { type: "object", additionalProperties: requiredObject(), ...maxProps(m) },
    ...rules(r),
  });
const stringList =
  (r: string): Gen =>
  (m) => ({ type: "array", items: { type: "string", ...maxLen(m) }, ...maxItems(m), ...rules(r) });

const cases: [name: string, gen: Gen, calc: number | "exceeds", max: number, set: number][] = [
  ["number array with all", genArray("number", "self.all(x, true)"), 4718591, 10, 32],
  ["string array with all", genArray("string", "self.all(x, true)"), 3145727, 20, 62],
  ["boolean array with all", genArray("boolean", "self.all(x, true)"), 1887437, 5, 17],
  ["array of number arrays with all", genArrayOfArrays("number", "self.all(x, true)"), 3145727, 100, 302],
  ["array of objects with all", genObjectArray("self.all(x, true)"), 555128, 50, 152],
  ["map of numbers with all", genMap("number", "self.all(x, true)"), 1348169, 10, 32],
  ["map of strings with all", genMap("string", "self.all(x, true)"), 1179647, 3, 11],
  ["map of booleans with all", genMap("boolean", "self.all(x, true)"), 943718, 100, 302],
  ["string with contains", genString("self.contains('test')"), 314574, 10, 5],
  ["string with startsWith", genString("self.startsWith('test')"), 2, 15, 2],
  ["string with endsWith", genString("self.endsWith('test')"), 2, 30, 2],
  ["concat string", genString(`size(self + "hello") > size("hello")`), 314578, 4, 7],
  ["index of array with numbers", genArray("number", "self[1] == 0.0"), 2, 5000, 2],
  ["index of array with strings", genArray("string", "self[1] == self[1]"), 314577, 8, 314577],
  ["O(n^2) loop with numbers", genArray("number", "self.all(x, self.all(y, true))"), "exceeds", 10, 352],
  ["O(n^3) loop with numbers", genArray("number", "self.all(x, self.all(y, self.all(z, true)))"), "exceeds", 10, 3552],
  ["regex matches simple", genString(`self.matches("x")`), 314574, 50, 22],
  ["regex matches empty string", genString(`"".matches("(((((((((())))))))))[0-9]")`), 7, 10, 7],
  ["regex matches empty regex", genString(`self.matches("")`), 1, 100, 1],
  ["map of strings with value length", genNestedSpec("self.all(x, x.contains(self[x]))"), 2752507, 10, 72],
  ["set array maxLength to zero", genArray("number", "self[3] == 0.0"), 2, 0, 2],
  ["set map maxLength to zero", genMap("number", `self["x"] == 0.0`), 2, 0, 2],
  ["set string maxLength to zero", genString(`self == "x"`), 2, 0, 1],
  ["set bytes maxLength to zero", genBytes(`self == b"x"`), 2, 0, 1],
  ["set maxLength greater than estimated maxLength", genArray("number", "self.all(x, x == 0.0)"), 6291454, 3 * 1024 * 2048, 25165826],
  ["nested types with root rule with all supporting maxLength", genAllMaxNested(`self.all(x, x["y"].required == "z")`), 7340027, 10, 72],
  [
    "nested types with root rule with one supporting maxLength",
    genOneMaxNested(`self.all(x, x["y"].required == "z")`),
    7340027,
    10,
    7340027,
  ],
  ["int-or-string array with all", genArray("int-or-string", "self.all(x, true)"), 4718591, 10, 32],
  ["index of array with int-or-strings", genArray("int-or-string", "self[0] == 5"), 3, 10, 3],
  ["index of array with booleans", genArray("boolean", "self[0] == false"), 2, 25, 2],
  ["index of array of objects", genObjectArray("self[0] == null"), 2, 422, 2],
  ["index of array of array of numnbers", genArrayOfArrays("number", "self[0][0] == -1.0"), 3, 51, 3],
  ["array of number maps with all", genMapArray("number", "self.all(x, x.y == 25.2)"), 6291452, 12, 74],
  ["index of array of number maps", genMapArray("number", "self[0].x > 2.0"), 4, 3000, 4],
  ["duration array with all", genArray("duration", "self.all(x, true)"), 2359295, 5, 17],
  ["index of duration array", genArray("duration", "self[0].getHours() == 2"), 4, 525, 4],
  ["date array with all", genArray("date", "self.all(x, true)"), 725936, 15, 47],
  ["index of date array", genArray("date", "self[2].getDayOfMonth() == 13"), 4, 42, 4],
  ["date-time array with all", genArray("date-time", "self.all(x, true)"), 428963, 25, 77],
  ["index of date-time array", genArray("date-time", "self[2].getMinutes() == 45"), 4, 99, 4],
  ["map of int-or-strings with all", genMap("int-or-string", "self.all(x, true)"), 1348169, 15, 47],
  ["map of objects with all", genMapOf(requiredObject(), "self.all(x, true)"), 428963, 20, 62],
  [
    "map of number maps with all",
    genMapOf({ type: "object", additionalProperties: { type: "number" } }, "self.all(x, true)"),
    1179647,
    10,
    32,
  ],
  ["map of number arrays with all", genMapOf({ type: "array", items: { type: "number" } }, "self.all(x, true)"), 1179647, 25, 77],
  ["map of durations with all", genMap("duration", "self.all(x, true)"), 1048577, 5, 17],
  ["map of dates with all", genMap("date", "self.all(x, true)"), 524288, 10, 32],
  ["map of date-times with all", genMap("date-time", "self.all(x, true)"), 349526, 25, 77],
  ["extended library regex find", genString("self.find('[0-9]+') == ''"), 629147, 10, 11],
  ["extended library join", stringList("self.join(' ') == 'aa bb'"), 329853068905, 10, 43],
  ["extended library isSorted", stringList("self.isSorted() == true"), 329854432052, 10, 52],
  ["check cost of size call", genMap("integer", "oldSelf.size() == self.size()"), 5, 10, 5],
  ["check cost of timestamp comparison", genMap("date-time", `self["a"] == self["b"]`), 8, 7, 8],
  ["check cost of duration comparison", genMap("duration", `self["c"] == self["d"]`), 8, 42, 8],
  ["enums with maxLength equals to the longest possible value", genEnum("self.contains('A')", "A", "B", "C", "LongValue"), 2, 1000, 401],
];

const schemaOf = (raw: Record<string, unknown>) =>
  compileNode(v.parse(crdSchemaFor("x-kubernetes").JSONSchemaProps, raw) as JSONSchemaProps, "x-kubernetes");

function maxCostOf(raw: Record<string, unknown>): number {
  const { rules: compiled, initError } = rulesOf(schemaOf(raw));
  expect(initError).toBeUndefined();
  expect(compiled[0]?.error).toBeUndefined();
  return compiled[0]!.maxCost;
}

describe("estimated rule cost (Kubernetes' TestCostEstimation)", () => {
  for (const [name, gen, calc, max, set] of cases) {
    it(name, () => {
      const unbounded = maxCostOf(gen(undefined));
      if (calc === "exceeds") expect(unbounded).toBeGreaterThanOrEqual(1_000_000);
      else expect(unbounded).toBe(calc);
      expect(maxCostOf(gen(max))).toBe(set);
    });
  }
});
