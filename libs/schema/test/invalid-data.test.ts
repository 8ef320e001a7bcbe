// Values that do not match their schema (which a rule can meet where OpenAPI validation did not run
// first, as in Kubernetes' TestValidationExpressions): as Kubernetes converts them lazily
// (UnstructuredToVal), a rule fails only when it reads such a value, with Kubernetes' words.
import { type JSONSchemaProps, crdSchemaFor } from "@orch/api";
import { FieldPath, fieldErrorText } from "@orch/machinery";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { validateRulesCosted } from "../src/cel.js";
import { compileNode } from "../src/structural.js";

const schema = {
  type: "object",
  properties: {
    n: { type: "integer" },
    o: { type: "object", properties: { f: { type: "string" } } },
    l: { type: "array", items: { type: "string" } },
    ios: { "x-kubernetes-int-or-string": true },
    iosList: { type: "array", items: { "x-kubernetes-int-or-string": true } },
  },
};

function errorsOf(rule: string, obj: unknown): string[] {
  const raw = v.parse(crdSchemaFor("x-kubernetes").JSONSchemaProps, { ...schema, "x-kubernetes-validations": [{ rule }] });
  const node = compileNode(raw as JSONSchemaProps, "x-kubernetes");
  return validateRulesCosted(node, obj, undefined, FieldPath.root("root"), true).errors.map(fieldErrorText);
}

describe("invalid data", () => {
  const bad = { n: 1, o: ["x"], l: { a: "b" }, ios: true, iosList: [1, "a", 2.5] };

  it("a rule that does not read the bad values passes", () => {
    expect(errorsOf("self.n == 1", bad)).toEqual([]);
    expect(errorsOf("self.iosList[0] == 1 && self.iosList[1] == 'a'", bad)).toEqual([]);
  });

  it("reading one fails in Kubernetes' words", () => {
    const invalid = (rule: string, detail: string) =>
      expect(errorsOf(rule, bad)).toEqual([`root: Invalid value: "object": ${detail} evaluating rule: ${rule}`]);
    invalid("has(self.o)", "invalid data, expected a map for the provided schema with type=object");
    invalid("self.l.size() == 1", "invalid data, expected an array for the provided schema with type=array");
    invalid("has(self.ios)", "invalid data, expected XIntOrString value to be either a string or integer");
    invalid("self.iosList[2] == 1", "invalid data, expected XIntOrString value to be either a string or integer");
  });

  it("int-or-string values that are an integer or a string read as such", () => {
    expect(errorsOf("self.ios == 'x' && self.iosList[0] == 1", { ios: "x", iosList: [1] })).toEqual([]);
    expect(errorsOf("self.ios == 3", { ios: 3 })).toEqual([]);
  });
});
