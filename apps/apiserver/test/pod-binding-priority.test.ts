// pods/binding (and the legacy bindings collection) and pod priority at admission, over HTTP, with
// Kubernetes' codes and messages (BindingREST; the Priority admission plugin).
import { describe, expect, it } from "vitest";
import { freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();

const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const PCS = "/apis/scheduling.orch.io/v1/priorityclasses";
const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, ...metadata },
  spec: { containers: [{ name: "c", image: "busybox" }], ...spec },
});
const binding = (name: string, node: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Binding",
  metadata: { name, ...metadata },
  target: { apiVersion: "v1", kind: "Node", name: node },
});
const pc = (name: string, value: number, more: Record<string, unknown> = {}) => ({
  apiVersion: "scheduling.orch.io/v1",
  kind: "PriorityClass",
  metadata: { name },
  value,
  ...more,
});

describe("pods/binding", () => {
  it("binds a pending pod: nodeName, PodScheduled=True, the binding's annotations; 201 Success", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(pods(ns), pod("web"));
    const r = await t.api.post(`${pods(ns)}/web/binding`, binding("web", "node-a", { annotations: { "example.com/why": "test" } }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ kind: "Status", status: "Success", code: 201 });
    const got = (await t.api.get(`${pods(ns)}/web`)).body;
    expect(got.spec.nodeName).toBe("node-a");
    expect(got.metadata.annotations).toEqual({ "example.com/why": "test" });
    expect(got.status.conditions).toEqual([
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: expect.any(String) },
    ]);
  });

  it("a pod already bound → 409 Conflict on pods/binding, as Kubernetes words it", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(pods(ns), pod("web"));
    expect((await t.api.post(`${pods(ns)}/web/binding`, binding("web", "node-a"))).status).toBe(201);
    const again = await t.api.post(`${pods(ns)}/web/binding`, binding("web", "node-b"));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      reason: "Conflict",
      message: 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-a"',
      details: { name: "web", kind: "pods/binding" },
    });
    expect((await t.api.get(`${pods(ns)}/web`)).body.spec.nodeName).toBe("node-a");
  });

  it("the legacy POST .../bindings binds the pod the body names", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(pods(ns), pod("legacy"));
    const r = await t.api.post(`/api/v1/namespaces/${ns}/bindings`, binding("legacy", "node-c"));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((await t.api.get(`${pods(ns)}/legacy`)).body.spec.nodeName).toBe("node-c");
    expect((await t.api.get(`/api/v1/namespaces/${ns}/bindings`)).status).toBe(405);
  });

  it("a pod being deleted, a missing pod, a mismatched name, a stale uid, a missing target", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(pods(ns), pod("going", {}, { finalizers: ["example.com/hold"] }));
    await t.api.delete(`${pods(ns)}/going`);
    const going = await t.api.post(`${pods(ns)}/going/binding`, binding("going", "node-a"));
    expect(going.status).toBe(409);
    expect(going.body.message).toBe(
      'Operation cannot be fulfilled on pods/binding "going": pod going is being deleted, cannot be assigned to a host',
    );

    const missing = await t.api.post(`${pods(ns)}/nobody/binding`, binding("nobody", "node-a"));
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('pods "nobody" not found');

    await t.api.post(pods(ns), pod("web"));
    const mismatch = await t.api.post(`${pods(ns)}/web/binding`, binding("other", "node-a"));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toBe("name in URL does not match name in Binding object");

    const stale = await t.api.post(`${pods(ns)}/web/binding`, binding("web", "node-a", { uid: "00000000-0000-0000-0000-000000000000" }));
    expect(stale.status).toBe(409);
    expect(stale.body.message).toMatch(
      /Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: /,
    );

    const noTarget = await t.api.post(`${pods(ns)}/web/binding`, {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "web" },
      target: {},
    });
    expect(noTarget.status).toBe(500);
    expect(noTarget.body.message).toBe("target.name: Required value");
    expect((await t.api.get(`${pods(ns)}/web`)).body.spec.nodeName).toBeUndefined();

    // Finalizer released: the pod goes.
    await t.api.patch(`${pods(ns)}/going`, { metadata: { finalizers: null } });
  });

  it("discovery lists pods/binding and bindings as create-only", async () => {
    const r = await t.api.get("/api/v1");
    const byName = (n: string) => r.body.resources.find((x: any) => x.name === n);
    expect(byName("pods/binding")).toMatchObject({ kind: "Binding", namespaced: true, verbs: ["create"] });
    expect(byName("bindings")).toMatchObject({ kind: "Binding", namespaced: true, verbs: ["create"] });
  });
});

describe("pod priority at admission", () => {
  it("no class and no default: priority 0, no class name, no policy", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(pods(ns), pod("plain"));
    expect(r.status).toBe(201);
    expect(r.body.spec.priority).toBe(0);
    expect(r.body.spec.priorityClassName).toBeUndefined();
    expect(r.body.spec.preemptionPolicy).toBeUndefined();
  });

  it("a named class gives its value and preemption policy", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(PCS, pc("batch-low", 100, { preemptionPolicy: "Never" }))).status).toBe(201);
    const r = await t.api.post(pods(ns), pod("batch", { priorityClassName: "batch-low" }));
    expect(r.status).toBe(201);
    expect(r.body.spec).toMatchObject({ priorityClassName: "batch-low", priority: 100, preemptionPolicy: "Never" });
    // An update that leaves them out keeps them.
    const { priority: _p, preemptionPolicy: _pp, ...spec } = r.body.spec;
    const put = await t.api.put(`${pods(ns)}/batch`, { ...r.body, spec });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.spec).toMatchObject({ priority: 100, preemptionPolicy: "Never" });
  });

  it("the global default class applies to pods without a class", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(PCS, pc("everyone", 1000, { globalDefault: true }))).status).toBe(201);
    try {
      const r = await t.api.post(pods(ns), pod("defaulted"));
      expect(r.status).toBe(201);
      expect(r.body.spec).toMatchObject({ priorityClassName: "everyone", priority: 1000, preemptionPolicy: "PreemptLowerPriority" });
    } finally {
      await t.api.delete(`${PCS}/everyone`);
    }
  });

  it("an unknown class → 403 no PriorityClass with name X was found; nothing stored", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(pods(ns), pod("lost", { priorityClassName: "nope" }));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      reason: "Forbidden",
      message: 'pods "lost" is forbidden: no PriorityClass with name nope was found',
      details: { name: "lost", kind: "pods" },
    });
    expect((await t.api.get(`${pods(ns)}/lost`)).status).toBe(404);
    const generated = await t.api.post(pods(ns), {
      ...pod(""),
      metadata: { generateName: "gen-" },
      spec: { ...pod("").spec, priorityClassName: "nope" },
    });
    expect(generated.body.message).toBe('pods "gen-" is forbidden: no PriorityClass with name nope was found');
  });

  it("a priority that disagrees with the class → 403; one that agrees is accepted", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(pods(ns), pod("liar", { priorityClassName: "system-cluster-critical", priority: 5 }));
    expect(r.status).toBe(403);
    expect(r.body.message).toBe(
      'pods "liar" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 2000000000 from the given PriorityClass name',
    );
    const policy = await t.api.post(pods(ns), pod("policy", { priorityClassName: "system-cluster-critical", preemptionPolicy: "Never" }));
    expect(policy.status).toBe(403);
    expect(policy.body.message).toBe(
      'pods "policy" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name',
    );
    const honest = await t.api.post(pods(ns), pod("honest", { priorityClassName: "system-cluster-critical", priority: 2000000000 }));
    expect(honest.status).toBe(201);
  });
});
