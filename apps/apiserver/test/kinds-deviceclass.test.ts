// DeviceClass (spec 2.7) rules, as Kubernetes' ValidateDeviceClass enforces them: each bad class is
// refused with 422 Invalid, a Status whose causes name the field, and nothing stored; good classes work.
import { join } from "node:path";
import { evaluateDeviceClass } from "@orch/cel";
import { SqliteStorage } from "@orch/storage";
import { describe, expect, it } from "vitest";
import { useTestServer } from "./harness.js";

const t = useTestServer();

const DCS = "/apis/resource.orch.io/v1/deviceclasses";
let counter = 0;
const fresh = () => `dc-${++counter}`;
const cel = (expression: string) => ({ cel: { expression } });
const opaque = (driver: unknown, parameters: unknown = { kind: "Config", apiVersion: "gpu.example.com/v1" }) => ({
  opaque: { driver, parameters },
});
const dc = (name: string, spec?: Record<string, unknown>) => ({
  apiVersion: "resource.orch.io/v1",
  kind: "DeviceClass",
  metadata: { name },
  ...(spec === undefined ? {} : { spec }),
});

interface Cause {
  field: string;
  message: string;
  reason: string;
}

/** A 422 Invalid whose causes name exactly `fields`, with nothing stored under `name`. */
async function refused(r: { status: number; body: any }, name: string, fields: string[]): Promise<Cause[]> {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Invalid", code: 422 });
  expect(r.body.details).toMatchObject({ name, group: "resource.orch.io", kind: "DeviceClass" });
  const causes = r.body.details.causes as Cause[];
  expect(causes.map((c) => c.field)).toEqual(fields);
  expect((await t.api.get(`${DCS}/${name}`)).status).toBe(404);
  return causes;
}

