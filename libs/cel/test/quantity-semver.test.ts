// The value types of DRA selectors: quantities (capacity) and semantic versions (version attributes).
import { describe, expect, it } from "vitest";
import { Quantity, Semver } from "../src/index.js";

describe("Quantity", () => {
  it("parses Kubernetes' suffixes as the apiserver does, and prints the canonical form", () => {
    const value = (s: string) => Quantity.parse(s).asInteger();
    expect(value("40Gi")).toBe(40n * 2n ** 30n);
    expect(value("1.5Ki")).toBe(1536n);
    expect(value("2k")).toBe(2000n);
    expect(value("1e3")).toBe(1000n);
    expect(value("7E")).toBe(7n * 10n ** 18n);
    expect(Quantity.parse("500m").compareTo(Quantity.parse(".5"))).toBe(0n);
    expect(Quantity.parse("1E-3").compareTo(Quantity.parse("1m"))).toBe(0n);
    expect(Quantity.parse("-0.25").toString()).toBe("-250m");
    // One Quantity for the apiserver and CEL: below a nano it rounds up, as resource.ParseQuantity does.
    expect(Quantity.parse("0.1n").compareTo(Quantity.parse("1n"))).toBe(0n);
  });

  it("refuses what Kubernetes refuses, with its messages", () => {
    expect(() => Quantity.parse("")).toThrow("quantities must match the regular expression");
    expect(() => Quantity.parse("1 Gi")).toThrow("quantities must match the regular expression");
    expect(() => Quantity.parse("1Gb")).toThrow("quantities must match the regular expression");
    expect(() => Quantity.parse("1Gm")).toThrow("unable to parse quantity's suffix");
    expect(() => Quantity.parse("1e99999999999999999999")).toThrow("unable to parse quantity's suffix");
    expect(Quantity.isQuantity("1Mi")).toBe(true);
    expect(Quantity.isQuantity("one")).toBe(false);
  });

  it("keeps huge exponents symbolic: compares them, and refuses to expand them", () => {
    const huge = Quantity.parse("1e2147483647");
    expect(huge.compareTo(Quantity.parse("1e2147483646"))).toBe(1n);
    expect(huge.isInteger()).toBe(false);
    expect(() => huge.add(Quantity.parse("1"))).toThrow("quantities too far apart in magnitude to add");
  });

  it("compares, adds and converts", () => {
    expect(Quantity.parse("1Gi").compareTo(Quantity.parse("1G"))).toBe(1n);
    expect(Quantity.parse("1000m").compareTo(Quantity.parse("1"))).toBe(0n);
    expect(Quantity.parse("1.5").add(Quantity.parse("500m")).asInteger()).toBe(2n);
    expect(() => Quantity.parse("1.5").asInteger()).toThrow("cannot convert value to integer");
    expect(() => Quantity.parse("10E").asInteger()).toThrow("cannot convert value to integer");
    expect(Quantity.parse("-3").sign()).toBe(-1n);
    expect(Quantity.parse("250m").asApproximateFloat()).toBe(0.25);
  });
});

describe("Semver", () => {
  it("parses strictly, with blang/semver's messages", () => {
    expect(Semver.parse("1.2.3-rc.1+build.5").toString()).toBe("1.2.3-rc.1+build.5");
    expect(() => Semver.parse("1.2")).toThrow("No Major.Minor.Patch elements found");
    expect(() => Semver.parse("v1.2.3")).toThrow('Invalid character(s) found in major number "v1"');
    expect(() => Semver.parse("01.2.3")).toThrow('Major number must not contain leading zeroes "01"');
    expect(() => Semver.parse("1.2.3-01")).toThrow("Numeric PreRelease version must not contain leading zeroes");
    expect(() => Semver.parse("")).toThrow("Version string empty");
  });

  it("orders by semver.org precedence", () => {
    const order = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.10.0",
      "2.0.0",
    ];
    for (let i = 0; i + 1 < order.length; i++) {
      expect(Semver.parse(order[i]!).compareTo(Semver.parse(order[i + 1]!)), `${order[i]} < ${order[i + 1]}`).toBe(-1n);
    }
    expect(Semver.parse("1.0.0+a").compareTo(Semver.parse("1.0.0+b"))).toBe(0n);
  });
});
