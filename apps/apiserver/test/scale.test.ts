// /scale: deployments, replica sets and replication controllers seen and changed as autoscaling/v1 Scale.
import { describe, expect, it } from "vitest";
import { deployment, freshNamespace, paths, useTestServer } from "./harness.js";

const t = useTestServer();
const scaleOf = (ns: string, name: string) => `${paths.deployments(ns)}/${name}/scale`;

describe("/scale", () => {
  it("reads a Deployment as a Scale", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(paths.deployments(ns), deployment("web", {}, 3))).body;
    const r = await t.api.get(scaleOf(ns, "web"));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name: "web",
        namespace: ns,
        uid: created.metadata.uid,
        resourceVersion: created.metadata.resourceVersion,
        creationTimestamp: created.metadata.creationTimestamp,
      },
      spec: { replicas: 3 },
      status: { replicas: 0, selector: "app=web" },
    });
  });

  it("changes spec.replicas through PUT and merge patch, bumping generation", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(paths.deployments(ns), deployment("web"));
    const put = await t.api.put(scaleOf(ns, "web"), {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "web" },
      spec: { replicas: 5 },
    });
    expect(put.status).toBe(200);
    expect(put.body.spec.replicas).toBe(5);
    const patched = await t.api.patch(scaleOf(ns, "web"), { spec: { replicas: 7 } }, "application/merge-patch+json");
    expect(patched.body.spec.replicas).toBe(7);
    const d = (await t.api.get(`${paths.deployments(ns)}/web`)).body;
    expect(d.spec.replicas).toBe(7);
    expect(d.metadata.generation).toBe(3);
    expect(patched.body.metadata.resourceVersion).toBe(d.metadata.resourceVersion);
  });

  it("honours the Scale's resourceVersion as a precondition", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(paths.deployments(ns), deployment("web"));
    const scale = (await t.api.get(scaleOf(ns, "web"))).body;
    await t.api.patch(scaleOf(ns, "web"), { spec: { replicas: 2 } }, "application/merge-patch+json");
    const stale = await t.api.put(scaleOf(ns, "web"), { ...scale, spec: { replicas: 9 } });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("Conflict");
    expect((await t.api.get(`${paths.deployments(ns)}/web`)).body.spec.replicas).toBe(2);
  });

  it("refuses negative replicas with 422 naming spec.replicas, and stores nothing", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(paths.deployments(ns), deployment("web"));
    const r = await t.api.patch(scaleOf(ns, "web"), { spec: { replicas: -1 } }, "application/merge-patch+json");
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    expect(r.body.details.causes).toEqual([
      { reason: "FieldValueInvalid", message: "Invalid value: -1: must be greater than or equal to 0", field: "spec.replicas" },
    ]);
    expect((await t.api.get(`${paths.deployments(ns)}/web`)).body.spec.replicas).toBe(1);
  });

  it("serves replica sets and replication controllers, with their selectors", async () => {
    const ns = await freshNamespace(t.api);
    const template = { metadata: { labels: { app: "x", tier: "a" } }, spec: { containers: [{ name: "c", image: "nginx" }] } };
    await t.api.post(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "rs" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "x" }, matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] },
        template,
      },
    });
    const rs = (await t.api.get(`/apis/apps/v1/namespaces/${ns}/replicasets/rs/scale`)).body;
    expect(rs.spec.replicas).toBe(2);
    expect(rs.status.selector).toBe("app=x,tier in (a,b)");
    await t.api.post(`/api/v1/namespaces/${ns}/replicationcontrollers`, {
      apiVersion: "v1",
      kind: "ReplicationController",
      metadata: { name: "rc" },
      spec: { replicas: 1, selector: { app: "x", tier: "a" }, template },
    });
    const rc = await t.api.patch(
      `/api/v1/namespaces/${ns}/replicationcontrollers/rc/scale`,
      { spec: { replicas: 4 } },
      "application/merge-patch+json",
    );
    expect(rc.body.spec.replicas).toBe(4);
    expect(rc.body.status.selector).toBe("app=x,tier=a");
  });

  it("is not served for kinds without it, nor for missing objects", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.get(`/api/v1/namespaces/${ns}/secrets/x/scale`)).status).toBe(404);
    const missing = await t.api.get(scaleOf(ns, "nope"));
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('deployments.apps "nope" not found');
  });

  it("is listed in discovery as autoscaling/v1 Scale", async () => {
    const r = await t.api.get("/apis/apps/v1");
    expect(r.body.resources).toContainEqual({
      name: "deployments/scale",
      singularName: "",
      namespaced: true,
      group: "autoscaling",
      version: "v1",
      kind: "Scale",
      verbs: ["get", "patch", "update"],
    });
  });
});
