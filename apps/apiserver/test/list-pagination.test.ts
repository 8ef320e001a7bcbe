// List: selectors, pagination consistent at one revision, resourceVersion semantics.
import { describe, expect, it } from "vitest";
import { caCertPem } from "./certificate-fixtures.js";
import { deployment, freshNamespace, secret, useTestServer, paths } from "./harness.js";

const t = useTestServer();

const secrets = paths.secrets;
const deploys = paths.deployments;
const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name);
const q = (s: string) => encodeURIComponent(s);

describe("list", () => {
  it("returns a <Kind>List with the list's resourceVersion and items sorted by name", async () => {
    const ns = await freshNamespace(t.api);
    for (const n of ["b", "a", "c"]) await t.api.post(deploys(ns), deployment(n));
    const r = await t.api.get(deploys(ns));
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe("DeploymentList");
    expect(r.body.apiVersion).toBe("apps/v1");
    expect(r.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(r.body.metadata.continue).toBeUndefined();
    expect(names(r.body)).toEqual(["a", "b", "c"]);
    expect(r.body.items[0].kind).toBe("Deployment");
  });

  it("carries each object as stored, characters beyond ASCII included, in JSON and in YAML", async () => {
    const ns = await freshNamespace(t.api);
    const note = "größe ✓ 日本 🚀";
    for (const n of ["a", "b"]) await t.api.post(secrets(ns), { ...secret(n, {}), metadata: { name: n, annotations: { note } } });
    const r = await t.api.get(secrets(ns));
    expect(r.body.items.map((i: any) => [i.metadata.name, i.metadata.annotations.note])).toEqual([
      ["a", note],
      ["b", note],
    ]);
    const yaml = await t.api.get(secrets(ns), { accept: "application/yaml" });
    expect(yaml.body.items.map((i: any) => i.metadata.annotations.note)).toEqual([note, note]);
    const pretty = await t.api.get(`${secrets(ns)}?pretty=true`);
    expect(pretty.text).toContain(`"note": "${note}"`);
  });

  it("an empty list has items: []", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(deploys(ns));
    expect(r.body.items).toEqual([]);
  });

  it("across all namespaces", async () => {
    const a = await freshNamespace(t.api, "alpha");
    const b = await freshNamespace(t.api, "beta");
    await t.api.post(secrets(a), secret("x", { across: "yes" }));
    await t.api.post(secrets(b), secret("x", { across: "yes" }));
    const r = await t.api.get(`/api/v1/secrets?labelSelector=across%3Dyes`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([`${a}/x`, `${b}/x`]);
  });

  it("label selectors: =, ==, !=, in, notin, exists, !", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("s1", { env: "prod", tier: "web" }));
    await t.api.post(secrets(ns), secret("s2", { env: "dev", tier: "db" }));
    await t.api.post(secrets(ns), secret("s3", { env: "qa" }));
    await t.api.post(secrets(ns), secret("s4", {}));
    const sel = async (s: string) => names((await t.api.get(`${secrets(ns)}?labelSelector=${q(s)}`)).body);
    expect(await sel("env=prod")).toEqual(["s1"]);
    expect(await sel("env==dev")).toEqual(["s2"]);
    expect(await sel("env!=prod")).toEqual(["s2", "s3", "s4"]);
    expect(await sel("env in (prod,qa)")).toEqual(["s1", "s3"]);
    expect(await sel("env notin (prod,qa)")).toEqual(["s2", "s4"]);
    expect(await sel("tier")).toEqual(["s1", "s2"]);
    expect(await sel("!tier")).toEqual(["s3", "s4"]);
    expect(await sel("env,tier=db")).toEqual(["s2"]);
  });

  it("a malformed label selector → 400", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`${secrets(ns)}?labelSelector=${q("a in (b")}`);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
    expect(r.body.kind).toBe("Status");
  });

  it("field selectors: metadata.name, metadata.namespace and a kind's own field", async () => {
    const a = await freshNamespace(t.api);
    const b = await freshNamespace(t.api);
    await t.api.post(secrets(a), secret("one", { fs: "1" }));
    await t.api.post(secrets(a), { ...secret("two", { fs: "1" }), type: "kubernetes.io/tls", data: { "tls.crt": "", "tls.key": "" } });
    await t.api.post(secrets(b), secret("one", { fs: "1" }));
    expect(names((await t.api.get(`${secrets(a)}?fieldSelector=${q("metadata.name=one")}`)).body)).toEqual(["one"]);
    expect(names((await t.api.get(`${secrets(a)}?fieldSelector=${q("metadata.name!=one")}`)).body)).toEqual(["two"]);
    const byNs = (await t.api.get(`/api/v1/secrets?labelSelector=fs&fieldSelector=${q(`metadata.namespace=${b}`)}`)).body;
    expect(byNs.items.map((i: any) => i.metadata.namespace)).toEqual([b]);
    expect(names((await t.api.get(`${secrets(a)}?fieldSelector=${q("type=kubernetes.io/tls")}`)).body)).toEqual(["two"]);
    const both = await t.api.get(`${secrets(a)}?fieldSelector=${q("type=Opaque")}&labelSelector=fs`);
    expect(names(both.body)).toEqual(["one"]);
  });

  it("a selectable field of a cluster-scoped kind (spec.signerName)", async () => {
    const base = "/apis/certificates.orch.io/v1beta1/clustertrustbundles";
    const ctb = (name: string, signerName?: string) => ({
      metadata: { name },
      spec: { ...(signerName ? { signerName } : {}), trustBundle: caCertPem },
    });
    expect((await t.api.post(base, ctb("example.com:signer:one", "example.com/signer"))).status).toBe(201);
    expect((await t.api.post(base, ctb("plain"))).status).toBe(201);
    // A signer's bundle is named after the signer (ValidateClusterTrustBundleName).
    const misnamed = await t.api.post(base, ctb("wrong", "example.com/signer"));
    expect(misnamed.status).toBe(422);
    expect(misnamed.body.message).toBe(
      'ClusterTrustBundle.certificates.orch.io "wrong" is invalid: metadata.name: Invalid value: "wrong": ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:',
    );
    const r = await t.api.get(`${base}?fieldSelector=${q("spec.signerName=example.com/signer")}`);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(["example.com:signer:one"]);
  });

  it("an unsupported field → 400 with Kubernetes' messages", async () => {
    const ns = await freshNamespace(t.api);
    const d = await t.api.get(`${deploys(ns)}?fieldSelector=${q("spec.foo=1")}`);
    expect(d.status).toBe(400);
    expect(d.body).toMatchObject({
      reason: "BadRequest",
      message: '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
    });
    const s = await t.api.get(`${secrets(ns)}?fieldSelector=${q("spec.foo=1")}`);
    expect(s.status).toBe(400);
    expect(s.body.message).toBe("field label not supported: spec.foo");
  });

  it("invalid list options → 422 ListOptions.meta.k8s.io", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`${secrets(ns)}?resourceVersionMatch=Exact`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    expect(r.body.details.causes[0]).toEqual({
      reason: "FieldValueForbidden",
      message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
      field: "resourceVersionMatch",
    });
    const listOnly = await t.api.get(`${secrets(ns)}?sendInitialEvents=true`);
    expect(listOnly.status).toBe(422);
    expect(listOnly.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    );
    const bad = await t.api.get(`${secrets(ns)}?resourceVersion=1&resourceVersionMatch=Foo`);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
    );
  });
});

