// Server-side apply and managedFields through the HTTP API: every write records its manager; apply
// merges, conflicts, forces, creates, works on /status, honours dryRun and fieldValidation.
import { describe, expect, it } from "vitest";
import { RFC3339, deployment, freshNamespace, paths, useTestServer } from "./harness.js";

const t = useTestServer();
const APPLY = "application/apply-patch+yaml";

const apply = (path: string, body: unknown, query: string) =>
  t.api.request("PATCH", query ? `${path}?${query}` : path, { body, contentType: APPLY });
const managers = (o: any) => (o.metadata.managedFields ?? []).map((e: any) => [e.manager, e.operation, e.subresource ?? ""]);
const fieldsOf = (o: any, manager: string) => o.metadata.managedFields.find((e: any) => e.manager === manager)?.fieldsV1;

function config(name: string, replicas: number, image = "nginx:1.25") {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image }] } },
    },
  };
}

describe("managedFields on every write", () => {
  it("records create, update and patch as Update entries of their field managers", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(`${paths.deployments(ns)}?fieldManager=creator`, deployment("d"));
    expect(created.status).toBe(201);
    expect(created.body.metadata.managedFields).toEqual([
      {
        manager: "creator",
        operation: "Update",
        apiVersion: "apps/v1",
        time: expect.stringMatching(RFC3339),
        fieldsType: "FieldsV1",
        fieldsV1: expect.objectContaining({ "f:spec": expect.objectContaining({ "f:replicas": {} }) }),
      },
    ]);
    const path = `${paths.deployments(ns)}/d`;
    const updated = await t.api.put(`${path}?fieldManager=editor`, { ...created.body, spec: { ...created.body.spec, replicas: 4 } });
    expect(updated.status).toBe(200);
    expect(managers(updated.body)).toEqual([
      ["creator", "Update", ""],
      ["editor", "Update", ""],
    ]);
    expect(fieldsOf(updated.body, "editor")).toEqual({ "f:spec": { "f:replicas": {} } });
    expect(JSON.stringify(fieldsOf(updated.body, "creator"))).not.toContain("f:replicas");

    // Without a fieldManager the user agent's first segment names the manager.
    const patched = await t.api.request("PATCH", path, {
      body: { metadata: { labels: { tier: "web" } } },
      contentType: "application/merge-patch+json",
      headers: { "User-Agent": "labeller/1.0 (linux)" },
    });
    expect(fieldsOf(patched.body, "labeller")).toEqual({ "f:metadata": { "f:labels": { "f:tier": {} } } });
  });

  it("clears managedFields on [{}] and records /status and /scale writes with their subresource", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/d`;
    const created = (await t.api.post(`${paths.deployments(ns)}?fieldManager=creator`, deployment("d"))).body;
    const status = await t.api.put(`${path}/status?fieldManager=controller`, { ...created, status: { replicas: 1 } });
    expect(status.status).toBe(200);
    expect(managers(status.body)).toContainEqual(["controller", "Update", "status"]);
    expect(fieldsOf(status.body, "controller")).toEqual({ "f:status": { ".": {}, "f:replicas": {} } });
    const scaled = await t.api.patch(`${path}/scale?fieldManager=autoscaler`, { spec: { replicas: 3 } });
    expect(scaled.status).toBe(200);
    const after = (await t.api.get(path)).body;
    expect(managers(after)).toContainEqual(["autoscaler", "Update", "scale"]);
    expect(fieldsOf(after, "autoscaler")).toEqual({ "f:spec": { "f:replicas": {} } });
    const cleared = await t.api.patch(path, { metadata: { managedFields: [{}] } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.metadata.managedFields).toBeUndefined();
  });
});

describe("server-side apply", () => {
  it("creates a missing object (201) and applies changes to it (200)", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    const created = await apply(path, config("web", 2), "fieldManager=ci");
    expect(created.status).toBe(201);
    expect(created.body.spec.replicas).toBe(2);
    expect(managers(created.body)).toEqual([["ci", "Apply", ""]]);
    const changed = await apply(path, config("web", 3), "fieldManager=ci");
    expect(changed.status).toBe(200);
    expect(changed.body.spec.replicas).toBe(3);
    expect(changed.body.metadata.generation).toBe(2);
  });

  it("accepts YAML", async () => {
    const ns = await freshNamespace(t.api);
    const yaml = ["apiVersion: v1", "kind: Secret", "metadata:", "  name: settings", "type: Opaque", "data:", "  mode: ZmFzdA=="].join(
      "\n",
    );
    const r = await t.api.request("PATCH", `${paths.secrets(ns)}/settings?fieldManager=ci`, { raw: yaml, contentType: APPLY });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ mode: "ZmFzdA==" });
    expect(fieldsOf(r.body, "ci")).toEqual({ "f:data": { "f:mode": {} }, "f:type": {} });
  });

  it("refuses another manager's field at another value with Kubernetes' 409, and takes it with force", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    await apply(path, config("web", 2), "fieldManager=ci");
    const conflict = await apply(
      path,
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 5 } },
      "fieldManager=ops",
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'Apply failed with 1 conflict: conflict with "ci": .spec.replicas',
      reason: "Conflict",
      details: { causes: [{ reason: "FieldManagerConflict", message: 'conflict with "ci"', field: ".spec.replicas" }] },
      code: 409,
    });
    const forced = await apply(
      path,
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 5 } },
      "fieldManager=ops&force=true",
    );
    expect(forced.status).toBe(200);
    expect(forced.body.spec.replicas).toBe(5);
    expect(fieldsOf(forced.body, "ops")).toEqual({ "f:spec": { "f:replicas": {} } });
    expect(JSON.stringify(fieldsOf(forced.body, "ci"))).not.toContain("f:replicas");
  });

  it("names an Update manager and its version in a conflict", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(`${paths.deployments(ns)}?fieldManager=kubectl-create`, deployment("d"));
    const r = await apply(
      `${paths.deployments(ns)}/d`,
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { replicas: 7 } },
      "fieldManager=ci",
    );
    expect(r.status).toBe(409);
    expect(r.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas');
  });

  it("removes what the applier stopped applying", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    const labelled = config("web", 1);
    (labelled.metadata as any).labels = { team: "a", tier: "web" };
    await apply(path, labelled, "fieldManager=ci");
    const r = await apply(path, { ...config("web", 1), metadata: { name: "web", labels: { team: "a" } } }, "fieldManager=ci");
    expect(r.body.metadata.labels).toEqual({ team: "a" });
  });

  it("applies status through /status, owned with the subresource", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    await apply(path, config("web", 1), "fieldManager=ci");
    const r = await apply(
      `${path}/status`,
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, status: { replicas: 1, readyReplicas: 1 } },
      "fieldManager=reporter",
    );
    expect(r.status).toBe(200);
    expect(r.body.status).toMatchObject({ replicas: 1, readyReplicas: 1 });
    expect(managers(r.body)).toContainEqual(["reporter", "Apply", "status"]);
    expect(fieldsOf(r.body, "reporter")).toEqual({ "f:status": { "f:readyReplicas": {}, "f:replicas": {} } });
    // The main endpoint ignores status in an apply.
    const main = await apply(path, { ...config("web", 1), status: { replicas: 9 } }, "fieldManager=ci");
    expect(main.body.status.replicas).toBe(1);
    expect(fieldsOf(main.body, "ci")["f:status"]).toBeUndefined();
  });

  it("writes nothing on dryRun", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    const dry = await apply(path, config("web", 2), "fieldManager=ci&dryRun=All");
    expect(dry.status).toBe(201);
    expect(dry.body.metadata.managedFields).toHaveLength(1);
    expect((await t.api.get(path)).status).toBe(404);
  });

  it("requires a fieldManager and refuses force on other patches, as Kubernetes' PatchOptions validation", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    const missing = await apply(path, config("web", 1), "");
    expect(missing.status).toBe(422);
    expect(missing.body.message).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const long = await apply(path, config("web", 1), `fieldManager=${"m".repeat(129)}`);
    expect(long.status).toBe(422);
    expect(long.body.details.causes[0]).toMatchObject({ reason: "FieldValueTooLong", field: "fieldManager" });
    await t.api.post(paths.deployments(ns), deployment("web"));
    const force = await t.api.request("PATCH", `${path}?force=true`, { body: {}, contentType: "application/merge-patch+json" });
    expect(force.status).toBe(422);
    expect(force.body.message).toBe('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  });

  it("follows fieldValidation: Strict refuses unknown and duplicate fields, Warn warns", async () => {
    const ns = await freshNamespace(t.api);
    const path = `${paths.deployments(ns)}/web`;
    const unknown = { ...config("web", 1), spec: { ...config("web", 1).spec, bogus: 1 } };
    const strict = await apply(path, unknown, "fieldManager=ci&fieldValidation=Strict");
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('strict decoding error: unknown field "spec.bogus"');
    const yaml = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\ntype: Opaque\ntype: Opaque\n";
    const dup = await t.api.request("PATCH", `${paths.secrets(ns)}/c?fieldManager=ci&fieldValidation=Strict`, {
      raw: yaml,
      contentType: APPLY,
    });
    expect(dup.status).toBe(400);
    expect(dup.body.message).toContain("error strict decoding patch");
    const warned = await apply(path, unknown, "fieldManager=ci&fieldValidation=Warn");
    expect(warned.status).toBe(201);
    expect(warned.warnings).toContain('unknown field "spec.bogus"');
  });

  it("refuses a configuration of another kind", async () => {
    const ns = await freshNamespace(t.api);
    const r = await apply(
      `${paths.deployments(ns)}/web`,
      { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "web" } },
      "fieldManager=ci",
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("invalid object type: apps/v1, Kind=StatefulSet");
  });
});
