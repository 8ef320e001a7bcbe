// Hostile and heavy requests against the real apiserver process: each one is answered with a 4xx Status
// (or succeeds, where Kubernetes accepts it), nothing is stored by a refused request, the process stays
// up, and it answers an ordinary read at once afterwards (docs/limits.md lists every limit).
import { type ApiserverProcess, startApiserverProcess } from "@orch/testing";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, type Reply, adminClient, defineOpenKind } from "./harness.js";

let server: ApiserverProcess;
let api: Client;

beforeAll(async () => {
  server = await startApiserverProcess();
  api = adminClient(server.url, server.dataDir);
});
afterAll(async () => {
  api?.close();
  await server?.dispose();
});

const SECRETS = "/api/v1/namespaces/default/secrets";
const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";

/** The newest revision: a refused request must not move it. */
async function revision(): Promise<string> {
  return (await api.get("/api/v1/namespaces?limit=1")).body.metadata.resourceVersion;
}

/** The process is up and answers an ordinary read within 100 ms (best of three: a stalled server fails all). */
async function expectResponsive(): Promise<void> {
  expect(server.pid && processAlive(server.pid)).toBeTruthy();
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    expect((await api.get("/api/v1/namespaces/default")).status).toBe(200);
    times.push(performance.now() - started);
  }
  expect(Math.min(...times)).toBeLessThan(100);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A refused request: the Status it answers with, after checking it is one and changed nothing. */
async function refused(send: () => Promise<Reply>, code: number): Promise<Reply> {
  const before = await revision();
  const r = await send();
  expect(r.status, r.text.slice(0, 500)).toBe(code);
  expect(r.body).toMatchObject({ kind: "Status", status: "Failure", code });
  expect(await revision()).toBe(before);
  await expectResponsive();
  return r;
}

/** `levels` arrays or objects, one inside the other, as JSON text (this test's own stack could not stringify them). */
const nestedArrays = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

const thing = (t: { apiVersion: string; kind: string }, name: string, specJson: string) =>
  `{"apiVersion":"${t.apiVersion}","kind":"${t.kind}","metadata":{"name":"${name}"},"spec":${specJson}}`;

