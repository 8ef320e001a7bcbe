// PATCH with application/strategic-merge-patch+json: lists merge by the keys Kubernetes declares for
// them (containers and volumes by name, env by name, a ServiceAccount's secrets by name), directives
// apply, /status and /scale take it too, and custom resources refuse it with 415 as Kubernetes' do.
import { describe, expect, it } from "vitest";
import { type Client, deployment, freshNamespace, paths, useTestServer } from "./harness.js";

const t = useTestServer();
const SMP = "application/strategic-merge-patch+json";

async function withDeployment(spec: Record<string, unknown> = {}) {
  const ns = await freshNamespace(t.api);
  const body = deployment("web");
  Object.assign(body.spec.template.spec, spec);
  const created = await t.api.post(paths.deployments(ns), body);
  expect(created.status, created.text).toBe(201);
  return { ns, path: `${paths.deployments(ns)}/web`, created: created.body };
}

const podSpec = (r: { body: any }) => r.body.spec.template.spec;

describe("strategic merge patch on a Deployment", () => {
  it("adds a container by name instead of replacing the list, and changes one container in place", async () => {
    const { path } = await withDeployment({
      containers: [
        {
          name: "c",
          image: "nginx",
          env: [
            { name: "A", value: "1" },
            { name: "B", value: "2" },
          ],
        },
        { name: "side", image: "busybox" },
      ],
    });
    const r = await t.api.patch(
      path,
      {
        spec: {
          template: {
            spec: {
              "$setElementOrder/containers": [{ name: "c" }, { name: "side" }, { name: "log" }],
              containers: [
                {
                  name: "c",
                  image: "nginx:1.27",
                  env: [
                    { name: "B", value: "3" },
                    { name: "A", $patch: "delete" },
                  ],
                },
                { name: "log", image: "fluentd:v1" },
              ],
            },
          },
        },
      },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    expect(podSpec(r).containers.map((c: any) => [c.name, c.image])).toEqual([
      ["c", "nginx:1.27"],
      ["side", "busybox"],
      ["log", "fluentd:v1"],
    ]);
    expect(podSpec(r).containers[0].env).toEqual([{ name: "B", value: "3" }]);
    // Server defaults of the untouched container survive; the new one gets its own.
    expect(podSpec(r).containers[1].terminationMessagePath).toBe("/dev/termination-log");
    expect(podSpec(r).containers[2].imagePullPolicy).toBe("IfNotPresent");
    expect(r.body.metadata.generation).toBe(2);
  });

  it("deletes a container with $patch: delete and replaces the list with $patch: replace", async () => {
    const { path } = await withDeployment({
      containers: [
        { name: "c", image: "nginx" },
        { name: "side", image: "busybox" },
      ],
    });
    const deleted = await t.api.patch(path, { spec: { template: { spec: { containers: [{ name: "side", $patch: "delete" }] } } } }, SMP);
    expect(deleted.status, deleted.text).toBe(200);
    expect(podSpec(deleted).containers.map((c: any) => c.name)).toEqual(["c"]);
    const replaced = await t.api.patch(
      path,
      { spec: { template: { spec: { containers: [{ name: "only", image: "redis" }, { $patch: "replace" }] } } } },
      SMP,
    );
    expect(replaced.status, replaced.text).toBe(200);
    expect(podSpec(replaced).containers.map((c: any) => c.name)).toEqual(["only"]);
  });

  it("merges volumes by name; $retainKeys in a volume switches its source", async () => {
    const { path } = await withDeployment({
      volumes: [
        { name: "data", emptyDir: {} },
        { name: "cache", emptyDir: {} },
      ],
    });
    const r = await t.api.patch(
      path,
      {
        spec: {
          template: {
            spec: {
              volumes: [
                { name: "data", $retainKeys: ["name", "hostPath"], hostPath: { path: "/srv/data" } },
                { name: "tmp", emptyDir: { medium: "Memory" } },
              ],
            },
          },
        },
      },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    const volumes = Object.fromEntries(podSpec(r).volumes.map((v: any) => [v.name, v]));
    expect(Object.keys(volumes).sort()).toEqual(["cache", "data", "tmp"]);
    expect(volumes.data.emptyDir).toBeUndefined();
    expect(volumes.data.hostPath.path).toBe("/srv/data");
    expect(volumes.cache.emptyDir).toEqual({});
  });

  it("switches the strategy to Recreate with $retainKeys; without it rollingUpdate stays and the change is refused", async () => {
    const { path } = await withDeployment();
    const refused = await t.api.patch(path, { spec: { strategy: { type: "Recreate" } } }, SMP);
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain(
      "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    );
    const r = await t.api.patch(path, { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } }, SMP);
    expect(r.status, r.text).toBe(200);
    expect(r.body.spec.strategy).toEqual({ type: "Recreate" });
  });

  it("null deletes a field; labels merge as a map", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(paths.deployments(ns), deployment("web", { keep: "me", drop: "me" }));
    expect(created.status).toBe(201);
    const r = await t.api.patch(
      `${paths.deployments(ns)}/web`,
      { metadata: { labels: { drop: null, added: "yes" } }, spec: { minReadySeconds: 5 } },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.metadata.labels).toEqual({ keep: "me", added: "yes" });
    const cleared = await t.api.patch(`${paths.deployments(ns)}/web`, { spec: { minReadySeconds: null } }, SMP);
    expect(cleared.body.spec.minReadySeconds).toBeUndefined();
  });

  it("on /status merges conditions by type and leaves spec alone", async () => {
    const { path } = await withDeployment();
    const now = "2026-01-02T03:04:05Z";
    const condition = (type: string, status: string) => ({
      type,
      status,
      lastUpdateTime: now,
      lastTransitionTime: now,
      reason: "R",
      message: "m",
    });
    const first = await t.api.patch(`${path}/status`, { status: { conditions: [condition("Available", "False")] } }, SMP);
    expect(first.status, first.text).toBe(200);
    const second = await t.api.patch(
      `${path}/status`,
      { status: { replicas: 1, conditions: [condition("Progressing", "True")] }, spec: { replicas: 5 } },
      SMP,
    );
    expect(second.status, second.text).toBe(200);
    expect(second.body.status.conditions.map((c: any) => [c.type, c.status]).sort()).toEqual([
      ["Available", "False"],
      ["Progressing", "True"],
    ]);
    expect(second.body.status.replicas).toBe(1);
    expect(second.body.spec.replicas).toBe(1);
  });

  it("on /scale patches the Scale", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(`${path}/scale`, { spec: { replicas: 4 } }, SMP);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ kind: "Scale", spec: { replicas: 4 } });
    expect((await t.api.get(path)).body.spec.replicas).toBe(4);
  });
});

