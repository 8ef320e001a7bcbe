// Deployments end to end: real nats-server, real apiserver process, the controller as a real process.
// The test plays the kubelet (orch has none): it marks pods Ready through `/status`.
import type { Deployment, Pod, ReplicaSet } from "@orch/api";
import { describe, expect, it } from "vitest";
import {
  activePods,
  deployment,
  deployments,
  everyRevision,
  freshNamespace,
  isActive,
  isReady,
  markAllReady,
  markReady,
  ownerUid,
  pods,
  replicaSets,
  replicaSetsOf,
  useCluster,
  waitFor,
} from "./cluster.js";

const c = useCluster();
const REVISION = "deployment.orch.io/revision";

const get = (ns: string, name: string) => c.client.get<Deployment>(deployments, name, { namespace: ns });
const condition = (d: Deployment, type: string) => d.status?.conditions?.find((x) => x.type === type);

let probes = 0;
/**
 * Waits until the deployment controller has handled everything it was told before now: it reconciles a
 * new Deployment (in a namespace of its own) only after the Deployment events delivered earlier (its
 * informer gets them in revision order, its one worker takes keys first in, first out). Done twice: a
 * key being reconciled when the first probe arrives goes back in the queue behind it, but ahead of the
 * second.
 */
async function controllerCaughtUp(): Promise<void> {
  const ns = await freshNamespace(c.client);
  for (let i = 0; i < 2; i++) {
    const name = `probe-${++probes}`;
    await c.client.create<Deployment>(deployments, deployment(name, 0), { namespace: ns });
    await waitFor(
      `the controller to reach ${name}`,
      async () => {
        const d = await get(ns, name);
        return d.status?.observedGeneration === d.metadata.generation;
      },
      20_000,
      c.controller,
    );
  }
}

async function waitForComplete(ns: string, name: string, replicas: number): Promise<Deployment> {
  return waitFor(
    `${name} to complete with ${replicas} available`,
    async () => {
      await markAllReady(c.client, ns);
      const d = await get(ns, name);
      const progressing = condition(d, "Progressing");
      const done =
        d.status?.observedGeneration === d.metadata.generation &&
        (d.status?.updatedReplicas ?? 0) === replicas &&
        (d.status?.availableReplicas ?? 0) === replicas &&
        (d.status?.replicas ?? 0) === replicas &&
        progressing?.reason === "NewReplicaSetAvailable";
      return done ? d : undefined;
    },
    30_000,
    c.controller,
  );
}

