// resource.Quantity parsing, comparison and canonical printing, on cases from Kubernetes' own
// quantity_test.go and the rules of its quantity.go.
import { describe, expect, it } from "vitest";
import {
  QuantityError,
  canonicalQuantity,
  compareQuantities,
  formatQuantity,
  parseQuantity,
  parseQuantityJSON,
  quantityErrors,
  quantityMilliValue,
  quantitySign,
  quantityValue,
} from "../src/values/quantity.js";

describe("parseQuantity → canonical form", () => {
  const cases: [string, string][] = [
    // Zero in every spelling prints as "0".
    ["0", "0"],
    ["0m", "0"],
    ["0Ki", "0"],
    ["0.0", "0"],
    ["-0", "0"],
    ["+", "0"],
    [".", "0"],
    // Decimal SI.
    ["1", "1"],
    ["1000m", "1"],
    ["100m", "100m"],
    ["0.1", "100m"],
    ["1.5", "1500m"],
    ["1000", "1k"],
    ["1001", "1001"],
    ["5000000", "5M"],
    ["1G", "1G"],
    ["1E", "1E"],
    ["1n", "1n"],
    ["1u", "1u"],
    ["1.", "1."],
    [".5", "500m"],
    // Below a nano rounds up, never to zero.
    ["0.1m", "100u"],
    ["0.0000000001", "1n"],
    ["1e-20", "1e-9"],
    ["-0.1m", "-100u"],
    // Binary SI.
    ["1Ki", "1Ki"],
    ["1024", "1024"],
    ["1024Ki", "1Mi"],
    ["1.5Gi", "1536Mi"],
    ["12Mi", "12Mi"],
    ["8Ki", "8Ki"],
    ["1.1Ki", "1126400m"],
    ["0.5Ki", "512"],
    ["0.0001Ki", "102400u"],
    ["100Ei", "9223372036854775807"],
    // Decimal exponents.
    ["1e3", "1e3"],
    ["1E3", "1E3"],
    ["1.5e3", "1500"],
    ["1e+3", "1e+3"],
    ["1e-3", "1e-3"],
    ["2e6", "2e6"],
    ["1000e0", "1e3"],
    // Text Kubernetes prints back as given (its parser keeps it when already scaled).
    ["+1", "+1"],
    ["1.500", "1.500"],
    ["-1", "-1"],
    ["-2Ki", "-2Ki"],
    // Decimal exponents without an SI letter print without a suffix, as Kubernetes does.
    ["1000E", "1"],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(want)}`, () => {
      expect(formatQuantity(parseQuantity(input))).toBe(want);
    });
  }

  it("accepts JSON numbers and surrounding spaces, as Quantity.UnmarshalJSON", () => {
    expect(canonicalQuantity(0.5)).toBe("500m");
    expect(canonicalQuantity(2)).toBe("2");
    expect(canonicalQuantity(1e21)).toBe("1e+21");
    expect(canonicalQuantity(" 1Gi ")).toBe("1Gi");
  });
});

describe("parseQuantity errors", () => {
  const cases: [string, string][] = [
    ["", quantityErrors.format],
    ["abc", quantityErrors.format],
    ["1x", quantityErrors.format],
    ["1.1.1", quantityErrors.format],
    ["1 Gi", quantityErrors.format],
    ["1Gi ", quantityErrors.format],
    ["--1", quantityErrors.suffix],
    ["1ki", quantityErrors.suffix],
    ["1e", quantityErrors.suffix],
    ["1Mi3", quantityErrors.suffix],
    ["1KiB", quantityErrors.format],
    ["1mm", quantityErrors.suffix],
    ["1e99999999999999999999", quantityErrors.suffix],
  ];
  for (const [input, message] of cases) {
    it(`${JSON.stringify(input)} → ${message}`, () => {
      expect(() => parseQuantity(input)).toThrow(QuantityError);
      expect(() => parseQuantity(input)).toThrow(message);
    });
  }

  it("uses Kubernetes' exact message for a malformed quantity", () => {
    expect(quantityErrors.format).toBe("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect(() => parseQuantityJSON("")).toThrow(quantityErrors.format);
  });
});

describe("comparison and values", () => {
  const q = parseQuantity;
  it("compares across suffixes and formats", () => {
    expect(compareQuantities(q("1"), q("1000m"))).toBe(0);
    expect(compareQuantities(q("1Gi"), q("1G"))).toBe(1);
    expect(compareQuantities(q("500m"), q("1"))).toBe(-1);
    expect(compareQuantities(q("-1"), q("0"))).toBe(-1);
    expect(compareQuantities(q("-2"), q("-1"))).toBe(-1);
    expect(compareQuantities(q("1e999999999"), q("1E"))).toBe(1);
    expect(compareQuantities(q("1e-5"), q("10u"))).toBe(0);
  });

  it("signs", () => {
    expect(quantitySign(q("0"))).toBe(0);
    expect(quantitySign(q("-1m"))).toBe(-1);
    expect(quantitySign(q("1Ki"))).toBe(1);
  });

  it("Value and MilliValue round away from zero", () => {
    expect(quantityValue(q("1.5"))).toBe(2n);
    expect(quantityValue(q("-1.5"))).toBe(-2n);
    expect(quantityValue(q("1Ki"))).toBe(1024n);
    expect(quantityMilliValue(q("1.5"))).toBe(1500n);
    expect(quantityMilliValue(q("1u"))).toBe(1n);
    expect(quantityMilliValue(q("2"))).toBe(2000n);
  });
});
