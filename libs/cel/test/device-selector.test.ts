// DRA device selectors (spec 2.7, rules 1-6) on the examples of the spec and of Kubernetes' API docs.
import { describe, expect, it } from "vitest";
import {
  CEL_SELECTOR_EXPRESSION_MAX_COST,
  CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
  compileDeviceSelector,
  type Device,
  evaluateDeviceClass,
} from "../src/index.js";

const gpu: Device = {
  driver: "gpu.example.com",
  attributes: {
    model: { string: "a100" },
    cores: { int: 6912 },
    mig: { bool: true },
    driverVersion: { version: "1.2.3" },
    "ext.example.com/family": { string: "ampere" },
  },
  capacity: { memory: { value: "40Gi" }, "ext.example.com/slots": { value: 4 } },
};

/** Compiles and evaluates one expression against `device`. */
function run(expression: string, device: Device = gpu, costLimit?: number) {
  const compiled = compileDeviceSelector(expression);
  if (!compiled.ok) throw new Error(`does not compile: ${compiled.message}`);
  return compiled.program.evaluate(device, costLimit === undefined ? {} : { costLimit });
}
const matches = (expression: string, device?: Device) => {
  const r = run(expression, device);
  if (!r.ok) throw new Error(r.message);
  return r.matches;
};
const errorOf = (expression: string, device?: Device, costLimit?: number) => {
  const r = run(expression, device, costLimit);
  if (r.ok) throw new Error(`evaluated to ${r.matches}`);
  return r.message;
};
const compileError = (expression: string) => {
  const r = compileDeviceSelector(expression);
  if (r.ok) throw new Error("compiled");
  return r;
};

describe("compileDeviceSelector", () => {
  it("compiles a boolean expression over the declared device variable", () => {
    for (const e of [
      'device.driver == "gpu.example.com"',
      'device.attributes["gpu.example.com"].model == "a100"',
      "device.allowMultipleAllocations",
      'device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0',
    ]) {
      expect(compileDeviceSelector(e).ok, e).toBe(true);
    }
  });

  it("accepts a dyn-typed expression (checked when evaluated), as Kubernetes accepts the unknown type", () => {
    expect(compileDeviceSelector('device.attributes["gpu.example.com"].mig').ok).toBe(true);
  });

  it("refuses a non-boolean expression with Kubernetes' message", () => {
    expect(compileError('device.attributes["gpu.example.com"].size()')).toEqual({
      ok: false,
      reason: "Invalid",
      message: "must evaluate to bool or the unknown type, not int",
    });
    expect(compileError("device.driver").message).toBe("must evaluate to bool or the unknown type, not string");
    expect(compileError("[1, 2]").message).toBe("must evaluate to bool or the unknown type, not list(int)");
    expect(compileError("device.attributes").message).toBe("must evaluate to bool or the unknown type, not map(string, map(string, dyn))");
  });

  it("refuses an unknown field of device at compile time, in cel-go's words (at the selection's dot)", () => {
    expect(compileError("device.vendor == 'x'").message).toBe(
      "compilation failed: ERROR: <input>:1:7: undefined field 'vendor'\n | device.vendor == 'x'\n | ......^",
    );
  });

  it("refuses undeclared variables and syntax errors", () => {
    expect(compileError("gpu.model == 'a100'").message).toContain("undeclared reference to 'gpu'");
    const syntax = compileError("device.driver ==");
    expect(syntax.reason).toBe("Invalid");
    expect(syntax.message).toMatch(/^compilation failed: ERROR: <input>:1:17: Syntax error: /);
    expect(compileError("").message).toMatch(/^compilation failed: ERROR: <input>:1:1: Syntax error: /);
  });

  it("limits the expression to 10 Ki bytes", () => {
    const pad = (n: number) => `${" ".repeat(n - 4)}true`;
    expect(CEL_SELECTOR_EXPRESSION_MAX_LENGTH).toBe(10240);
    expect(compileDeviceSelector(pad(10240)).ok).toBe(true);
    expect(compileError(pad(10241))).toEqual({ ok: false, reason: "TooLong", message: "may not be more than 10240 bytes" });
    // Bytes, as Go's len(): 3412 three-byte characters are 10236 bytes, plus the comparison.
    expect(compileError(`"${"€".repeat(3413)}" == ""`).reason).toBe("TooLong");
  });

  it("refuses a constant regular expression RE2 would refuse, as cel-go's literal validator words it", () => {
    expect(compileError('device.driver.matches("(")').message).toBe(
      'compilation failed: ERROR: <input>:1:23: invalid matches argument\n | device.driver.matches("(")\n | ......................^',
    );
    expect(compileError('device.driver.matches("(a)\\\\1")').message).toContain("invalid matches argument");
    expect(compileError('device.driver.matches("a(?=b)")').message).toContain("invalid matches argument");
    expect(compileDeviceSelector('device.driver.matches("^gpu\\\\.")').ok).toBe(true);
  });
});