async function create(spec: Record<string, unknown>, name = fresh()) {
  const r = await t.api.post(DCS, dc(name, spec));
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

describe("DeviceClass: good classes", () => {
  it("a class with selectors, config and an extendedResourceName is created and read back", async () => {
    const parameters = { apiVersion: "gpu.example.com/v1", kind: "GpuConfig", sharing: { strategy: "TimeSlicing" } };
    const spec = {
      selectors: [
        cel('device.driver == "gpu.example.com"'),
        cel('cel.bind(g, device.attributes["gpu.example.com"], g.model == "a100" && g.cores >= 4096)'),
        cel('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'),
      ],
      config: [opaque("gpu.example.com", parameters)],
      extendedResourceName: "example.com/gpu",
    };
    const created = await create(spec, "gpu-a100");
    expect(created.metadata.generation).toBe(1);
    const got = await t.api.get(`${DCS}/gpu-a100`);
    expect(got.status).toBe(200);
    expect(got.body.spec).toEqual(spec);
  });

  it("an empty spec is a valid class", async () => {
    const name = fresh();
    expect((await create({}, name)).spec).toEqual({});
  });

  it("a stored class selects devices through @orch/cel", async () => {
    const stored = (await t.api.get(`${DCS}/gpu-a100`)).body;
    const device = (model: string) => ({
      driver: "gpu.example.com",
      attributes: { model: { string: model }, cores: { int: 6912 } },
      capacity: { memory: { value: "80Gi" } },
    });
    expect(evaluateDeviceClass(stored.spec, device("a100"))).toEqual({ matches: true });
    expect(evaluateDeviceClass(stored.spec, device("t4"))).toEqual({ matches: false });
    // A device without the attribute the class reads: an evaluation error, not a mismatch.
    const noCores = { driver: "gpu.example.com", attributes: { model: { string: "a100" } } };
    expect(evaluateDeviceClass(stored.spec, noCores, { className: "gpu-a100" })).toEqual({
      error: "class gpu-a100: selector #1: CEL runtime error: no such key: cores",
    });
  });
});

describe("DeviceClass: spec", () => {
  it("spec is required → 422 spec", async () => {
    const name = fresh();
    const r = await t.api.post(DCS, dc(name));
    const [cause] = await refused(r, name, ["spec"]);
    expect(cause).toMatchObject({ reason: "FieldValueRequired", message: "Required value" });
    expect(r.body.message).toBe(`DeviceClass.resource.orch.io "${name}" is invalid: spec: Required value`);
    // `null` is no spec either.
    await refused(await t.api.post(DCS, { ...dc(name), spec: null }), name, ["spec"]);
  });

  it("the name is a DNS subdomain → 422 metadata.name", async () => {
    await refused(await t.api.post(DCS, dc("Not_A_Name", {})), "Not_A_Name", ["metadata.name"]);
  });
});

describe("DeviceClass: selectors", () => {
  it("each selector sets exactly one field (cel) → 422 spec.selectors[i].cel", async () => {
    const name = fresh();
    const causes = await refused(await t.api.post(DCS, dc(name, { selectors: [cel("true"), {}] })), name, ["spec.selectors[1].cel"]);
    expect(causes[0]).toMatchObject({ reason: "FieldValueRequired", message: "Required value" });
  });

  it("cel.expression must compile against device → 422 with the CEL message", async () => {
    const name = fresh();
    const expression = "device.vendor == 'x'";
    const r = await t.api.post(DCS, dc(name, { selectors: [cel("true"), cel(expression)] }));
    const [cause] = await refused(r, name, ["spec.selectors[1].cel.expression"]);
    const detail = "compilation failed: ERROR: <input>:1:7: undefined field 'vendor'\n | device.vendor == 'x'\n | ......^";
    expect(cause).toEqual({
      reason: "FieldValueInvalid",
      field: "spec.selectors[1].cel.expression",
      message: `Invalid value: "device.vendor == 'x'": ${detail}`,
    });
    expect(r.body.message).toBe(
      `DeviceClass.resource.orch.io "${name}" is invalid: spec.selectors[1].cel.expression: Invalid value: "device.vendor == 'x'": ${detail}`,
    );
  });

  it("syntax errors, undeclared variables and an empty expression → 422 spec.selectors[i].cel.expression", async () => {
    for (const expression of ["device.driver ==", "gpu.model == 'a100'", "", undefined]) {
      const name = fresh();
      const selector = expression === undefined ? { cel: {} } : cel(expression);
      const [cause] = await refused(await t.api.post(DCS, dc(name, { selectors: [selector] })), name, ["spec.selectors[0].cel.expression"]);
      expect(cause!.reason).toBe("FieldValueInvalid");
      expect(cause!.message).toMatch(/^Invalid value: ".*": compilation failed: ERROR: <input>:1:\d+: /);
    }
  });

  it("cel.expression must be boolean → 422 spec.selectors[i].cel.expression", async () => {
    const name = fresh();
    const [cause] = await refused(await t.api.post(DCS, dc(name, { selectors: [cel("device.driver")] })), name, [
      "spec.selectors[0].cel.expression",
    ]);
    expect(cause!.message).toBe('Invalid value: "device.driver": must evaluate to bool or the unknown type, not string');
  });

  it("cel.expression's estimated cost is within 1,000,000 → 422 Forbidden: too complex", async () => {
    const name = fresh();
    // A device's maps and strings have no declared bound: two map() over an attribute map are estimated
    // beyond any limit (Kubernetes' own "expensive" case), and RE2 over a string of unknown length too.
    const expensive = 'device.attributes["dra.example.com"].map(s, s.lowerAscii()).map(s, s.size()).sum() == 0';
    const r = await t.api.post(DCS, dc(name, { selectors: [cel("true"), cel(expensive), cel('device.driver.matches("^gpu")')] }));
    const causes = await refused(r, name, ["spec.selectors[1].cel.expression", "spec.selectors[2].cel.expression"]);
    expect(causes[0]).toEqual({
      reason: "FieldValueForbidden",
      field: "spec.selectors[1].cel.expression",
      message: "Forbidden: too complex, exceeds cost limit",
    });
    await create({ selectors: [cel('device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].cores > 4096')] });
  });

  it("cel.expression is at most 10 Ki → 422 Too long", async () => {
    const name = fresh();
    const long = `${" ".repeat(10 * 1024 - 3)}true`;
    const [cause] = await refused(await t.api.post(DCS, dc(name, { selectors: [cel(long)] })), name, ["spec.selectors[0].cel.expression"]);
    expect(cause).toMatchObject({ reason: "FieldValueTooLong", message: "Too long: may not be more than 10240 bytes" });
    await create({ selectors: [cel(long.slice(1))] });
  });

  it("at most 32 selectors → 422 Too many", async () => {
    const name = fresh();
    const selectors = Array.from({ length: 33 }, () => cel("true"));
    const [cause] = await refused(await t.api.post(DCS, dc(name, { selectors })), name, ["spec.selectors"]);
    expect(cause).toMatchObject({ reason: "FieldValueTooMany", message: "Too many: 33: must have at most 32 items" });
    await create({ selectors: selectors.slice(1) });
  });
});

describe("DeviceClass: config", () => {
  it("each config sets exactly one field (opaque) → 422 spec.config[i].opaque", async () => {
    const name = fresh();
    await refused(await t.api.post(DCS, dc(name, { config: [opaque("gpu.example.com"), {}] })), name, ["spec.config[1].opaque"]);
  });

  it("opaque.driver is required → 422 spec.config[i].opaque.driver", async () => {
    for (const driver of [undefined, ""]) {
      const name = fresh();
      const [cause] = await refused(await t.api.post(DCS, dc(name, { config: [opaque(driver)] })), name, ["spec.config[0].opaque.driver"]);
      expect(cause).toMatchObject({ reason: "FieldValueRequired", message: "Required value" });
    }
  });

  it("opaque.driver is a lowercase DNS subdomain → 422 with Kubernetes' message", async () => {
    for (const driver of ["GPU.example.com", "gpu_example.com", "-gpu.example.com"]) {
      const name = fresh();
      const [cause] = await refused(await t.api.post(DCS, dc(name, { config: [opaque(driver)] })), name, ["spec.config[0].opaque.driver"]);
      expect(cause).toEqual({
        reason: "FieldValueInvalid",
        field: "spec.config[0].opaque.driver",
        message: `Invalid value: "${driver}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      });
    }
  });

  it("opaque.driver is at most 63 bytes → 422 Too long", async () => {
    const name = fresh();
    const driver = `${"a".repeat(60)}.com`;
    const [cause] = await refused(await t.api.post(DCS, dc(name, { config: [opaque(driver)] })), name, ["spec.config[0].opaque.driver"]);
    expect(cause).toMatchObject({ reason: "FieldValueTooLong", message: "Too long: may not be more than 63 bytes" });
    await create({ config: [opaque(driver.slice(1))] });
  });

  it("opaque.parameters is required → 422 spec.config[i].opaque.parameters", async () => {
    const name = fresh();
    const body = dc(name, { config: [{ opaque: { driver: "gpu.example.com" } }] });
    const [cause] = await refused(await t.api.post(DCS, body), name, ["spec.config[0].opaque.parameters"]);
    expect(cause).toMatchObject({ reason: "FieldValueRequired", message: "Required value" });
  });

  it("opaque.parameters is at most 10 Ki → 422 Too long", async () => {
    const name = fresh();
    const big = { kind: "Config", data: "x".repeat(10 * 1024) };
    const [cause] = await refused(await t.api.post(DCS, dc(name, { config: [opaque("gpu.example.com", big)] })), name, [
      "spec.config[0].opaque.parameters",
    ]);
    expect(cause).toMatchObject({ reason: "FieldValueTooLong", message: "Too long: may not be more than 10240 bytes" });
    // 10240 bytes of JSON exactly is accepted.
    const fits = { d: "x".repeat(10 * 1024 - 8) };
    expect(JSON.stringify(fits).length).toBe(10 * 1024);
    await create({ config: [opaque("gpu.example.com", fits)] });
  });

  it("opaque.parameters is a JSON object → 422 spec.config[i].opaque.parameters", async () => {
    for (const parameters of [["a"], "text", 7, true]) {
      const name = fresh();
      const [cause] = await refused(await t.api.post(DCS, dc(name, { config: [opaque("gpu.example.com", parameters)] })), name, [
        "spec.config[0].opaque.parameters",
      ]);
      expect(cause).toMatchObject({
        reason: "FieldValueInvalid",
        message: 'Invalid value: "<value omitted>": must be a valid JSON object',
      });
    }
  });

  it("at most 32 config entries → 422 Too many", async () => {
    const name = fresh();
    const config = Array.from({ length: 33 }, () => opaque("gpu.example.com"));
    const [cause] = await refused(await t.api.post(DCS, dc(name, { config })), name, ["spec.config"]);
    expect(cause).toMatchObject({ reason: "FieldValueTooMany", message: "Too many: 33: must have at most 32 items" });
  });
});

describe("DeviceClass: extendedResourceName", () => {
  it("must be an extended resource name → 422 spec.extendedResourceName", async () => {
    for (const value of ["gpu", "kubernetes.io/gpu", "requests.example.com/gpu", "example.com/", "example.com/a/b", ""]) {
      const name = fresh();
      const [cause] = await refused(await t.api.post(DCS, dc(name, { extendedResourceName: value })), name, ["spec.extendedResourceName"]);
      expect(cause).toMatchObject({
        reason: "FieldValueInvalid",
        message: `Invalid value: "${value}": must be a valid extended resource name`,
      });
    }
    for (const value of ["example.com/gpu", "gpu.example.com/a100-80gb"]) await create({ extendedResourceName: value });
  });
});

describe("DeviceClass: several errors at once", () => {
  it("reports every broken field, in Kubernetes' order", async () => {
    const name = fresh();
    const spec = {
      selectors: [{}, cel("1")],
      config: [opaque("Bad_Driver", [])],
      extendedResourceName: "gpu",
    };
    await refused(await t.api.post(DCS, dc(name, spec)), name, [
      "spec.selectors[0].cel",
      "spec.selectors[1].cel.expression",
      "spec.config[0].opaque.driver",
      "spec.config[0].opaque.parameters",
      "spec.extendedResourceName",
    ]);
  });
});

describe("DeviceClass: updates", () => {
  it("an unchanged selector is compiled and priced again: one stored over the limit refuses every update", async () => {
    const name = fresh();
    await create({ selectors: [cel("true")] }, name);
    // As an orch without the cost check could have stored it.
    const expensive = 'device.attributes["dra.example.com"].map(s, s.lowerAscii()).map(s, s.size()).sum() == 0';
    await t.restart(async () => {
      const storage = new SqliteStorage({ path: join(t.dataDir, "orch.db") });
      try {
        const key = { resource: "resource.orch.io/deviceclasses", namespace: "", name };
        const stored = (await storage.get(key))!;
        const object = JSON.parse(stored.value);
        await storage.update(key, { ...object, spec: { selectors: [cel(expensive)] } }, stored.revision);
      } finally {
        storage.close();
      }
    });
    const labelled = await t.api.patch(`${DCS}/${name}`, { metadata: { labels: { tier: "gold" } } });
    expect(labelled.status, JSON.stringify(labelled.body)).toBe(422);
    expect(labelled.body.details.causes).toEqual([
      { reason: "FieldValueForbidden", field: "spec.selectors[0].cel.expression", message: "Forbidden: too complex, exceeds cost limit" },
    ]);
    const fixed = await t.api.patch(`${DCS}/${name}`, { spec: { selectors: [cel("true")] } });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
  });

  it("an update is validated like a create; a refused update changes nothing (PUT and PATCH)", async () => {
    const name = fresh();
    const created = await create({ selectors: [cel("true")] }, name);
    const put = await t.api.put(`${DCS}/${name}`, { ...created, spec: { selectors: [cel("device.nope")] } });
    expect(put.status).toBe(422);
    expect(put.body.details.causes.map((c: Cause) => c.field)).toEqual(["spec.selectors[0].cel.expression"]);
    const patch = await t.api.patch(`${DCS}/${name}`, { spec: { config: [opaque("UPPER.example.com")] } });
    expect(patch.status).toBe(422);
    expect(patch.body.details.causes.map((c: Cause) => c.field)).toEqual(["spec.config[0].opaque.driver"]);
    const removeSpec = await t.api.patch(`${DCS}/${name}`, { spec: null });
    expect(removeSpec.status).toBe(422);
    expect(removeSpec.body.details.causes.map((c: Cause) => c.field)).toEqual(["spec"]);
    const got = await t.api.get(`${DCS}/${name}`);
    expect(got.body.spec).toEqual({ selectors: [cel("true")] });
    expect(got.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it("metadata.generation increments on every spec change, and only then", async () => {
    const name = fresh();
    const created = await create({ selectors: [cel("true")] }, name);
    expect(created.metadata.generation).toBe(1);
    const put = await t.api.put(`${DCS}/${name}`, { ...created, spec: { selectors: [cel("device.driver == 'a.example.com'")] } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.metadata.generation).toBe(2);
    const patched = await t.api.patch(`${DCS}/${name}`, { spec: { extendedResourceName: "example.com/gpu" } });
    expect(patched.body.metadata.generation).toBe(3);
    const labelled = await t.api.patch(`${DCS}/${name}`, { metadata: { labels: { tier: "gold" } } });
    expect(labelled.status).toBe(200);
    expect(labelled.body.metadata.generation).toBe(3);
    const same = await t.api.put(`${DCS}/${name}`, labelled.body);
    expect(same.body.metadata.generation).toBe(3);
    const cleared = await t.api.patch(`${DCS}/${name}`, { spec: { selectors: null, extendedResourceName: null } });
    expect(cleared.body.metadata.generation).toBe(4);
    expect(cleared.body.spec).toEqual({});
  });
});
