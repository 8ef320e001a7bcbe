// Secrets as Kubernetes decodes them: stringData is merged into data on every write path and never
// stored or returned, data that is not base64 is the decoder's 400, and an immutable Secret keeps its
// data and stays immutable.
import { describe, expect, it } from "vitest";
import { freshNamespace, paths, useTestServer } from "./harness.js";

const t = useTestServer();

const b64 = (text: string) => Buffer.from(text).toString("base64");

function secretWith(name: string, fields: Record<string, unknown>) {
  return { apiVersion: "v1", kind: "Secret", metadata: { name }, ...fields };
}

describe("stringData", () => {
  it("is merged into data on create, over data's value for the same key, and never returned or stored", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(
      paths.secrets(ns),
      secretWith("s", { data: { kept: b64("k"), both: b64("from data") }, stringData: { both: "from stringData", text: "héllo" } }),
    );
    expect(created.status).toBe(201);
    const expected = { kept: b64("k"), both: b64("from stringData"), text: b64("héllo") };
    expect(created.body.data).toEqual(expected);
    expect(created.body.stringData).toBeUndefined();
    const read = await t.api.get(`${paths.secrets(ns)}/s`);
    expect(read.body.data).toEqual(expected);
    expect(read.body.stringData).toBeUndefined();
    expect(read.text).not.toContain("stringData");
  });

  it("is merged on update, on every patch type and on apply", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.secrets(ns)}/s`;
    expect((await t.api.post(paths.secrets(ns), secretWith("s", { data: { a: b64("1") } }))).status).toBe(201);

    const current = (await t.api.get(path)).body;
    const updated = await t.api.put(path, { ...current, stringData: { put: "p" } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toEqual({ a: b64("1"), put: b64("p") });

    const merge = await t.api.patch(path, { stringData: { merge: "m" } });
    expect(merge.body.data).toMatchObject({ merge: b64("m") });
    const strategic = await t.api.patch(path, { stringData: { strategic: "s" } }, "application/strategic-merge-patch+json");
    expect(strategic.body.data).toMatchObject({ strategic: b64("s") });
    const json = await t.api.patch(path, [{ op: "add", path: "/stringData", value: { json: "j" } }], "application/json-patch+json");
    expect(json.body.data).toMatchObject({ json: b64("j") });
    const applied = await t.api.patch(
      `${path}?fieldManager=applier`,
      secretWith("s", { stringData: { applied: "y" } }),
      "application/apply-patch+yaml",
    );
    expect(applied.status).toBe(200);
    expect(applied.body.data).toMatchObject({ applied: b64("y") });

    const final = await t.api.get(path);
    expect(Object.keys(final.body.data).sort()).toEqual(["a", "applied", "json", "merge", "put", "strategic"]);
    expect(final.body.stringData).toBeUndefined();
  });

  it("is merged in a dry run's answer too", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(`${paths.secrets(ns)}?dryRun=All`, secretWith("dry", { stringData: { k: "v" } }));
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ k: b64("v") });
    expect(r.body.stringData).toBeUndefined();
  });
});

describe("data that is not base64 is a decoding error (400)", () => {
  it.each([
    ["not base64", 3],
    ["abc", 0],
    ["YWJjZA", 4],
    ["YWJj=", 4],
    ["YQ=", 3],
    ["YQ==x", 4],
    ["Y===", 1],
    ["YQ=x", 2],
  ])("%j: illegal base64 data at input byte %d", async (value, offset) => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(paths.secrets(ns), secretWith("bad", { data: { ok: b64("fine"), key: value } }));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
    expect(r.body.message).toBe(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${offset}`);
    expect((await t.api.get(`${paths.secrets(ns)}/bad`)).status).toBe(404);
  });

  it("line breaks inside base64 are skipped, as Go's decoder does", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(paths.secrets(ns), secretWith("wrapped", { data: { key: "YWJj\r\nZGVm" } }));
    expect(r.status).toBe(201);
  });

  it("a PUT and a patch are refused the same way", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.secrets(ns)}/s`;
    expect((await t.api.post(paths.secrets(ns), secretWith("s", {}))).status).toBe(201);
    const message = 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0';
    const put = await t.api.put(path, secretWith("s", { data: { k: "!" } }));
    expect([put.status, put.body.message]).toEqual([400, message]);
    const patch = await t.api.patch(path, { data: { k: "!" } });
    expect([patch.status, patch.body.message]).toEqual([400, message]);
  });

  it("a ConfigMap's binaryData likewise", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm" },
      binaryData: { k: "not base64" },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 3');
  });
});

describe("immutable Secrets", () => {
  const immutableMessage = "field is immutable when `immutable` is set";

  async function immutableSecret() {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(paths.secrets(ns), secretWith("frozen", { immutable: true, data: { k: b64("v") } }));
    expect(created.status).toBe(201);
    return `${paths.secrets(ns)}/frozen`;
  }

  it("refuse a change of data, through data or stringData", async () => {
    const path = await immutableSecret();
    for (const patch of [{ data: { k: b64("changed") } }, { data: { other: b64("x") } }, { stringData: { k: "changed" } }]) {
      const r = await t.api.patch(path, patch);
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(`Secret "frozen" is invalid: data: Forbidden: ${immutableMessage}`);
      expect(r.body.details.causes).toEqual([{ reason: "FieldValueForbidden", message: `Forbidden: ${immutableMessage}`, field: "data" }]);
    }
  });

  it("refuse becoming mutable again, with or without the data", async () => {
    const path = await immutableSecret();
    const off = await t.api.patch(path, { immutable: false });
    expect(off.status).toBe(422);
    expect(off.body.message).toBe(`Secret "frozen" is invalid: immutable: Forbidden: ${immutableMessage}`);
    const both = await t.api.patch(path, { immutable: null, data: { k: b64("changed") } });
    expect(both.status).toBe(422);
    expect(both.body.message).toBe(
      `Secret "frozen" is invalid: [immutable: Forbidden: ${immutableMessage}, data: Forbidden: ${immutableMessage}]`,
    );
  });

  it("still take metadata changes, and a data write that changes nothing", async () => {
    const path = await immutableSecret();
    expect((await t.api.patch(path, { metadata: { labels: { a: "b" } } })).status).toBe(200);
    expect((await t.api.patch(path, { stringData: { k: "v" } })).status).toBe(200);
    expect((await t.api.delete(path)).status).toBe(200);
  });

  it("a Secret's type never changes", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(paths.secrets(ns), secretWith("typed", { type: "Opaque" }))).status).toBe(201);
    const r = await t.api.patch(`${paths.secrets(ns)}/typed`, { type: "example.com/other" });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Secret "typed" is invalid: type: Invalid value: "example.com/other": field is immutable');
  });
});
