// What the controllers tell users, with the controller as a real process: the Events Kubernetes'
// deployment and replicaset controllers record (ScalingReplicaSet, SuccessfulCreate, SuccessfulDelete,
// FailedCreate), and status.terminatingReplicas while pods are being deleted.
import type { Deployment, Event, Pod, ReplicaSet } from "@orch/api";
import type { ResourceRef } from "@orch/client";
import { describe, expect, it } from "vitest";
import {
  activePods,
  deployment,
  deployments,
  freshNamespace,
  markAllReady,
  pods,
  replicaSetsOf,
  replicaSets,
  useCluster,
  waitFor,
} from "./cluster.js";

const c = useCluster();
const events: ResourceRef = { group: "", version: "v1", plural: "events", namespaced: true };
const webhooks: ResourceRef = {
  group: "admissionregistration.orch.io",
  version: "v1",
  plural: "validatingwebhookconfigurations",
  namespaced: false,
};

/** `reason: message` of the events about one object, oldest first. */
async function eventsOf(ns: string, kind: string, name: string): Promise<Event[]> {
  const list = await c.client.list<Event>(events, {
    namespace: ns,
    fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}`,
  });
  return list.items.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}
const lines = (es: Event[]) => es.map((e) => `${e.type} ${e.reason}: ${e.message}`);

describe("deployment-controller: events", () => {
  it("records scaling on the Deployment and pod creations and deletions on the ReplicaSet, from Kubernetes' components", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("web", 3), { namespace: ns });
    const [rs] = await waitFor("one replica set", async () => {
      const rss = await replicaSetsOf(c.client, ns);
      return rss.length === 1 ? rss : undefined;
    });
    const rsName = rs!.metadata.name ?? "";
    const created = await waitFor("3 pods", async () => {
      const ps = await activePods(c.client, ns);
      return ps.length === 3 ? ps : undefined;
    });

    const onDeployment = await waitFor("the scaling event", async () => {
      const es = await eventsOf(ns, "Deployment", "web");
      return es.length === 1 ? es : undefined;
    });
    expect(lines(onDeployment)).toEqual([`Normal ScalingReplicaSet: Scaled up replica set ${rsName} from 0 to 3`]);
    expect(onDeployment[0]).toMatchObject({
      source: { component: "deployment-controller" },
      involvedObject: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: ns },
      count: 1,
    });
    const onReplicaSet = await waitFor("3 creation events", async () => {
      const es = await eventsOf(ns, "ReplicaSet", rsName);
      return es.length === 3 ? es : undefined;
    });
    expect(lines(onReplicaSet).sort()).toEqual(created.map((p) => `Normal SuccessfulCreate: Created pod: ${p.metadata.name}`).sort());
    expect(onReplicaSet.every((e) => e.source.component === "replicaset-controller" && e.involvedObject.uid === rs!.metadata.uid)).toBe(
      true,
    );

    await markAllReady(c.client, ns);
    await c.client.patch(deployments, "web", { spec: { replicas: 1 } }, { namespace: ns });
    const scaledDown = await waitFor("the scale-down event", async () => {
      const es = await eventsOf(ns, "Deployment", "web");
      return es.length === 2 ? es : undefined;
    });
    expect(lines(scaledDown)[1]).toBe(`Normal ScalingReplicaSet: Scaled down replica set ${rsName} from 3 to 1`);
    const deletions = await waitFor("2 deletion events", async () => {
      const es = (await eventsOf(ns, "ReplicaSet", rsName)).filter((e) => e.reason === "SuccessfulDelete");
      return es.length === 2 ? es : undefined;
    });
    const left = new Set((await activePods(c.client, ns)).map((p) => p.metadata.name));
    const deleted = created.map((p) => p.metadata.name ?? "").filter((n) => !left.has(n));
    expect(lines(deletions).sort()).toEqual(deleted.map((n) => `Normal SuccessfulDelete: Deleted pod: ${n}`).sort());
  });

  it("records FailedCreate (a Warning) on a ReplicaSet whose pods are refused, counting the repeats on one event", async () => {
    const ns = await freshNamespace(c.client);
    // A webhook nobody serves, failing closed, for this namespace's pods: every pod creation is refused.
    await c.client.create(webhooks, {
      apiVersion: "admissionregistration.orch.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: `refuse-pods-${ns}` },
      webhooks: [
        {
          name: "refuse.example.com",
          clientConfig: { url: "https://127.0.0.1:1/refuse" },
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    });
    await c.client.create<Deployment>(deployments, deployment("refused", 2), { namespace: ns });
    const [rs] = await waitFor("one replica set", async () => {
      const rss = await replicaSetsOf(c.client, ns);
      return rss.length === 1 ? rss : undefined;
    });
    const failed = await waitFor(
      "a repeated FailedCreate",
      async () => {
        const es = (await eventsOf(ns, "ReplicaSet", rs!.metadata.name ?? "")).filter((e) => e.reason === "FailedCreate");
        return es.length === 1 && (es[0]!.count ?? 0) >= 2 ? es[0] : undefined;
      },
      30_000,
      c.controller,
    );
    expect(failed.type).toBe("Warning");
    expect(failed.message).toMatch(/^Error creating: .*refuse\.example\.com/);
    expect(Date.parse(failed.lastTimestamp ?? "")).toBeGreaterThanOrEqual(Date.parse(failed.firstTimestamp ?? ""));
    const status = (await c.client.get<ReplicaSet>(replicaSets, rs!.metadata.name ?? "", { namespace: ns })).status;
    expect(status?.conditions?.find((x) => x.type === "ReplicaFailure")).toMatchObject({ status: "True", reason: "FailedCreate" });
    await c.client.delete(webhooks, `refuse-pods-${ns}`);
  });

  it("status.terminatingReplicas counts pods being deleted until they are gone, on the ReplicaSet and the Deployment", async () => {
    const ns = await freshNamespace(c.client);
    // A finalizer keeps a deleted pod terminating, as a node agent does during the grace period.
    const held = deployment("held", 3);
    held.spec.template.metadata = { ...held.spec.template.metadata, finalizers: ["example.com/hold"] };
    await c.client.create<Deployment>(deployments, held, { namespace: ns });
    await waitFor("3 pods", async () => (await activePods(c.client, ns)).length === 3);
    await markAllReady(c.client, ns);
    await waitFor("terminatingReplicas 0", async () => {
      const d = await c.client.get<Deployment>(deployments, "held", { namespace: ns });
      return d.status?.availableReplicas === 3 && d.status.terminatingReplicas === 0;
    });

    await c.client.patch(deployments, "held", { spec: { replicas: 1 } }, { namespace: ns });
    const d = await waitFor(
      "2 terminating",
      async () => {
        const d = await c.client.get<Deployment>(deployments, "held", { namespace: ns });
        return d.status?.terminatingReplicas === 2 && d.status.replicas === 1 ? d : undefined;
      },
      20_000,
      c.controller,
    );
    expect(d.status).toMatchObject({ replicas: 1, availableReplicas: 1, terminatingReplicas: 2 });
    const [rs] = await replicaSetsOf(c.client, ns);
    expect(rs!.status).toMatchObject({ replicas: 1, terminatingReplicas: 2 });

    // The finalizers go: the pods are removed, and nothing is terminating any more.
    const all = (await c.client.list<Pod>(pods, { namespace: ns })).items;
    for (const pod of all.filter((p) => p.metadata.deletionTimestamp)) {
      await c.client.patch(pods, pod.metadata.name ?? "", { metadata: { finalizers: null } }, { namespace: ns });
    }
    await waitFor("0 terminating", async () => {
      const now = await c.client.get<Deployment>(deployments, "held", { namespace: ns });
      return now.status?.terminatingReplicas === 0;
    });
    const [after] = await replicaSetsOf(c.client, ns);
    expect(after!.status?.terminatingReplicas).toBe(0);
  });
});
