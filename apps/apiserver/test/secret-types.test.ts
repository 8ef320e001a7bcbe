// The keys each well-known Secret type needs, refused in Kubernetes' words (ValidateSecret's switch on
// `type`): the type names are Kubernetes' in both profiles, the service account annotation the profile's.
import { describe, expect, it } from "vitest";
import { type TestServer, freshNamespace, paths, useTestServer } from "./harness.js";

const orch = useTestServer();
const kube = useTestServer({ profile: "kubernetes" });

const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");
const redacted = '"<secret contents redacted>"';

function typed(type: string, data: Record<string, string>, annotations?: Record<string, string>) {
  return { apiVersion: "v1", kind: "Secret", metadata: { name: "s", ...(annotations ? { annotations } : {}) }, type, data };
}

async function create(t: TestServer, body: object) {
  const ns = await freshNamespace(t.api);
  return t.api.post(paths.secrets(ns), body);
}

const invalid = (message: string) => `Secret "s" is invalid: ${message}`;

// [type, complete data, incomplete data, the message]
const cases: [string, Record<string, string>, Record<string, string>, string][] = [
  ["kubernetes.io/dockercfg", { ".dockercfg": b64('{"r.io":{"auth":"x"}}') }, {}, "data[.dockercfg]: Required value"],
  ["kubernetes.io/dockerconfigjson", { ".dockerconfigjson": b64('{"auths":{}}') }, {}, "data[.dockerconfigjson]: Required value"],
  [
    "kubernetes.io/basic-auth",
    { username: b64("u") },
    { other: b64("x") },
    "[data[username]: Required value, data[password]: Required value]",
  ],
  ["kubernetes.io/basic-auth", { password: "" }, {}, "[data[username]: Required value, data[password]: Required value]"],
  ["kubernetes.io/ssh-auth", { "ssh-privatekey": b64("key") }, { "ssh-privatekey": "" }, "data[ssh-privatekey]: Required value"],
  ["kubernetes.io/ssh-auth", { "ssh-privatekey": b64("key") }, {}, "data[ssh-privatekey]: Required value"],
  ["kubernetes.io/tls", { "tls.crt": b64("c"), "tls.key": b64("k") }, { "tls.crt": b64("c") }, "data[tls.key]: Required value"],
  ["kubernetes.io/tls", { "tls.crt": "", "tls.key": "" }, {}, "[data[tls.crt]: Required value, data[tls.key]: Required value]"],
];

describe.each([
  ["orch", orch],
  ["kubernetes", kube],
])("under the %s profile", (_profile, t) => {
  it.each(cases)("%s: accepted when complete, refused when not", async (type, complete, incomplete, message) => {
    expect((await create(t, typed(type, complete))).status).toBe(201);
    const r = await create(t, typed(type, incomplete));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ kind: "Status", reason: "Invalid", code: 422, details: { name: "s", kind: "Secret" } });
    expect(r.body.message).toBe(invalid(message));
  });

  it("Opaque, an empty type and any other type need nothing", async () => {
    for (const type of ["Opaque", "", "example.com/anything"]) expect((await create(t, typed(type, {}))).status).toBe(201);
  });
});

describe("docker configuration that is not a JSON object", () => {
  it.each([
    ["{", "unexpected end of JSON input"],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
    ["not json", "invalid character 'o' in literal null (expecting 'u')"],
    ['{"a":1} x', "invalid character 'x' after top-level value"],
    [Buffer.from([0xff]), "invalid character 'ÿ' looking for beginning of value"],
    ["[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"],
    ['"text"', "json: cannot unmarshal string into Go value of type map[string]interface {}"],
    ["12", "json: cannot unmarshal number into Go value of type map[string]interface {}"],
    ["true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"],
  ])("%j: %s", async (text, error) => {
    for (const [type, key] of [
      ["kubernetes.io/dockercfg", ".dockercfg"],
      ["kubernetes.io/dockerconfigjson", ".dockerconfigjson"],
    ] as const) {
      const r = await create(orch, typed(type, { [key]: b64(text) }));
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(invalid(`data[${key}]: Invalid value: ${redacted}: ${error}`));
      expect(r.text).not.toContain(b64(text));
    }
  });

  it("null, an empty object and any object are accepted", async () => {
    for (const text of ["null", " {} ", '{"auths":{"r.io":{"username":"u","password":"p"}}}']) {
      expect((await create(orch, typed("kubernetes.io/dockerconfigjson", { ".dockerconfigjson": b64(text) }))).status).toBe(201);
    }
  });

  it("stringData counts as data", async () => {
    const r = await create(orch, { ...typed("kubernetes.io/dockerconfigjson", {}), stringData: { ".dockerconfigjson": "{}" } });
    expect(r.status).toBe(201);
  });
});

describe("service account tokens", () => {
  const type = "kubernetes.io/service-account-token";

  it.each([
    ["orch", "orch.io/service-account.name", orch],
    ["kubernetes", "kubernetes.io/service-account.name", kube],
  ])("under the %s profile, need the %s annotation, not empty", async (_profile, key, t) => {
    expect((await create(t, typed(type, {}, { [key]: "default" }))).status).toBe(201);
    for (const annotations of [undefined, { [key]: "" }, { "example.com/other": "default" }]) {
      const r = await create(t, typed(type, {}, annotations));
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(invalid(`metadata.annotations[${key}]: Required value`));
      expect(r.body.details.causes).toEqual([
        { reason: "FieldValueRequired", message: "Required value", field: `metadata.annotations[${key}]` },
      ]);
    }
  });
});

describe("updates", () => {
  it("are held to the type's rules too, and the type never changes", async () => {
    const ns = await freshNamespace(kube.api);
    const path = `${paths.secrets(ns)}/s`;
    expect((await kube.api.post(paths.secrets(ns), typed("kubernetes.io/tls", { "tls.crt": b64("c"), "tls.key": b64("k") }))).status).toBe(
      201,
    );
    const removed = await kube.api.patch(path, { data: { "tls.key": null } });
    expect(removed.status).toBe(422);
    expect(removed.body.message).toBe(invalid("data[tls.key]: Required value"));
    const retyped = await kube.api.patch(path, { type: "Opaque" });
    expect(retyped.status).toBe(422);
    expect(retyped.body.message).toBe(invalid('type: Invalid value: "Opaque": field is immutable'));
    expect((await kube.api.patch(path, { data: { "tls.crt": b64("new") } })).status).toBe(200);
  });
});
