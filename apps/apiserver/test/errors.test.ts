// Failures: every one is a Kubernetes Status with Kubernetes' code, reason and message, and nothing
// is stored. Also authentication, routing and the options every write takes (dryRun, fieldValidation).
import { describe, expect, it } from "vitest";
import { deployment, freshNamespace, secret, useTestServer, paths } from "./harness.js";

const t = useTestServer();

const deploys = paths.deployments;
const secrets = paths.secrets;

describe("authentication", () => {
  it("no client certificate → 401 Unauthorized Status", async () => {
    const anon = t.api.anonymous();
    try {
      for (const path of ["/api/v1/namespaces", "/version", "/apis"]) {
        const r = await anon.get(path);
        expect(r.status).toBe(401);
        expect(r.body).toEqual({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: "Unauthorized",
          reason: "Unauthorized",
          code: 401,
        });
      }
      for (const path of ["/healthz", "/livez", "/readyz"]) {
        const r = await anon.get(path);
        expect(r.status).toBe(200);
        expect(r.text).toBe("ok");
      }
    } finally {
      anon.close();
    }
  });
});

describe("routing", () => {
  it("an unknown resource in a served group-version → 404 Status with empty details", async () => {
    for (const path of ["/api/v1/foos", "/apis/apps/v1/namespaces/default/foos", "/api/v1/namespaces/default/secrets/x/nosuch"]) {
      const r = await t.api.get(path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "the server could not find the requested resource",
        reason: "NotFound",
        details: {},
        code: 404,
      });
    }
  });

  it("a path no group claims → 404 page not found (text)", async () => {
    for (const path of ["/apis/nope.example.com/v1/foos", "/nothing"]) {
      const r = await t.api.get(path);
      expect(r.status).toBe(404);
      expect(r.text).toBe("404 page not found");
    }
  });

  it("a cluster-scoped kind under a namespace → 404", async () => {
    const r = await t.api.get("/apis/scheduling.orch.io/v1/namespaces/default/priorityclasses");
    expect(r.status).toBe(404);
    expect(r.body.reason).toBe("NotFound");
  });

  it("a method the resource has no route for → 405", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("s"));
    const expected = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server does not allow this method on the requested resource",
      reason: "MethodNotAllowed",
      details: {},
      code: 405,
    };
    const put = await t.api.put(secrets(ns), secret("s"));
    expect(put.status).toBe(405);
    expect(put.body).toEqual(expected);
    const post = await t.api.post(`${secrets(ns)}/s`, secret("s"));
    expect(post.status).toBe(405);
    expect(post.body).toEqual(expected);
    const patch = await t.api.patch(secrets(ns), {});
    expect(patch.status).toBe(405);
    // Across all namespaces a namespaced kind can only be listed and watched.
    expect((await t.api.post("/api/v1/secrets", secret("s"))).status).toBe(405);
    expect((await t.api.delete("/api/v1/secrets")).status).toBe(405);
    expect((await t.api.get("/api/v1/secrets/s")).body.message).toBe("the server could not find the requested resource");
    // Subresources take get, update and patch only.
    expect((await t.api.delete(`/apis/apps/v1/namespaces/${ns}/deployments/x/status`)).status).toBe(405);
    expect((await t.api.get(`${secrets(ns)}/s`)).body.metadata.labels).toEqual({});
  });
});

