// The value types of DRA selectors: quantities (capacity) and semantic versions (version attributes).
import { describe, expect, it } from "vitest";
import { Quantity, Semver } from "../src/index.js";

describe("Quantity", () => {
  it("parses Kubernetes' suffixes exactly", () => {
    const q = (s: string) => Quantity.parse(s).toString();
    expect(q("40Gi")).toBe(String(40n * 2n ** 30n));
    expect(q("1.5Ki")).toBe("1536");
    expect(q("500m")).toBe("1/2");
    expect(q("2k")).toBe("2000");
    expect(q("1e3")).toBe("1000");
    expect(q("1E-3")).toBe("1/1000");
    expect(q("-0.25")).toBe("-1/4");
    expect(q(".5")).toBe("1/2");
    expect(q("7E")).toBe(String(7n * 10n ** 18n));
  });

  it("refuses what Kubernetes refuses, with its messages", () => {
    expect(() => Quantity.parse("")).toThrow("quantities must match the regular expression");
    expect(() => Quantity.parse("1 Gi")).toThrow("quantities must match the regular expression");
    expect(() => Quantity.parse("1Gb")).toThrow("quantities must match the regular expression");
    expect(() => Quantity.parse("1Gm")).toThrow("unable to parse quantity's suffix");
    expect(() => Quantity.parse("1e99999")).toThrow("unable to parse quantity's suffix");
    expect(Quantity.isQuantity("1Mi")).toBe(true);
    expect(Quantity.isQuantity("one")).toBe(false);
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
    const order = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.10.0", "2.0.0"];
    for (let i = 0; i + 1 < order.length; i++) {
      expect(Semver.parse(order[i]!).compareTo(Semver.parse(order[i + 1]!)), `${order[i]} < ${order[i + 1]}`).toBe(-1n);
    }
    expect(Semver.parse("1.0.0+a").compareTo(Semver.parse("1.0.0+b"))).toBe(0n);
  });
});