describe("nesting", () => {
  it("a deeply nested YAML body, even from an account with no bindings, is a 400 every time", async () => {
    await api.post("/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "nobody" } });
    const token = (await api.post("/api/v1/namespaces/default/serviceaccounts/nobody/token", { spec: {} })).body.status.token;
    const nobody = api.withToken(token);
    const body = "[".repeat(5000);
    for (let i = 0; i < 2; i++) {
      const r = await refused(
        () =>
          nobody.request("POST", "/apis/authorization.orch.io/v1/selfsubjectaccessreviews", { raw: body, contentType: "application/yaml" }),
        400,
      );
      expect(r.body.reason).toBe("BadRequest");
    }
    nobody.close();
  });

  it("takes 10,000 levels of JSON and YAML in a custom resource, as Kubernetes does, and refuses 10,001", async () => {
    const t = await defineOpenKind(api);
    // The object is level 1 and spec level 2: 9,998 arrays below make 10,000.
    const created = await api.request("POST", t.path, { raw: thing(t, "deep", `{"d":${nestedArrays(9_998)}}`) });
    expect(created.status, created.text.slice(0, 300)).toBe(201);
    const read = await api.get(`${t.path}/deep`);
    expect(read.text).toContain(nestedArrays(9_998));
    const yamlAtLimit = `apiVersion: ${t.apiVersion}\nkind: Thing\nmetadata:\n  name: deep-yaml\nspec:\n  d: ${nestedArrays(9_998)}\n`;
    expect((await api.request("POST", t.path, { raw: yamlAtLimit, contentType: "application/yaml" })).status).toBe(201);

    const tooDeep = await refused(() => api.request("POST", t.path, { raw: thing(t, "deeper", `{"d":${nestedArrays(9_999)}}`) }), 400);
    expect(tooDeep.body.message).toContain("exceeded max depth");
    const yaml = `apiVersion: ${t.apiVersion}\nkind: Thing\nmetadata:\n  name: deeper\nspec:\n  d: ${nestedArrays(9_999)}\n`;
    const tooDeepYaml = await refused(() => api.request("POST", t.path, { raw: yaml, contentType: "application/yaml" }), 400);
    expect(tooDeepYaml.body.message).toContain("yaml: exceeded max depth of 10000");
  });

  it("processes a 10,000-level object through every write path: merge, JSON and apply patches, managed fields, strict decoding", async () => {
    const t = await defineOpenKind(api);
    expect((await api.request("POST", t.path, { raw: thing(t, "p", "{}") })).status).toBe(201);
    // Nested objects: pruning, defaulting, managedFields and comparison all walk into them.
    const deep = nestedObjects(9_990);
    const merged = await api.request("PATCH", `${t.path}/p`, {
      raw: `{"spec":{"m":${deep}}}`,
      contentType: "application/merge-patch+json",
    });
    expect(merged.status, merged.text.slice(0, 300)).toBe(200);
    const jsonPatched = await api.request("PATCH", `${t.path}/p`, {
      raw: `[{"op":"add","path":"/spec/j","value":${deep}}]`,
      contentType: "application/json-patch+json",
    });
    expect(jsonPatched.status, jsonPatched.text.slice(0, 300)).toBe(200);
    const applied = await api.request("PATCH", `${t.path}/q?fieldManager=hostile`, {
      raw: thing(t, "q", `{"m":${deep}}`),
      contentType: "application/apply-patch+yaml",
    });
    expect(applied.status, applied.text.slice(0, 300)).toBe(201);
    const strategic = await api.request("PATCH", `${t.path}/p`, {
      raw: `{"spec":{"s":${deep}}}`,
      contentType: "application/strategic-merge-patch+json",
    });
    expect(strategic.status).toBe(415);

    // A built-in kind drops unknown fields (with a warning), or refuses them under Strict.
    const deployment = (name: string) =>
      `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}"},"spec":{"unknown":${nestedArrays(9_990)},"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`;
    const dropped = await api.request("POST", DEPLOYMENTS, { raw: deployment("deep") });
    expect(dropped.status, dropped.text.slice(0, 300)).toBe(201);
    expect(dropped.warnings.join()).toContain("unknown field");
    await refused(() => api.request("POST", `${DEPLOYMENTS}?fieldValidation=Strict`, { raw: deployment("strict") }), 400);

    // managedFields as deep as the body allows: 4xx or taken, never a server error.
    const fieldsV1 = nestedObjects(9_990).replaceAll('"a"', '"f:a"').replace("1", "{}");
    const managed = await api.request("POST", t.path, {
      raw: `{"apiVersion":"${t.apiVersion}","kind":"Thing","metadata":{"name":"mf","managedFields":[{"manager":"m","operation":"Apply","apiVersion":"${t.apiVersion}","fieldsType":"FieldsV1","fieldsV1":${fieldsV1}}]},"spec":{}}`,
    });
    expect(managed.status, managed.text.slice(0, 300)).toBeLessThan(500);
    await expectResponsive();
  });
});

describe("patches", () => {
  it("a JSON patch that doubles the object with copies is refused at Kubernetes' 3 MiB copy limit", async () => {
    const t = await defineOpenKind(api);
    expect(
      (
        await api.request("POST", t.path, {
          raw: thing(t, "c", '{"a":["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]}'),
        })
      ).status,
    ).toBe(201);
    // Each copy of spec into itself doubles it: 26 of them would make 64 million copies of the string.
    const doubling = Array.from({ length: 26 }, (_, i) => ({ op: "copy", from: "/spec", path: `/spec/c${i}` }));
    const r = await refused(() => api.patch(`${t.path}/c`, doubling, "application/json-patch+json"), 422);
    expect(r.body.details.causes[0].message).toMatch(
      /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/,
    );
  });

  it("a JSON patch of more than 10,000 operations is a 413", async () => {
    const t = await defineOpenKind(api);
    expect((await api.request("POST", t.path, { raw: thing(t, "n", "{}") })).status).toBe(201);
    const ops = Array.from({ length: 10_001 }, () => ({ op: "test", path: "/spec", value: {} }));
    const r = await refused(() => api.patch(`${t.path}/n`, ops, "application/json-patch+json"), 413);
    expect(r.body.message).toBe("Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001");
  });

  it("inserts that shift a long array over and over are refused before they hold the server", async () => {
    const t = await defineOpenKind(api);
    expect((await api.request("POST", t.path, { raw: thing(t, "big", `{"a":[${new Array(500_000).fill(0).join(",")}]}`) })).status).toBe(
      201,
    );
    const ops = Array.from({ length: 10_000 }, () => ({ op: "add", path: "/spec/a/0", value: 0 }));
    const r = await refused(() => api.patch(`${t.path}/big`, ops, "application/json-patch+json"), 422);
    expect(r.body.details.causes[0].message).toContain("array elements");
  });

  it("merges, strategic merges and applies long keyed lists in linear time", async () => {
    const env = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, value: "v" }));
    const deployment = (name: string, n: number) => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name },
      spec: {
        selector: { matchLabels: { a: "b" } },
        template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "x", env: env("A", n) }] } },
      },
    });
    // As long as the object, with its managedFields, stays within the 1.5 MiB one object may take.
    expect((await api.post(DEPLOYMENTS, deployment("long", 4_000))).status).toBe(201);
    const strategic = await api.patch(
      `${DEPLOYMENTS}/long`,
      { spec: { template: { spec: { containers: [{ name: "c", env: env("B", 4_000) }] } } } },
      "application/strategic-merge-patch+json",
    );
    expect(strategic.status).toBe(200);
    expect(strategic.body.spec.template.spec.containers[0].env).toHaveLength(8_000);
    const applied = await api.request("PATCH", `${DEPLOYMENTS}/long?fieldManager=long`, {
      raw: JSON.stringify({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "long" },
        spec: { template: { spec: { containers: [{ name: "c", env: env("C", 4_000) }] } } },
      }),
      contentType: "application/apply-patch+yaml",
    });
    expect(applied.status, applied.text.slice(0, 300)).toBe(200);
    expect(applied.body.spec.template.spec.containers[0].env).toHaveLength(12_000);
    await expectResponsive();
  });

  it("refuses to grow an object past the 1.5 MiB one object may take, however it is patched", async () => {
    const t = await defineOpenKind(api);
    const half = "x".repeat(900 * 1024);
    expect((await api.request("POST", t.path, { raw: thing(t, "grow", `{"a":"${half}"}`) })).status).toBe(201);
    const merged = await refused(() => api.patch(`${t.path}/grow`, { spec: { b: half } }), 413);
    expect(merged.body.message).toMatch(/^Request entity too large: the object is \d+ bytes, limit is 1572864$/);
    await refused(
      () => api.patch(`${t.path}/grow`, [{ op: "copy", from: "/spec/a", path: "/spec/c" }], "application/json-patch+json"),
      413,
    );
    expect((await api.get(`${t.path}/grow`)).body.spec.b).toBeUndefined();
  });

  it("a YAML alias bomb, or many aliases, as an apply patch is a 400 or applied, never a stall", async () => {
    const t = await defineOpenKind(api);
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]",
      "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]",
      "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]",
      "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]",
      "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]",
    ];
    const apply = (name: string, spec: string) =>
      api.request("PATCH", `${t.path}/${name}?fieldManager=m`, {
        raw: `apiVersion: ${t.apiVersion}\nkind: Thing\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, "  ")}\n`,
        contentType: "application/apply-patch+yaml",
      });
    const r = await refused(() => apply("bomb", bomb.join("\n")), 400);
    expect(r.body.message).toContain("yaml: document contains excessive aliasing");
    // 20,000 anchors each used once: linear, unlike a scan of every anchor per alias.
    const anchors = Array.from({ length: 20_000 }, (_, i) => `- &a${i} v${i}`).join("\n");
    const aliases = Array.from({ length: 20_000 }, (_, i) => `- *a${i}`).join("\n");
    const many = await apply("many", `defined:\n${anchors}\nused:\n${aliases}`);
    expect(many.status, many.text.slice(0, 300)).toBe(201);
    expect(many.body.spec.used[19_999]).toBe("v19999");
    await expectResponsive();
  });
});

