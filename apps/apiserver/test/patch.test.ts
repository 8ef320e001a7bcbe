// PATCH: JSON merge patch and JSON patch (strategic merge and apply have test files of their own).
import { describe, expect, it } from "vitest";
import { deployment, freshNamespace, useTestServer, paths } from "./harness.js";

const t = useTestServer();

const deploys = paths.deployments;
const JSON_PATCH = "application/json-patch+json";

async function withDeployment(name = "p") {
  const ns = await freshNamespace(t.api);
  const created = (await t.api.post(deploys(ns), deployment(name, { keep: "me", drop: "me" }))).body;
  return { ns, created, path: `${deploys(ns)}/${name}` };
}

describe("merge patch", () => {
  it("merges maps, removes keys set to null, replaces lists; spec changes bump generation", async () => {
    const { path, created } = await withDeployment();
    const r = await t.api.patch(path, {
      metadata: { labels: { added: "yes", drop: null } },
      spec: { replicas: 3, template: { spec: { containers: [{ name: "c", image: "nginx:2" }] } } },
    });
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ keep: "me", added: "yes" });
    expect(r.body.spec.replicas).toBe(3);
    expect(r.body.spec.template.spec.containers.map((c: any) => c.image)).toEqual(["nginx:2"]);
    expect(r.body.metadata.generation).toBe(2);
    expect(r.body.metadata.uid).toBe(created.metadata.uid);
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect((await t.api.get(path)).body).toEqual(r.body);
  });

  it("a label patch keeps generation; a Deployment's annotations bump it, as Kubernetes'", async () => {
    const { path } = await withDeployment();
    const labels = await t.api.patch(path, { metadata: { labels: { note: "x" } } });
    expect(labels.status).toBe(200);
    expect(labels.body.metadata.generation).toBe(1);
    const annotations = await t.api.patch(path, { metadata: { annotations: { note: "x" } } });
    expect(annotations.body.metadata.generation).toBe(2);
  });

  it("concurrent patches without a resourceVersion all apply (the server retries)", async () => {
    const { path } = await withDeployment();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.api.patch(path, { metadata: { labels: { [`k${i}`]: "v" } } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const labels = (await t.api.get(path)).body.metadata.labels;
    for (let i = 0; i < 10; i++) expect(labels[`k${i}`]).toBe("v");
  });

  it("a uid in the patch that is not the object's → 409", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(path, { metadata: { uid: "00000000-0000-0000-0000-000000000001" } });
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe("Conflict");
  });

  it("metadata.resourceVersion in the patch is a precondition", async () => {
    const { path, created } = await withDeployment();
    const ok = await t.api.patch(path, { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { a: "1" } } });
    expect(ok.status).toBe(200);
    const stale = await t.api.patch(path, { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { a: "2" } } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on deployments.apps "p": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect((await t.api.get(path)).body.metadata.labels.a).toBe("1");
  });

  it("of a missing object → 404", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.patch(`${deploys(ns)}/ghost`, { metadata: { labels: { a: "b" } } });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ reason: "NotFound", message: 'deployments.apps "ghost" not found' });
  });

  it("malformed JSON → 400", async () => {
    const { path } = await withDeployment();
    const r = await t.api.request("PATCH", path, { raw: "{nope", contentType: "application/merge-patch+json" });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
  });

  it("changing the name through a patch → 400", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(path, { metadata: { name: "other" } });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("the name of the object (other) does not match the name on the URL (p)");
  });

  it("on /status changes only status", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(`${path}/status`, { status: { replicas: 1, readyReplicas: 1 }, spec: { replicas: 9 } });
    expect(r.status).toBe(200);
    expect(r.body.status).toMatchObject({ replicas: 1, readyReplicas: 1 });
    expect(r.body.spec.replicas).toBe(1);
    // ...and the main endpoint ignores status.
    const main = await t.api.patch(path, { status: { replicas: 7 } });
    expect(main.status).toBe(200);
    expect(main.body.status.replicas).toBe(1);
  });

  it("an unknown field: a warning by default, 422 with fieldValidation=Strict", async () => {
    const { path } = await withDeployment();
    const warn = await t.api.patch(path, { spec: { foo: 1 } });
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual(['unknown field "spec.foo"']);
    expect(warn.body.spec.foo).toBeUndefined();
    const strict = await t.api.patch(`${path}?fieldValidation=Strict`, { spec: { foo: 1 } });
    expect(strict.status).toBe(422);
    expect(strict.body.reason).toBe("Invalid");
    expect(strict.body.message).toMatch(/^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.foo"$/);
    expect(strict.body.details.causes).toEqual([expect.objectContaining({ reason: "FieldValueInvalid", field: "patch" })]);
  });
});

describe("JSON patch", () => {
  it("applies add, replace, remove and a passing test", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(
      path,
      [
        { op: "test", path: "/spec/replicas", value: 1 },
        { op: "replace", path: "/spec/replicas", value: 2 },
        { op: "add", path: "/metadata/labels/new", value: "v" },
        { op: "remove", path: "/metadata/labels/drop" },
      ],
      JSON_PATCH,
    );
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(2);
    expect(r.body.metadata.labels).toEqual({ keep: "me", new: "v" });
  });

  it("a failing test → 422 with Kubernetes' generic message; nothing changes", async () => {
    const { path, created } = await withDeployment();
    const r = await t.api.patch(
      path,
      [
        { op: "test", path: "/spec/replicas", value: 5 },
        { op: "replace", path: "/spec/replicas", value: 2 },
      ],
      JSON_PATCH,
    );
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server rejected our request due to an error in our request",
      reason: "Invalid",
      details: {},
      code: 422,
    });
    expect((await t.api.get(path)).body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it("removing a missing path → 422", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(path, [{ op: "remove", path: "/metadata/labels/absent" }], JSON_PATCH);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe("Invalid");
  });

  it("a body that is not a list of operations → 400", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(path, { op: "replace" }, JSON_PATCH);
    expect(r.status).toBe(400);
  });
});

describe("other patch types", () => {
  it("an unknown patch type → 415 naming the accepted types", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(path, { metadata: { labels: { a: "b" } } }, "application/json");
    expect(r.status).toBe(415);
    expect(r.body.reason).toBe("UnsupportedMediaType");
    expect(r.body.message).toBe(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml",
    );
  });
});