describe("pagination", () => {
  it("limit/continue pages are consistent at the first page's revision", async () => {
    const ns = await freshNamespace(t.api);
    for (const n of ["p1", "p2", "p3", "p4", "p5"]) await t.api.post(secrets(ns), secret(n));
    const first = await t.api.get(`${secrets(ns)}?limit=2`);
    expect(first.status).toBe(200);
    expect(names(first.body)).toEqual(["p1", "p2"]);
    expect(first.body.metadata.continue).toBeTruthy();
    expect(first.body.metadata.remainingItemCount).toBe(3);
    const rv = first.body.metadata.resourceVersion;
    // The token is Kubernetes' shape: base64url JSON {v, rv, start} without padding.
    const token = JSON.parse(Buffer.from(first.body.metadata.continue, "base64url").toString());
    expect(token).toEqual({ v: "meta.k8s.io/v1", rv: Number(rv), start: "p2\u0000" });
    expect(first.body.metadata.continue).not.toMatch(/=/);

    // Changes between pages do not show up in the rest of this list.
    await t.api.delete(`${secrets(ns)}/p3`);
    await t.api.post(secrets(ns), secret("p35"));
    await t.api.put(`${secrets(ns)}/p4`, secret("p4", { changed: "yes" }));

    const second = await t.api.get(`${secrets(ns)}?limit=2&continue=${q(first.body.metadata.continue)}`);
    expect(second.status).toBe(200);
    expect(names(second.body)).toEqual(["p3", "p4"]);
    expect(second.body.items[1].metadata.labels).toEqual({});
    expect(second.body.metadata.resourceVersion).toBe(rv);
    expect(second.body.metadata.remainingItemCount).toBe(1);
    const third = await t.api.get(`${secrets(ns)}?limit=2&continue=${q(second.body.metadata.continue)}`);
    expect(names(third.body)).toEqual(["p5"]);
    expect(third.body.metadata.continue).toBeUndefined();
    expect(third.body.metadata.remainingItemCount).toBeUndefined();

    // A fresh list sees the changes.
    expect(names((await t.api.get(secrets(ns))).body)).toEqual(["p1", "p2", "p35", "p4", "p5"]);
  });

  it("with a selector, remainingItemCount is omitted and every page is filled", async () => {
    const ns = await freshNamespace(t.api);
    for (let i = 0; i < 6; i++) await t.api.post(secrets(ns), secret(`x${i}`, { odd: String(i % 2) }));
    const first = await t.api.get(`${secrets(ns)}?limit=2&labelSelector=odd%3D1`);
    expect(names(first.body)).toEqual(["x1", "x3"]);
    expect(first.body.metadata.remainingItemCount).toBeUndefined();
    expect(first.body.metadata.continue).toBeTruthy();
    const second = await t.api.get(`${secrets(ns)}?limit=2&labelSelector=odd%3D1&continue=${q(first.body.metadata.continue)}`);
    expect(names(second.body)).toEqual(["x5"]);
    expect(second.body.metadata.continue).toBeUndefined();
  });

  it("pages across all namespaces", async () => {
    const a = await freshNamespace(t.api, "pga");
    const b = await freshNamespace(t.api, "pgb");
    await t.api.post(secrets(a), secret("s", { pg: "all" }));
    await t.api.post(secrets(b), secret("s", { pg: "all" }));
    const first = await t.api.get(`/api/v1/secrets?limit=1&labelSelector=pg`);
    expect(first.body.items.map((i: any) => i.metadata.namespace)).toEqual([a]);
    const token = JSON.parse(Buffer.from(first.body.metadata.continue, "base64url").toString());
    expect(token.start).toBe(`${a}/s\u0000`);
    const second = await t.api.get(`/api/v1/secrets?limit=1&labelSelector=pg&continue=${q(first.body.metadata.continue)}`);
    expect(second.body.items.map((i: any) => i.metadata.namespace)).toEqual([b]);
  });

  it("continue with a resourceVersion → 400; a garbled token → 400", async () => {
    const ns = await freshNamespace(t.api);
    for (const n of ["a", "b"]) await t.api.post(secrets(ns), secret(n));
    const first = await t.api.get(`${secrets(ns)}?limit=1`);
    const r = await t.api.get(`${secrets(ns)}?limit=1&resourceVersion=1&continue=${q(first.body.metadata.continue)}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("specifying resource version is not allowed when using continue");
    const g = await t.api.get(`${secrets(ns)}?limit=1&continue=garbage`);
    expect(g.status).toBe(400);
    expect(g.body.reason).toBe("BadRequest");
    expect(g.body.message).toMatch(/^invalid continue token: continue key is not valid/);
  });
});

describe("resourceVersion", () => {
  it("Exact reads the state at an older revision; NotOlderThan reads the current one", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("e1"));
    const at = (await t.api.get(secrets(ns))).body.metadata.resourceVersion;
    await t.api.post(secrets(ns), secret("e2"));
    await t.api.put(`${secrets(ns)}/e1`, secret("e1", { v: "2" }));

    const exact = await t.api.get(`${secrets(ns)}?resourceVersion=${at}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(200);
    expect(exact.body.metadata.resourceVersion).toBe(at);
    expect(names(exact.body)).toEqual(["e1"]);
    expect(exact.body.items[0].metadata.labels).toEqual({});

    const newer = await t.api.get(`${secrets(ns)}?resourceVersion=${at}&resourceVersionMatch=NotOlderThan`);
    expect(newer.status).toBe(200);
    expect(Number(newer.body.metadata.resourceVersion)).toBeGreaterThan(Number(at));
    expect(names(newer.body)).toEqual(["e1", "e2"]);

    // Without resourceVersionMatch, a paged list at N reads exactly N (legacy semantics).
    const paged = await t.api.get(`${secrets(ns)}?resourceVersion=${at}&limit=10`);
    expect(paged.status).toBe(200);
    expect(names(paged.body)).toEqual(["e1"]);
    expect(paged.body.metadata.resourceVersion).toBe(at);

    // resourceVersion=0: any state.
    const any = await t.api.get(`${secrets(ns)}?resourceVersion=0`);
    expect(names(any.body)).toEqual(["e1", "e2"]);
  });

  it("a malformed resourceVersion → 400", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`${secrets(ns)}?resourceVersion=abc`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      reason: "BadRequest",
      message: 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    });
  });

  it("a resourceVersion newer than the server's → 504 after waiting", async () => {
    const ns = await freshNamespace(t.api);
    const current = Number((await t.api.get(secrets(ns))).body.metadata.resourceVersion);
    const started = Date.now();
    const r = await t.api.get(`${secrets(ns)}?resourceVersion=${current + 1000}&resourceVersionMatch=NotOlderThan`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
    expect(r.status).toBe(504);
    expect(r.body).toMatchObject({
      reason: "Timeout",
      code: 504,
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
    });
    expect(r.body.message).toMatch(new RegExp(`^Timeout: Too large resource version: ${current + 1000}, current: \\d+$`));
    expect(r.headers["retry-after"]).toBe("1");
  });
});