describe("deployment-controller: Deployments", () => {
  it("a Deployment of 3 creates one ReplicaSet and 3 Pods; Ready pods make it Available", async () => {
    const ns = await freshNamespace(c.client);
    const created = await c.client.create<Deployment>(deployments, deployment("web", 3), { namespace: ns });

    const [rs] = await waitFor(
      "one replica set",
      async () => {
        const rss = await replicaSetsOf(c.client, ns);
        return rss.length === 1 ? rss : undefined;
      },
      20_000,
      c.controller,
    );
    const hash = rs!.metadata.labels?.["pod-template-hash"];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs!.metadata.name).toBe(`web-${hash}`);
    expect(rs!.spec.selector?.matchLabels).toEqual({ app: "web", "pod-template-hash": hash });
    expect(rs!.metadata.ownerReferences).toEqual([
      { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(rs!.metadata.annotations).toMatchObject({
      [REVISION]: "1",
      "deployment.orch.io/desired-replicas": "3",
      "deployment.orch.io/max-replicas": "4",
    });

    const running = await waitFor(
      "3 pods",
      async () => {
        const ps = await activePods(c.client, ns);
        return ps.length === 3 ? ps : undefined;
      },
      20_000,
      c.controller,
    );
    for (const pod of running) {
      expect(pod.metadata.name).toMatch(new RegExp(`^${rs!.metadata.name}-[a-z0-9]{5}$`));
      expect(pod.metadata.labels).toEqual({ app: "web", "pod-template-hash": hash });
      expect(ownerUid(pod)).toBe(rs!.metadata.uid);
      expect(pod.spec?.containers[0]?.image).toBe("nginx:1");
    }

    // No pod is Ready yet: nothing is available.
    const waiting = await waitFor("status with 3 unavailable", async () => {
      const d = await get(ns, "web");
      return d.status?.unavailableReplicas === 3 && d.status.replicas === 3 ? d : undefined;
    });
    expect(condition(waiting, "Available")).toMatchObject({
      status: "False",
      reason: "MinimumReplicasUnavailable",
      message: "Deployment does not have minimum availability.",
    });
    expect(waiting.metadata.annotations?.[REVISION]).toBe("1");

    for (const pod of running) await markReady(c.client, pod);
    const ready = await waitForComplete(ns, "web", 3);
    expect(ready.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    expect(ready.status?.unavailableReplicas).toBeUndefined();
    expect(condition(ready, "Available")).toMatchObject({
      status: "True",
      reason: "MinimumReplicasAvailable",
      message: "Deployment has minimum availability.",
    });
    expect(condition(ready, "Progressing")).toMatchObject({
      status: "True",
      message: `ReplicaSet "${rs!.metadata.name}" has successfully progressed.`,
    });

    const rsNow = (await replicaSetsOf(c.client, ns))[0]!;
    expect(rsNow.status).toMatchObject({
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: rsNow.metadata.generation,
    });
  });

  it("a template change rolls out a second ReplicaSet within maxSurge and maxUnavailable at every step", async () => {
    const ns = await freshNamespace(c.client);
    const strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } };
    await c.client.create<Deployment>(deployments, deployment("roll", 4, { strategy }), { namespace: ns });
    const first = await waitForComplete(ns, "roll", 4);
    // Converged: the controllers write nothing more, not even when reconciling their own last write.
    await controllerCaughtUp();
    expect((await get(ns, "roll")).metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const [oldRS] = await replicaSetsOf(c.client, ns);

    await c.client.patch(
      deployments,
      "roll",
      { spec: { template: { spec: { containers: [{ name: "c", image: "nginx:2" }] } } } },
      { namespace: ns },
    );

    // Both bounds hold at every revision of the replica sets and of the pods, as the watches see them.
    const violations: string[] = [];
    const specs = await everyRevision<ReplicaSet>(c.client, replicaSets, ns, (rss) => {
      const total = rss.reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
      if (total > 5) violations.push(`replica sets ask for ${total} pods (> 4 + maxSurge 1)`);
    });
    const readiness = await everyRevision<Pod>(c.client, pods, ns, (ps) => {
      const readyCount = ps.filter((p) => isActive(p) && isReady(p)).length;
      if (readyCount < 3) violations.push(`${readyCount} ready pods (< 4 - maxUnavailable 1)`);
    });
    await c.client.patch(
      deployments,
      "roll",
      { spec: { template: { spec: { containers: [{ name: "c", image: "nginx:2" }] } } } },
      { namespace: ns },
    );

    // The kubelet makes one new pod Ready at a time.
    let steps = 0;
    const done = await waitFor(
      "the rollout to finish",
      async () => {
        const notReady = (await activePods(c.client, ns)).filter((p) => !isReady(p) && p.spec?.containers[0]?.image === "nginx:2");
        if (notReady[0]) {
          await markReady(c.client, notReady[0]).catch(() => undefined);
          steps++;
        }
        const d = await get(ns, "roll");
        const complete =
          d.status?.observedGeneration === d.metadata.generation &&
          d.status?.updatedReplicas === 4 &&
          d.status?.availableReplicas === 4 &&
          d.status?.replicas === 4 &&
          condition(d, "Progressing")?.reason === "NewReplicaSetAvailable";
        return complete ? d : undefined;
      },
      45_000,
      c.controller,
    );
    await specs.stop();
    await readiness.stop();
    expect(violations).toEqual([]);
    expect(steps).toBeGreaterThanOrEqual(4);

    const rss = await replicaSetsOf(c.client, ns);
    expect(rss).toHaveLength(2);
    const newRS = rss.find((rs) => rs.metadata.uid !== oldRS!.metadata.uid)!;
    const old = rss.find((rs) => rs.metadata.uid === oldRS!.metadata.uid)!;
    expect(old.spec.replicas).toBe(0);
    expect(newRS.spec.replicas).toBe(4);
    expect(old.metadata.annotations?.[REVISION]).toBe("1");
    expect(newRS.metadata.annotations?.[REVISION]).toBe("2");
    expect(done.metadata.annotations?.[REVISION]).toBe("2");
    const remaining = await activePods(c.client, ns);
    expect(remaining).toHaveLength(4);
    for (const pod of remaining) expect(ownerUid(pod)).toBe(newRS.metadata.uid);
  });

  it("scaling through /scale resizes the ReplicaSet and its pods", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("scaled", 2), { namespace: ns });
    await waitForComplete(ns, "scaled", 2);

    await c.client.patch(deployments, "scaled", { spec: { replicas: 5 } }, { namespace: ns, subresource: "scale" });
    const up = await waitForComplete(ns, "scaled", 5);
    expect(up.spec.replicas).toBe(5);
    const [rs] = await replicaSetsOf(c.client, ns);
    expect(rs!.spec.replicas).toBe(5);
    expect(rs!.metadata.annotations?.["deployment.orch.io/desired-replicas"]).toBe("5");
    expect(rs!.metadata.annotations?.[REVISION]).toBe("1");

    await c.client.patch(deployments, "scaled", { spec: { replicas: 1 } }, { namespace: ns, subresource: "scale" });
    await waitForComplete(ns, "scaled", 1);
    await waitFor("1 pod", async () => (await activePods(c.client, ns)).length === 1);
  });

  it("Recreate: every old pod is gone before a new one is created", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("recreate", 3, { strategy: { type: "Recreate" } }), { namespace: ns });
    await waitForComplete(ns, "recreate", 3);

    const mixed: string[] = [];
    const versions = await everyRevision<Pod>(c.client, pods, ns, (ps) => {
      const alive = ps.filter(isActive);
      if (new Set(alive.map((p) => p.metadata.labels?.version ?? "1")).size > 1) mixed.push(alive.map((p) => p.metadata.name).join(","));
    });
    await c.client.patch(
      deployments,
      "recreate",
      { spec: { template: { metadata: { labels: { app: "recreate", version: "2" } } } } },
      { namespace: ns },
    );
    await waitFor(
      "the recreate rollout",
      async () => {
        await markAllReady(c.client, ns);
        const d = await get(ns, "recreate");
        return d.status?.observedGeneration === d.metadata.generation &&
          d.status?.updatedReplicas === 3 &&
          d.status.availableReplicas === 3 &&
          d.status.replicas === 3
          ? d
          : undefined;
      },
      30_000,
      c.controller,
    );
    await versions.stop();
    expect(mixed).toEqual([]);
    const rss = await replicaSetsOf(c.client, ns);
    expect(rss.map((rs) => rs.spec.replicas).sort()).toEqual([0, 3]);
  });

  it("paused: a template change rolls out nothing until resumed; scaling still applies", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("paused", 2), { namespace: ns });
    await waitForComplete(ns, "paused", 2);

    await c.client.patch(
      deployments,
      "paused",
      { spec: { paused: true, template: { metadata: { labels: { app: "paused", v: "2" } } } } },
      { namespace: ns },
    );
    const paused = await waitFor("the paused condition", async () => {
      const d = await get(ns, "paused");
      return condition(d, "Progressing")?.reason === "DeploymentPaused" && d.status?.observedGeneration === d.metadata.generation
        ? d
        : undefined;
    });
    expect(condition(paused, "Progressing")).toMatchObject({ status: "Unknown", message: "Deployment is paused" });
    await c.client.patch(deployments, "paused", { spec: { replicas: 3 } }, { namespace: ns });
    await waitFor("scaled while paused", async () => {
      await markAllReady(c.client, ns);
      const d = await get(ns, "paused");
      return d.status?.availableReplicas === 3 && d.status.observedGeneration === d.metadata.generation;
    });
    await controllerCaughtUp();
    expect(await replicaSetsOf(c.client, ns)).toHaveLength(1);
    expect((await activePods(c.client, ns)).every((p) => p.metadata.labels?.v === undefined)).toBe(true);

    await c.client.patch(deployments, "paused", { spec: { paused: false } }, { namespace: ns });
    const resumed = await waitForComplete(ns, "paused", 3);
    expect(resumed.metadata.annotations?.[REVISION]).toBe("2");
    expect((await activePods(c.client, ns)).every((p) => p.metadata.labels?.v === "2")).toBe(true);
  });

  it("revisionHistoryLimit: old ReplicaSets beyond the limit are deleted once scaled down", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("history", 1, { revisionHistoryLimit: 1 }), { namespace: ns });
    await waitForComplete(ns, "history", 1);
    for (const v of ["2", "3", "4"]) {
      await c.client.patch(
        deployments,
        "history",
        { spec: { template: { metadata: { labels: { app: "history", v } } } } },
        { namespace: ns },
      );
      await waitForComplete(ns, "history", 1);
    }
    const rss = await waitFor("two replica sets left", async () => {
      const list = await replicaSetsOf(c.client, ns);
      return list.length === 2 ? list : undefined;
    });
    expect(rss.map((rs) => rs.metadata.annotations?.[REVISION]).sort()).toEqual(["3", "4"]);
  });

  it("a rollout whose new pods never become Ready reports ProgressDeadlineExceeded after progressDeadlineSeconds", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("stuck", 2, { progressDeadlineSeconds: 2 }), { namespace: ns });
    await waitForComplete(ns, "stuck", 2);
    await c.client.patch(
      deployments,
      "stuck",
      { spec: { template: { spec: { containers: [{ name: "c", image: "nginx:broken" }] } } } },
      { namespace: ns },
    );
    const progressing = await waitFor(
      "the deadline",
      async () => {
        const d = await get(ns, "stuck");
        const cond = condition(d, "Progressing");
        return cond?.reason === "ProgressDeadlineExceeded" ? cond : undefined;
      },
      15_000,
      c.controller,
    );
    const newRS = (await replicaSetsOf(c.client, ns)).find((rs) => rs.metadata.annotations?.[REVISION] === "2")!;
    expect(progressing).toMatchObject({ status: "False", message: `ReplicaSet "${newRS.metadata.name}" has timed out progressing.` });
    // Availability held: the old pods were not removed for new ones that never became available.
    expect(condition(await get(ns, "stuck"), "Available")?.status).toBe("True");
  });

  it("minReadySeconds: a pod counts as available only after being Ready that long", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("patient", 1, { minReadySeconds: 2 }), { namespace: ns });
    await waitFor("a pod", async () => (await activePods(c.client, ns)).length === 1);
    const readyAt = Date.now();
    await markAllReady(c.client, ns);
    await waitFor("ready but not yet available", async () => {
      const d = await get(ns, "patient");
      return d.status?.readyReplicas === 1 && !d.status.availableReplicas;
    });
    await waitFor("available", async () => (await get(ns, "patient")).status?.availableReplicas === 1, 10_000, c.controller);
    // lastTransitionTime has whole seconds: up to one of the two may pass before the pod is marked.
    expect(Date.now() - readyAt).toBeGreaterThanOrEqual(1000);
  });

  it("deleting a Deployment (background propagation) removes its ReplicaSets and pods through the garbage collector", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("doomed", 2), { namespace: ns });
    await waitForComplete(ns, "doomed", 2);
    await c.client.delete(deployments, "doomed", { namespace: ns, propagationPolicy: "Background" });
    await waitFor("replica sets and pods gone", async () => {
      const [rss, ps] = await Promise.all([replicaSetsOf(c.client, ns), c.client.list<Pod>(pods, { namespace: ns })]);
      return rss.length === 0 && ps.items.length === 0;
    });
  });

  it("adopts an orphaned ReplicaSet that matches its selector instead of creating another", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create<Deployment>(deployments, deployment("adopt", 1), { namespace: ns });
    await waitForComplete(ns, "adopt", 1);
    const [rs] = await replicaSetsOf(c.client, ns);
    // Orphan the replica set and its pods, then make a new deployment of the same template.
    await c.client.delete(deployments, "adopt", { namespace: ns, propagationPolicy: "Orphan" });
    await waitFor("the orphaned replica set", async () => {
      const [orphan] = await replicaSetsOf(c.client, ns);
      return orphan && !orphan.metadata.ownerReferences?.length;
    });
    const again = await c.client.create<Deployment>(deployments, deployment("adopt", 1), { namespace: ns });
    const adopted = await waitFor(
      "adoption",
      async () => {
        const list = await replicaSetsOf(c.client, ns);
        return list.length === 1 && ownerUid(list[0]!) === again.metadata.uid ? list[0] : undefined;
      },
      20_000,
      c.controller,
    );
    expect(adopted.metadata.uid).toBe(rs!.metadata.uid);
    await waitForComplete(ns, "adopt", 1);
    expect(await replicaSetsOf(c.client, ns)).toHaveLength(1);
  });
});
