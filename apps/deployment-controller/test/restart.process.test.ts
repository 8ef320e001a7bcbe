// Crash recovery: the controller is SIGKILLed in the middle of a rollout; a new process (after the old
// one's leader lease expires) takes over from the state in the apiserver and finishes the rollout.
import type { Deployment } from "@orch/api";
import { describe, expect, it } from "vitest";
import {
  activePods,
  deployment,
  deployments,
  freshNamespace,
  isReady,
  markAllReady,
  markReady,
  ownerUid,
  replicaSetsOf,
  useCluster,
  waitFor,
} from "./cluster.js";

const c = useCluster();

describe("deployment-controller: kill and restart", () => {
  it("SIGKILL mid-rollout, start again: the rollout converges", { timeout: 90_000 }, async () => {
    const ns = await freshNamespace(c.client);
    const strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
    await c.client.create<Deployment>(deployments, deployment("phoenix", 4, { strategy }), { namespace: ns });
    await waitFor(
      "the first rollout",
      async () => {
        await markAllReady(c.client, ns);
        const d = await c.client.get<Deployment>(deployments, "phoenix", { namespace: ns });
        return d.status?.availableReplicas === 4 && d.status.updatedReplicas === 4 && d.status.replicas === 4;
      },
      30_000,
      c.controller,
    );

    await c.client.patch(
      deployments,
      "phoenix",
      { spec: { template: { spec: { containers: [{ name: "c", image: "nginx:2" }] } } } },
      { namespace: ns },
    );
    // Mid-rollout: a new replica set has a pod, which the kubelet makes Ready, and an old one is on its way down.
    await waitFor(
      "the rollout under way",
      async () => {
        const fresh = (await activePods(c.client, ns)).filter((p) => p.spec?.containers[0]?.image === "nginx:2");
        for (const pod of fresh.filter((p) => !isReady(p))) await markReady(c.client, pod).catch(() => undefined);
        return fresh.length >= 1 && fresh.length < 4;
      },
      20_000,
      c.controller,
    );
    await c.controller.kill("SIGKILL");

    c.startController();
    const done = await waitFor(
      "the rollout to finish after the restart",
      async () => {
        await markAllReady(c.client, ns);
        const d = await c.client.get<Deployment>(deployments, "phoenix", { namespace: ns });
        const progressing = d.status?.conditions?.find((x) => x.type === "Progressing");
        return d.status?.observedGeneration === d.metadata.generation &&
          d.status.updatedReplicas === 4 &&
          d.status.availableReplicas === 4 &&
          d.status.replicas === 4 &&
          progressing?.reason === "NewReplicaSetAvailable"
          ? d
          : undefined;
      },
      60_000,
      c.controller,
    );
    expect(done.metadata.annotations?.["deployment.orch.io/revision"]).toBe("2");
    const rss = await replicaSetsOf(c.client, ns);
    expect(rss).toHaveLength(2);
    const newRS = rss.find((rs) => rs.metadata.annotations?.["deployment.orch.io/revision"] === "2")!;
    expect(newRS.spec.replicas).toBe(4);
    expect(rss.find((rs) => rs !== newRS)!.spec.replicas).toBe(0);
    const left = await activePods(c.client, ns);
    expect(left).toHaveLength(4);
    for (const pod of left) expect(ownerUid(pod)).toBe(newRS.metadata.uid);
  });
});
