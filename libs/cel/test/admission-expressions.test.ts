// Admission expressions (ValidatingAdmissionPolicy validations, matchConditions) compile as CRD rules
// do (compile.ts): cel-go's literal syntax the engine lacks, the same libraries and the same checks.
import { describe, expect, it } from "vitest";
import { AdmissionActivation, compileAdmissionExpression, compileMatchCondition } from "../src/index.js";

const deployment = (labels: Record<string, string> = {}) => ({
  metadata: { name: "web", labels },
  spec: { replicas: 3 },
});
const input = (object: unknown) => ({ object, oldObject: null, request: { operation: "CREATE" } });

function evaluate(expression: string, object: unknown) {
  const compiled = compileAdmissionExpression(expression, "any", { params: false });
  expect(compiled.error).toBeUndefined();
  return new AdmissionActivation(input(object), [], 10_000_000).evaluate(compiled);
}

describe("admission expressions compile as CRD rules do", () => {
  it("a match condition with an optional list entry and a raw bytes literal", () => {
    const condition = compileMatchCondition("[?object.metadata.?labels.?tier].size() == 1 && size(br'\\d+') == 3");
    expect(condition.error).toBeUndefined();
    expect(condition.evaluate(input(deployment({ tier: "big" })))).toBe(true);
    expect(condition.evaluate(input(deployment()))).toBe(false);
  });

  it("a policy expression with an optional map entry, a double without a leading digit, optMap()", () => {
    expect(evaluate("{?'tier': object.metadata.?labels.?tier}", deployment({ tier: "big" }))).toEqual({ value: { tier: "big" } });
    expect(evaluate("{?'tier': object.metadata.?labels.?tier}.size()", deployment())).toEqual({ value: 0n });
    expect(evaluate(".5 < 1.0", deployment())).toEqual({ value: true });
    expect(evaluate("object.metadata.?labels.?tier.optMap(t, t + '!').orValue('')", deployment({ tier: "big" }))).toEqual({
      value: "big!",
    });
  });

  it("has the libraries CRD rules have: lists, strings' replace and charAt", () => {
    expect(evaluate("[3, 1, 2].max() == 3 && ![3, 1, 2].isSorted()", deployment())).toEqual({ value: true });
    expect(evaluate("object.metadata.name.replace('e', 'a') + object.metadata.name.charAt(0)", deployment())).toEqual({ value: "wabw" });
  });

  it("refuses what Kubernetes' validators refuse: a mixed list literal, an invalid constant pattern", () => {
    expect(compileAdmissionExpression("[1, 'a'].size() == 2", "bool", { params: false }).error).toMatch(
      /^compilation failed: ERROR: <input>:1:/,
    );
    expect(compileAdmissionExpression("object.metadata.name.matches('(')", "bool", { params: false }).error).toBe(
      "compilation failed: ERROR: <input>:1:30: invalid matches argument\n | object.metadata.name.matches('(')\n | .............................^",
    );
  });

  it("words a runtime error as cel-go does", () => {
    expect(evaluate("object.spec.paused", deployment())).toEqual({
      error: "expression 'object.spec.paused' resulted in error: no such key: paused",
    });
  });
});