describe("malformed requests", () => {
  it("malformed JSON → 400 naming the expected type; nothing stored", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.request("POST", secrets(ns), {
      raw: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"',
      contentType: "application/json",
    });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
    expect(r.body.message).toMatch(
      /^the object provided is unrecognized \(must be of type Secret\): couldn't get version\/kind; json parse error: .* \(\{"apiVersion":"v1","kind":"Sec \.\.\.\)$/,
    );
    expect((await t.api.get(secrets(ns))).body.items).toEqual([]);
  });

  it("malformed YAML → 400", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.request("POST", secrets(ns), { raw: "metadata: [unclosed\n  name: x", contentType: "application/yaml" });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
  });

  it("a wrong apiVersion → 400", async () => {
    const ns = await freshNamespace(t.api);
    const body = { ...deployment("v"), apiVersion: "apps/v1beta1" };
    const r = await t.api.post(deploys(ns), body);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)");
  });

  it("a wrong kind → 400 '<Kind> in version ... cannot be handled as a <Kind>'", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, secret("k"));
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Secret in version "v1" cannot be handled as a ServiceAccount: /);
  });

  it("a field of the wrong type → 400 and nothing stored", async () => {
    const ns = await freshNamespace(t.api);
    const body = deployment("typed") as any;
    body.spec.replicas = "three";
    const r = await t.api.post(deploys(ns), body);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Deployment in version "v1" cannot be handled as a Deployment: /);
    expect((await t.api.get(`${deploys(ns)}/typed`)).status).toBe(404);
  });

  it("a missing required field → 422 Required value at its path, not a decode error", async () => {
    // Go decodes an absent field as its zero value and validation reports it; orch does the same.
    const r = await t.api.post("/apis/certificates.orch.io/v1/certificatesigningrequests", {
      apiVersion: "certificates.orch.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "no-signer" },
      spec: { request: "", usages: ["client auth"] },
    });
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    expect(r.body.details.causes).toContainEqual({ reason: "FieldValueRequired", message: "Required value", field: "spec.signerName" });
    expect((await t.api.get("/apis/certificates.orch.io/v1/certificatesigningrequests/no-signer")).status).toBe(404);
  });

  it("a body over 3 MiB → 413", async () => {
    const ns = await freshNamespace(t.api);
    const big = JSON.stringify(secret("big", {}, { blob: "A".repeat(3 * 1024 * 1024) }));
    const r = await t.api.request("POST", secrets(ns), { raw: big });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({
      kind: "Status",
      reason: "RequestEntityTooLarge",
      message: "Request entity too large: limit is 3145728",
      code: 413,
    });
  });

  it("an unsupported request Content-Type → 415", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.request("POST", secrets(ns), { raw: "name=x", contentType: "text/plain" });
    expect(r.status).toBe(415);
    expect(r.body.reason).toBe("UnsupportedMediaType");
    expect(r.body.message).toMatch(
      /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml/,
    );
  });

  it("invalid write options → 422 <Verb>Options.meta.k8s.io", async () => {
    const ns = await freshNamespace(t.api);
    const fv = await t.api.post(`${secrets(ns)}?fieldValidation=Loose`, secret("o"));
    expect(fv.status).toBe(422);
    expect(fv.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
    );
    const dr = await t.api.post(`${secrets(ns)}?dryRun=Maybe`, secret("o"));
    expect(dr.status).toBe(422);
    expect(dr.body.message).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Maybe"]: supported values: "All"');
    expect((await t.api.get(`${secrets(ns)}/o`)).status).toBe(404);
  });
});

describe("fieldValidation", () => {
  const withUnknown = () => {
    const body = deployment("fv") as any;
    body.spec.foo = 1;
    body.spec.template.spec.containers[0].bar = true;
    return body;
  };

  it("Warn (the default): stored without the unknown fields, one Warning header each", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(deploys(ns), withUnknown());
    expect(r.status).toBe(201);
    // In document order, as Kubernetes' strict decoder reports them.
    expect(r.warnings).toEqual(['unknown field "spec.template.spec.containers[0].bar"', 'unknown field "spec.foo"']);
    expect(r.body.spec.foo).toBeUndefined();
    const explicit = await t.api.post(`${deploys(ns)}?fieldValidation=Warn`, { ...withUnknown(), metadata: { name: "fv2" } });
    expect(explicit.warnings).toContain('unknown field "spec.foo"');
  });

  it("Ignore: stored silently", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(`${deploys(ns)}?fieldValidation=Ignore`, withUnknown());
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([]);
    expect(r.headers.warning).toBeUndefined();
  });

  it("Strict: 400 listing every bad field, nothing stored", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(`${deploys(ns)}?fieldValidation=Strict`, withUnknown());
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      kind: "Status",
      reason: "BadRequest",
      message:
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].bar", unknown field "spec.foo"',
      code: 400,
    });
    expect((await t.api.get(`${deploys(ns)}/fv`)).status).toBe(404);
  });

  it("a duplicate field in JSON: a warning, or part of the Strict error", async () => {
    const ns = await freshNamespace(t.api);
    const raw = '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"dup","name":"dup"},"type":"Opaque"}';
    const warn = await t.api.request("POST", secrets(ns), { raw });
    expect(warn.status).toBe(201);
    expect(warn.warnings).toEqual(['duplicate field "metadata.name"']);
    const strict = await t.api.request("POST", `${secrets(ns)}?fieldValidation=Strict`, {
      raw: raw.replaceAll('"dup"', '"dup2"').replace('"type":"Opaque"', '"type":"Opaque","extra":1'),
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('duplicate field "metadata.name"');
    expect(strict.body.message).toContain('unknown field "extra"');
  });

  it("on update too", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("u"))).body;
    const body = structuredClone(created);
    body.spec.foo = 1;
    const warn = await t.api.put(`${deploys(ns)}/u`, body);
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual(['unknown field "spec.foo"']);
    const strict = await t.api.put(`${deploys(ns)}/u?fieldValidation=Strict`, {
      ...body,
      metadata: { ...body.metadata, resourceVersion: undefined },
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"',
    );
  });
});

