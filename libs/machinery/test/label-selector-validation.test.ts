// metav1 LabelSelector validation: paths and texts of apimachinery's ValidateLabelSelector.
import { describe, expect, it } from "vitest";
import { FieldPath, fieldErrorText } from "../src/validation/field-errors.js";
import { validateLabelSelector } from "../src/selectors/label-selector-validation.js";

const at = FieldPath.root("spec", "selector");
const texts = (selector: Parameters<typeof validateLabelSelector>[0]) => validateLabelSelector(selector, at).map(fieldErrorText);

describe("validateLabelSelector", () => {
  it("accepts nothing, an empty selector and good requirements", () => {
    expect(texts(undefined)).toEqual([]);
    expect(texts({})).toEqual([]);
    expect(texts({ matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] })).toEqual([]);
  });

  it("checks operators and their values", () => {
    expect(
      texts({
        matchExpressions: [
          { key: "a", operator: "In" },
          { key: "b", operator: "Exists", values: ["x"] },
          { key: "c", operator: "Near" },
        ],
      }),
    ).toEqual([
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Near": not a valid selector operator',
    ]);
  });

  it("checks keys and values as labels", () => {
    const errs = texts({ matchLabels: { "a/b/c": "ok" }, matchExpressions: [{ key: "k", operator: "In", values: ["bad value"] }] });
    expect(errs).toHaveLength(2);
    expect(errs[0]).toMatch(/^spec\.selector\.matchLabels: Invalid value: "a\/b\/c": a valid label key/);
    expect(errs[1]).toMatch(/^spec\.selector\.matchExpressions\[0\]\.values\[0\]: Invalid value: "bad value": a valid label must be/);
  });

  it("tolerates invalid values when asked (existing objects)", () => {
    const selector = { matchExpressions: [{ key: "k", operator: "In", values: ["bad value"] }] };
    expect(validateLabelSelector(selector, at, { allowInvalidLabelValueInSelector: true })).toEqual([]);
  });
});