describe("bodies, paths and parameters", () => {
  it("stops reading a chunked upload at the 3 MiB limit: 413, and the memory is not taken", async () => {
    const before = rssKiB(server.pid!);
    const status = await chunkedUpload(300 * 1024 * 1024);
    expect(status).toBe(413);
    // Reading 300 MiB whole took ~800 MB; counted as it streams it takes a few.
    expect(rssKiB(server.pid!) - before).toBeLessThan(100 * 1024);
    await expectResponsive();
  });

  it("answers every oversized upload with its 413, not a reset the client sees before the answer", async () => {
    // Closed with the upload still arriving, a connection was reset under about one client in ten,
    // which then saw EPIPE: twenty in a row all got the Status only once the server lingered.
    const statuses: (number | string)[] = [];
    for (let i = 0; i < 20; i++) statuses.push(await chunkedUpload(8 * 1024 * 1024).catch((e: Error) => e.message));
    expect(statuses).toEqual(Array(20).fill(413));
    await expectResponsive();
  });

  it("answers malformed escapes in the path with a 400 Status", async () => {
    for (const path of ["/api/v1/namespaces/%ff/pods", "/api/v1/namespaces/%/pods", "/api/v1/%zz"]) {
      const r = await refused(() => api.get(path), 400);
      expect(r.body.reason).toBe("BadRequest");
    }
  });

  it("answers a watch from a resourceVersion that is no number with a 400 Status", async () => {
    const r = await refused(() => api.get(`${SECRETS}?watch=true&resourceVersion=abc`), 400);
    expect(r.body.message).toContain('invalid resource version: resourceVersion: Invalid value: "abc"');
  });

  it("answers a quantity with an exponent of two billion (which Kubernetes parses) without a server error", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "huge-quantity" },
      spec: { containers: [{ name: "c", image: "x", resources: { limits: { cpu: "1e2147483647", "example.com/dev": "1e2147483647" } } }] },
    };
    const r = await api.post("/api/v1/namespaces/default/pods", pod);
    expect(r.status, r.text.slice(0, 300)).toBeLessThan(500);
    await expectResponsive();
  });

  it("refuses Secrets over 1 MiB of data as Kubernetes does, and takes one of exactly 1 MiB", async () => {
    const secret = (name: string, bytes: number) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name },
      data: { a: Buffer.alloc(bytes / 2).toString("base64"), b: Buffer.alloc(bytes / 2).toString("base64") },
    });
    const r = await refused(() => api.post(SECRETS, secret("big", 1024 * 1024 + 2)), 422);
    expect(r.body.details.causes).toEqual([
      { reason: "FieldValueTooLong", message: "Too long: may not be more than 1048576 bytes", field: "data" },
    ]);
    expect((await api.post(SECRETS, secret("max", 1024 * 1024))).status).toBe(201);
  });
});

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

/** Streams `bytes` of a Secret-shaped body with chunked encoding; resolves with the status the server answered. */
function chunkedUpload(bytes: number): Promise<number> {
  const pki = (name: string) => readFileSync(`${server.dataDir}/pki/${name}`);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${SECRETS}`, {
      method: "POST",
      ca: pki("ca.crt"),
      cert: pki("admin.crt"),
      key: pki("admin.key"),
      headers: { "Content-Type": "application/json", "Transfer-Encoding": "chunked" },
    });
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    // The server closes the connection after its answer: the rest of the upload fails to send.
    req.on("error", (e) => (answered ? undefined : reject(e)));
    const pump = () => {
      while (!answered && sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    req.write('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"huge"},"data":{"a":"');
    pump();
  });
}