describe("dryRun=All", () => {
  it("create: 201 with the would-be object (uid, creationTimestamp, no resourceVersion); nothing stored, no event", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.get(deploys(ns))).body.metadata.resourceVersion;
    const w = await t.api.watch(`${deploys(ns)}?resourceVersion=${rv}`);
    const r = await t.api.post(`${deploys(ns)}?dryRun=All`, deployment("dry"));
    expect(r.status).toBe(201);
    expect(r.body.metadata.uid).toBeTruthy();
    expect(r.body.metadata.creationTimestamp).toBeTruthy();
    expect(r.body.metadata.generation).toBe(1);
    expect(r.body.metadata.resourceVersion).toBeUndefined();
    expect((await t.api.get(`${deploys(ns)}/dry`)).status).toBe(404);
    // Validation still runs.
    const invalid = await t.api.post(`${deploys(ns)}?dryRun=All`, deployment("Not Valid"));
    expect(invalid.status).toBe(422);
    expect(await w.eventsBefore("marker", () => t.api.post(deploys(ns), deployment("marker")))).toEqual([]);
    w.close();
  });

  it("update and patch: 200 with the changed object, the stored one and its resourceVersion unchanged, no event", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("dry"))).body;
    const w = await t.api.watch(`${deploys(ns)}?resourceVersion=${created.metadata.resourceVersion}`);
    const body = structuredClone(created);
    body.spec.replicas = 5;
    const put = await t.api.put(`${deploys(ns)}/dry?dryRun=All`, body);
    expect(put.status).toBe(200);
    expect(put.body.spec.replicas).toBe(5);
    expect(put.body.metadata.generation).toBe(2);
    expect(put.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    const patch = await t.api.patch(`${deploys(ns)}/dry?dryRun=All`, { metadata: { labels: { dry: "run" } } });
    expect(patch.status).toBe(200);
    expect(patch.body.metadata.labels).toMatchObject({ dry: "run" });
    expect((await t.api.get(`${deploys(ns)}/dry`)).body).toEqual(created);
    expect(await w.eventsBefore("marker", () => t.api.post(deploys(ns), deployment("marker")))).toEqual([]);
    w.close();
  });
});

describe("namespaces", () => {
  it("default cannot be deleted (403)", async () => {
    const r = await t.api.delete("/api/v1/namespaces/default");
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      reason: "Forbidden",
      message: 'namespaces "default" is forbidden: this namespace may not be deleted',
    });
  });

  it("a Terminating namespace refuses new objects (403 NamespaceTerminating)", async () => {
    const ns = await freshNamespace(t.api);
    const hold = secret("held") as any;
    hold.metadata.finalizers = ["example.com/hold"];
    await t.api.post(secrets(ns), hold);
    const del = await t.api.delete(`/api/v1/namespaces/${ns}`);
    expect(del.status).toBe(200);
    expect(del.body.status.phase).toBe("Terminating");
    const r = await t.api.post(secrets(ns), secret("late"));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      reason: "Forbidden",
      message: `secrets "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
      details: {
        name: "late",
        kind: "secrets",
        causes: [{ reason: "NamespaceTerminating", message: `namespace ${ns} is being terminated`, field: "metadata.namespace" }],
      },
    });
    // Let the namespace go.
    await t.api.patch(`${secrets(ns)}/held`, { metadata: { finalizers: null } });
  });
});