describe("strategic merge patch on a ServiceAccount", () => {
  it("merges secrets by name and replaces the atomic imagePullSecrets", async () => {
    const ns = await freshNamespace(t.api);
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const created = await t.api.post(base, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "robot" },
      secrets: [{ name: "one" }, { name: "two" }],
      imagePullSecrets: [{ name: "pull-a" }, { name: "pull-b" }],
    });
    expect(created.status, created.text).toBe(201);
    const r = await t.api.patch(
      `${base}/robot`,
      { secrets: [{ name: "three" }, { name: "one", $patch: "delete" }], imagePullSecrets: [{ name: "pull-c" }] },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.secrets.map((s: any) => s.name).sort()).toEqual(["three", "two"]);
    expect(r.body.imagePullSecrets).toEqual([{ name: "pull-c" }]);
  });
});

describe("malformed strategic merge patches", () => {
  it("an item without its merge key → 500 with Kubernetes' message; nothing changes", async () => {
    const { path, created } = await withDeployment();
    const r = await t.api.patch(path, { spec: { template: { spec: { containers: [{ image: "nginx:2" }] } } } }, SMP);
    expect(r.status).toBe(500);
    expect(r.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "map: map[image:nginx:2] does not contain declared merge key: name",
      code: 500,
    });
    expect((await t.api.get(path)).body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it("malformed JSON → 400 with encoding/json's message", async () => {
    const { path } = await withDeployment();
    const r = await t.api.request("PATCH", path, { raw: "{nope", contentType: SMP });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ reason: "BadRequest", message: "invalid character 'n' looking for beginning of object key string" });
  });

  it("a bad $retainKeys → 400", async () => {
    const { path } = await withDeployment();
    const r = await t.api.patch(
      path,
      { spec: { strategy: { $retainKeys: ["type"], type: "Recreate", rollingUpdate: { maxSurge: 1 } } } },
      SMP,
    );
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ reason: "BadRequest", message: "invalid patch format of retainKeys" });
  });

  it("an unknown field: a warning by default, 422 with fieldValidation=Strict", async () => {
    const { path } = await withDeployment();
    const warn = await t.api.patch(path, { spec: { foo: 1 } }, SMP);
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual(['unknown field "spec.foo"']);
    const strict = await t.api.patch(`${path}?fieldValidation=Strict`, { spec: { foo: 1 } }, SMP);
    expect(strict.status).toBe(422);
  });
});

describe("custom resources", () => {
  const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";

  async function defineWidgets(api: Client, group: string) {
    const schema = {
      type: "object",
      properties: { spec: { type: "object", properties: { items: { type: "array", items: { type: "string" } } } } },
    };
    const crd = {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema }, subresources: { status: {} } }],
      },
    };
    expect((await api.post(CRDS, crd)).status).toBe(201);
    const stored = (await api.get(`${CRDS}/widgets.${group}`)).body;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    stored.status = {
      acceptedNames: stored.spec.names,
      conditions: [
        { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found", lastTransitionTime: now },
        {
          type: "Established",
          status: "True",
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted",
          lastTransitionTime: now,
        },
      ],
    };
    expect((await api.put(`${CRDS}/widgets.${group}/status`, stored)).status).toBe(200);
  }

  it("refuse strategic merge patches with 415 naming the types they take; merge patches work", async () => {
    const group = "smp.example.com";
    await defineWidgets(t.api, group);
    const ns = await freshNamespace(t.api);
    const base = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    const created = await t.api.post(base, { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w" }, spec: { items: ["a"] } });
    expect(created.status, created.text).toBe(201);
    for (const path of [`${base}/w`, `${base}/w/status`]) {
      const r = await t.api.patch(path, { spec: { items: ["b"] } }, SMP);
      expect(r.status).toBe(415);
      expect(r.body.reason).toBe("UnsupportedMediaType");
      expect(r.body.message).toBe(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
      );
    }
    const merged = await t.api.patch(`${base}/w`, { spec: { items: ["b"] } });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body.spec.items).toEqual(["b"]);
  });
});
