// ReplicationControllers (and bare ReplicaSets) end to end: the same pod-managing code behind two kinds.
import type { Pod, ReplicaSet, ReplicationController } from "@orch/api";
import { describe, expect, it } from "vitest";
import {
  activePods,
  freshNamespace,
  isReady,
  markReady,
  ownerUid,
  pods,
  replicaSets,
  replicationController,
  replicationControllers,
  useCluster,
  waitFor,
} from "./cluster.js";

const c = useCluster();

describe("deployment-controller: ReplicationControllers and ReplicaSets", () => {
  it("an RC keeps N pods: it replaces a deleted one and reports ready and available replicas", async () => {
    const ns = await freshNamespace(c.client);
    const rc = await c.client.create<ReplicationController>(replicationControllers, replicationController("keeper", 3), { namespace: ns });
    const first = await waitFor(
      "3 pods",
      async () => {
        const ps = await activePods(c.client, ns);
        return ps.length === 3 ? ps : undefined;
      },
      20_000,
      c.controller,
    );
    for (const pod of first) {
      expect(pod.metadata.generateName).toBe("keeper-");
      expect(pod.metadata.ownerReferences).toEqual([
        {
          apiVersion: "v1",
          kind: "ReplicationController",
          name: "keeper",
          uid: rc.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      await markReady(c.client, pod);
    }
    await waitFor("status 3 ready", async () => {
      const now = await c.client.get<ReplicationController>(replicationControllers, "keeper", { namespace: ns });
      return (
        now.status?.readyReplicas === 3 &&
        now.status.availableReplicas === 3 &&
        now.status.fullyLabeledReplicas === 3 &&
        now.status.observedGeneration === now.metadata.generation
      );
    });

    const victim = first[0]!;
    await c.client.delete(pods, victim.metadata.name ?? "", { namespace: ns });
    const replaced = await waitFor("a replacement pod", async () => {
      const ps = await activePods(c.client, ns);
      return ps.length === 3 && !ps.some((p) => p.metadata.uid === victim.metadata.uid) ? ps : undefined;
    });
    expect(replaced.filter((p) => !isReady(p))).toHaveLength(1);
    const status = await waitFor("status with 2 ready of 3", async () => {
      const now = await c.client.get<ReplicationController>(replicationControllers, "keeper", { namespace: ns });
      return now.status?.replicas === 3 && now.status.readyReplicas === 2 ? now.status : undefined;
    });
    expect(status.availableReplicas).toBe(2);
  });

  it("scaling down deletes not-ready pods first", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<ReplicationController>(replicationControllers, replicationController("shrink", 4), { namespace: ns });
    const all = await waitFor("4 pods", async () => {
      const ps = await activePods(c.client, ns);
      return ps.length === 4 ? ps : undefined;
    });
    const [keepA, keepB] = all;
    await markReady(c.client, keepA!);
    await markReady(c.client, keepB!);
    await waitFor("2 ready in status", async () => {
      const now = await c.client.get<ReplicationController>(replicationControllers, "shrink", { namespace: ns });
      return now.status?.readyReplicas === 2;
    });
    await c.client.patch(replicationControllers, "shrink", { spec: { replicas: 2 } }, { namespace: ns });
    const left = await waitFor("2 pods", async () => {
      const ps = await activePods(c.client, ns);
      return ps.length === 2 ? ps : undefined;
    });
    expect(left.map((p) => p.metadata.uid).sort()).toEqual([keepA!.metadata.uid, keepB!.metadata.uid].sort());
  });

  it("a ReplicaSet adopts a matching orphan pod and releases a pod whose labels no longer match", async () => {
    const ns = await freshNamespace(c.client);
    const orphan = await c.client.create<Pod>(
      pods,
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "orphan", labels: { app: "adopter" } },
        // On a node: should the controller hear of the ReplicaSet before this pod, create two and then
        // adopt it, the scale-down removes an unscheduled pod of its own first, never this one.
        spec: { nodeName: "node-a", containers: [{ name: "c", image: "nginx:1" }] },
      } as unknown as Pod,
      { namespace: ns },
    );
    const rs = await c.client.create<ReplicaSet>(
      replicaSets,
      {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: "adopter" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "adopter" } },
          template: { metadata: { labels: { app: "adopter" } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } },
        },
      } as unknown as ReplicaSet,
      { namespace: ns },
    );
    const two = await waitFor(
      "the orphan adopted and one pod created",
      async () => {
        const ps = await activePods(c.client, ns);
        return ps.length === 2 && ps.every((p) => ownerUid(p) === rs.metadata.uid) ? ps : undefined;
      },
      20_000,
      c.controller,
    );
    expect(two.map((p) => p.metadata.name)).toContain("orphan");

    await c.client.patch(pods, "orphan", { metadata: { labels: { app: "elsewhere" } } }, { namespace: ns });
    await waitFor("the pod released and replaced", async () => {
      const ps = await activePods(c.client, ns);
      const released = ps.find((p) => p.metadata.uid === orphan.metadata.uid);
      const owned = ps.filter((p) => ownerUid(p) === rs.metadata.uid);
      return released && ownerUid(released) === undefined && owned.length === 2;
    });
  });
});