describe("device selector evaluation (spec 2.7)", () => {
  it("rule 1: true when the device satisfies the condition, false otherwise", () => {
    expect(matches('device.driver == "gpu.example.com"')).toBe(true);
    expect(matches('device.driver == "nic.example.com"')).toBe(false);
    expect(matches('device.attributes["gpu.example.com"].model == "a100"')).toBe(true);
    expect(matches('device.attributes["gpu.example.com"].cores > 8000')).toBe(false);
  });

  it("rule 1: a non-boolean result is an evaluation error", () => {
    expect(errorOf('device.attributes["gpu.example.com"].model')).toBe(
      "CEL result of type string could not be converted to bool: type conversion error from 'string' to 'bool'",
    );
    expect(errorOf('device.attributes["gpu.example.com"].cores')).toContain("CEL result of type int");
  });

  it("rule 2: driver, attributes and capacity grouped by prefix, allowMultipleAllocations", () => {
    // An attribute without a domain is in the driver's domain; another domain groups apart.
    expect(matches('device.attributes["ext.example.com"].family == "ampere"')).toBe(true);
    expect(matches('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0')).toBe(true);
    expect(matches('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("32Gi"))')).toBe(true);
    expect(matches('device.capacity["ext.example.com"].slots == quantity("4")')).toBe(true);
    expect(matches("device.allowMultipleAllocations")).toBe(false);
    expect(matches("device.allowMultipleAllocations", { ...gpu, allowMultipleAllocations: true })).toBe(true);
  });

  it("rule 3: attribute values keep their DRA types (int, bool, string, version)", () => {
    expect(matches('device.attributes["gpu.example.com"].cores == 6912')).toBe(true);
    expect(matches('device.attributes["gpu.example.com"].mig')).toBe(true);
    expect(matches('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))')).toBe(true);
    expect(matches('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3")')).toBe(true);
    expect(matches('device.attributes["gpu.example.com"].driverVersion.major() == 1')).toBe(true);
    expect(matches('device.attributes["gpu.example.com"].driverVersion != semver("1.2.3-rc.1")')).toBe(true);
    expect(matches('quantity("1500m") != quantity("1.5") || quantity("1Ki").asInteger() != 1024')).toBe(false);
    // A type mismatch is an error, not false.
    expect(errorOf('device.attributes["gpu.example.com"].model > 1')).toMatch(/no matching overload|no such overload/i);
  });

  it("rule 4: an unknown prefix is an empty map", () => {
    expect(matches('size(device.attributes["unknown.example.com"]) == 0')).toBe(true);
    expect(matches('size(device.capacity["unknown.example.com"]) == 0')).toBe(true);
    expect(matches('device.attributes["unknown.example.com"] == {}')).toBe(true);
    // Presence tests see only the real prefixes.
    expect(matches('"unknown.example.com" in device.attributes')).toBe(false);
    expect(matches('"gpu.example.com" in device.attributes')).toBe(true);
    expect(matches("device.attributes.all(p, p in ['gpu.example.com', 'ext.example.com'])")).toBe(true);
    expect(matches('"model" in device.attributes["unknown.example.com"]')).toBe(false);
  });

  it("rule 4: an unknown field is an evaluation error; robust expressions check first", () => {
    expect(errorOf('device.attributes["gpu.example.com"].vendor == "x"')).toBe("no such key: vendor");
    expect(errorOf('device.attributes["unknown.example.com"].model == "x"')).toBe("no such key: model");
    expect(errorOf('device.capacity["gpu.example.com"].cpus.isGreaterThan(quantity("1"))')).toBe("no such key: cpus");
    expect(matches('"vendor" in device.attributes["gpu.example.com"] && device.attributes["gpu.example.com"].vendor == "x"')).toBe(false);
    expect(matches('device.attributes["gpu.example.com"].?vendor.orValue("none") == "none"')).toBe(true);
  });

  it("rule 5: cel.bind() is available", () => {
    expect(matches('cel.bind(dra, device.attributes["gpu.example.com"], dra.model == "a100" && dra.mig && dra.cores > 1000)')).toBe(true);
    expect(matches('cel.bind(dra, device.attributes["gpu.example.com"], dra.model == "h100")')).toBe(false);
  });

  it("rule 6: evaluation cost is bounded (Kubernetes' 1,000,000 per expression)", () => {
    expect(CEL_SELECTOR_EXPRESSION_MAX_COST).toBe(1_000_000);
    const hundred = `[${Array.from({ length: 100 }, (_, i) => i).join(",")}]`;
    // 100 × 100 × 100 comprehension steps: over a million steps.
    const cubic = `${hundred}.all(a, ${hundred}.all(b, ${hundred}.all(c, a + b + c >= 0)))`;
    expect(errorOf(cubic)).toBe("operation cancelled: actual cost limit exceeded");
    // Strings that double with each binding pay for their size.
    const doubling = Array.from({ length: 40 }, (_, i) => `cel.bind(s${i + 1}, s${i} + s${i}, `).join("");
    expect(errorOf(`cel.bind(s0, "0123456789", ${doubling}size(s40) > 0${")".repeat(41)}`)).toBe(
      "operation cancelled: actual cost limit exceeded",
    );
    // An exceeded limit is an error even where CEL's error absorption would drop it.
    expect(errorOf(`${cubic} || true`)).toBe("operation cancelled: actual cost limit exceeded");
    // The same expression is fine under the limit; the limit can be lowered.
    expect(matches(`${hundred}.all(a, a >= 0)`)).toBe(true);
    expect(errorOf(`${hundred}.all(a, a >= 0)`, gpu, 100)).toBe("operation cancelled: actual cost limit exceeded");
  });

  it("bounds regular expressions: no catastrophic backtracking, no dynamic backreferences", () => {
    const device: Device = { driver: "gpu.example.com", attributes: { id: { string: `${"a".repeat(40)}!` } } };
    const started = Date.now();
    expect(matches('device.attributes["gpu.example.com"].id.matches("^(a+)+$")', device)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
    const dynamic: Device = { driver: "d.example.com", attributes: { re: { string: "(a)\\1" } } };
    expect(errorOf('"aa".matches(device.attributes["d.example.com"].re)', dynamic)).toContain("invalid escape sequence");
  });

  it("reports a device whose attributes cannot be represented", () => {
    const bad: Device = { driver: "gpu.example.com", attributes: { v: { version: "1.0" } } };
    expect(run("true", bad)).toEqual({
      ok: false,
      message: "attribute v: parse semantic version: No Major.Minor.Patch elements found",
      cost: 0,
    });
    expect(run("true", { driver: "x", attributes: { e: {} } })).toMatchObject({ message: "attribute e: unsupported attribute value" });
  });
});

describe("evaluateDeviceClass", () => {
  const cel = (expression: string) => ({ cel: { expression } });

  it("matches when every selector is true", () => {
    const spec = {
      selectors: [cel('device.driver == "gpu.example.com"'), cel('device.attributes["gpu.example.com"].model == "a100"')],
    };
    expect(evaluateDeviceClass(spec, gpu)).toEqual({ matches: true });
    expect(evaluateDeviceClass({}, gpu)).toEqual({ matches: true });
    expect(evaluateDeviceClass({ selectors: [] }, gpu)).toEqual({ matches: true });
  });

  it("does not match when one selector is false; the first false one decides", () => {
    const spec = { selectors: [cel('device.driver == "nic.example.com"'), cel("device.attributes['gpu.example.com'].nope")] };
    expect(evaluateDeviceClass(spec, gpu)).toEqual({ matches: false });
  });

  it("aborts with an error naming the selector", () => {
    const spec = { selectors: [cel("true"), cel('device.attributes["gpu.example.com"].model')] };
    expect(evaluateDeviceClass(spec, gpu, { className: "gpus" })).toEqual({
      error:
        "class gpus: selector #1: CEL runtime error: CEL result of type string could not be converted to bool: type conversion error from 'string' to 'bool'",
    });
    expect(evaluateDeviceClass({ selectors: [cel("device.nope")] }, gpu)).toEqual({
      error: expect.stringMatching(/^selector #0: CEL compile error: compilation failed: .*undefined field 'nope'/),
    });
  });

  it("evaluates a class against many devices", () => {
    const spec = { selectors: [cel('device.attributes["gpu.example.com"].cores >= 4096')] };
    const devices = Array.from({ length: 200 }, (_, i): Device => ({ driver: "gpu.example.com", attributes: { cores: { int: i * 64 } } }));
    const results = devices.map((d) => evaluateDeviceClass(spec, d));
    expect(results.filter((r) => "matches" in r && r.matches)).toHaveLength(136);
    expect(results.filter((r) => "error" in r)).toHaveLength(0);
  });
});

// k8s.io/dynamic-resource-allocation v0.32 cel/compile_test.go: each scenario's estimated cost (MaxCost),
// with no size estimator (a device's strings and maps are of unknown size), and its evaluation.
describe("Kubernetes' DRA selector cost table (dynamic-resource-allocation v0.32 compile_test.go)", () => {
  const dra = "dra.example.com";
  const scenarios: { expression: string; cost: number; device?: Device; error?: string; match?: boolean }[] = [
    {
      expression: `device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))`,
      cost: 6,
      error: "no such key: noSuchAttr",
    },
    {
      expression: `device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))`,
      cost: 6,
      error: "no such key: noSuchAttr",
    },
    { expression: `"no-such-domain" in device.attributes`, cost: 3, match: false },
    {
      expression: `"dra.example.com" in device.attributes`,
      cost: 3,
      device: { driver: "", attributes: { "dra.example.com/something": { bool: true } } },
      match: true,
    },
    { expression: `device.driver == ""`, cost: 2, match: true },
    { expression: `device.driver == "dra.example.com"`, cost: 4, device: { driver: dra }, match: true },
    {
      expression: `device.attributes["dra.example.com"].name`,
      cost: 4,
      device: { driver: dra, attributes: { name: { bool: true } } },
      match: true,
    },
    {
      expression: `device.attributes["dra.example.com"]["name"]`,
      cost: 4,
      device: { driver: dra, attributes: { name: { bool: true } } },
      match: true,
    },
    {
      expression: `cel.bind(dra, device.attributes["dra.example.com"], dra.name)`,
      cost: 15,
      device: { driver: dra, attributes: { name: { bool: true } } },
      match: true,
    },
    {
      expression: `device.attributes["other.example.com"].name`,
      cost: 4,
      device: { driver: dra, attributes: { "other.example.com/name": { bool: true } } },
      match: true,
    },
    {
      expression: `device.attributes["dra.example.com"].name > 0`,
      cost: 5,
      device: { driver: dra, attributes: { name: { int: 1 } } },
      match: true,
    },
    {
      expression: `device.attributes["dra.example.com"].name == "fish"`,
      cost: 5,
      device: { driver: dra, attributes: { name: { string: "fish" } } },
      match: true,
    },
    {
      expression: `device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))`,
      cost: 6,
      device: { driver: dra, attributes: { name: { version: "1.0.0" } } },
      match: true,
    },
    {
      expression: `device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))`,
      cost: 6,
      device: { driver: dra, capacity: { name: { value: "1Mi" } } },
      match: true,
    },
    {
      expression: `"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))`,
      cost: 10,
      device: { driver: dra, capacity: { name: { value: "1Mi" } } },
      match: true,
    },
    {
      expression: `!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))`,
      cost: 11,
      match: true,
    },
    {
      expression: `
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
`,
      cost: 52,
      device: {
        driver: dra,
        attributes: { bool: { bool: true }, int: { int: 1 }, string: { string: "fish" }, version: { version: "1.0.0" } },
        capacity: { quantity: { value: "1Mi" } },
      },
      match: true,
    },
    {
      expression: `device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c`,
      cost: 12,
      device: { driver: dra, attributes: { a: { bool: true }, b: { bool: true }, c: { bool: true } } },
      match: true,
    },
  ];
  for (const s of scenarios) {
    it(`${s.expression.trim().split("\n")[0]} is estimated at ${s.cost}`, () => {
      const compiled = compileDeviceSelector(s.expression);
      if (!compiled.ok) throw new Error(compiled.message);
      expect(compiled.program.maxCost).toBe(s.cost);
      const result = compiled.program.evaluate(s.device ?? { driver: "" });
      if (s.error) expect(result).toMatchObject({ ok: false, message: s.error });
      else expect(result).toMatchObject({ ok: true, matches: s.match });
      // The actual cost never exceeds the worst-case estimate.
      expect(result.cost).toBeLessThanOrEqual(s.cost);
    });
  }

  it("an expression over a device's unbounded maps is estimated beyond any limit, and exceeds it when run", () => {
    const expression = `device.attributes["dra.example.com"].map(s, s.lowerAscii()).map(s, s.size()).sum() == 0`;
    const compiled = compileDeviceSelector(expression);
    if (!compiled.ok) throw new Error(compiled.message);
    expect(compiled.program.maxCost).toBe(2 ** 64);
    // 1000 × ResourceSliceMaxAttributesAndCapacitiesPerDevice attributes with names of DeviceMaxIDLength.
    const attributes: Record<string, { string: string }> = {};
    for (let i = 0; i < 1000 * 32; i++) {
      const suffix = `-${i}`;
      attributes[`${dra}/${"x".repeat(63 - suffix.length)}${suffix}`] = { string: "abc" };
    }
    expect(compiled.program.evaluate({ driver: dra, attributes })).toMatchObject({
      ok: false,
      message: "operation cancelled: actual cost limit exceeded",
    });
    expect(CEL_SELECTOR_EXPRESSION_MAX_COST).toBe(1_000_000);
  });
});
