// What a node agent posts for a pod at each step, as a pure function of the pod and the clock: the
// transitions the process tests see, plus the timings they cannot wait for (kubelet's 10 s back-off,
// a grace period shorter than the stop time).
import type { Pod } from "@orch/api";
import { describe, expect, it } from "vitest";
import {
  PodAddresses,
  type PodMemory,
  backoffMs,
  goDuration,
  nodeAddress,
  nodePodCidr,
  parseDuration,
  parseSimulation,
  planPod,
  qosClass,
} from "../src/index.js";

const timing = { readyDelayMs: 1000, stopDelayMs: 1000, runBeforeExitMs: 1000, backoffBaseMs: 10_000, backoffMaxMs: 300_000 };
const T0 = Date.parse("2026-01-01T00:00:00Z");

function newPod(extra: { restartPolicy?: string; initialDelaySeconds?: number } = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", uid: "u-1" },
    spec: {
      nodeName: "node-0",
      restartPolicy: extra.restartPolicy ?? "Always",
      containers: [
        {
          name: "c",
          image: "nginx:1.27",
          ...(extra.initialDelaySeconds ? { readinessProbe: { initialDelaySeconds: extra.initialDelaySeconds } } : {}),
        },
      ],
    },
    status: { phase: "Pending" },
  } as unknown as Pod;
}

const memory = (): PodMemory => ({ seenAt: T0, startedAt: new Map(), killing: false });

/** Runs the plan at `now` and applies its status to the pod, as the agent's write would. */
function step(pod: Pod, now: number, mem: PodMemory, simulate = "", t = timing) {
  const plan = planPod({
    pod,
    now,
    memory: mem,
    sim: parseSimulation(simulate),
    timing: t,
    hostIP: "10.89.0.1",
    podIP: () => "10.244.0.2",
  });
  return { plan, pod: plan.status ? ({ ...pod, status: plan.status } as Pod) : pod };
}
const ready = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === "Ready")?.status;

describe("planPod", () => {
  it("starts a pod Running and not Ready, then Ready after the delay; readinessProbe.initialDelaySeconds wins when longer", () => {
    const mem = memory();
    const started = step(newPod(), T0, mem);
    expect(started.pod.status).toMatchObject({ phase: "Running", podIP: "10.244.0.2", hostIP: "10.89.0.1", qosClass: "BestEffort" });
    expect(ready(started.pod)).toBe("False");
    expect(started.plan.after).toBe(1000);
    expect(started.plan.events.map((e) => e.reason)).toEqual(["Pulled", "Created", "Started"]);
    expect(ready(step(started.pod, T0 + 1000, mem).pod)).toBe("True");

    const slowMem = memory();
    const probe = step(newPod({ initialDelaySeconds: 5 }), T0, slowMem);
    expect(probe.plan.after).toBe(5000);
    expect(ready(step(probe.pod, T0 + 4999, slowMem).pod)).toBe("False");
    expect(ready(step(probe.pod, T0 + 5000, slowMem).pod)).toBe("True");
  });

  it("reports a pod it reaches after the ready delay Running and Ready in one status, started when the node got it", () => {
    const late = step(newPod(), T0 + 1500, memory());
    expect(late.pod.status?.phase).toBe("Running");
    expect(ready(late.pod)).toBe("True");
    expect(late.pod.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBe("2026-01-01T00:00:00Z");
    expect(late.plan.events.map((e) => e.reason)).toEqual(["Pulled", "Created", "Started"]);
    expect(late.plan.after).toBeUndefined();

    const slow = step(newPod(), T0 + 5000, memory(), "slow-start=2s");
    expect(slow.pod.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBe("2026-01-01T00:00:02Z");
    expect(ready(slow.pod)).toBe("True");
    expect(slow.plan.events.map((e) => e.reason)).toEqual(["Pulling", "Pulled", "Created", "Started"]);
  });

  it("is Ready at once without a delay", () => {
    const { pod } = step(newPod(), T0, memory(), "", { ...timing, readyDelayMs: 0 });
    expect(ready(pod)).toBe("True");
  });

  it("stops a deleted pod after min(grace period, stop time): exit 0 within the grace period, 137 when it runs out", () => {
    const mem = memory();
    const running = step(newPod(), T0, mem).pod;
    const deleted = (grace: number) =>
      ({
        ...running,
        metadata: {
          ...running.metadata,
          deletionTimestamp: new Date(T0 + 10_000 + grace * 1000).toISOString(),
          deletionGracePeriodSeconds: grace,
        },
      }) as Pod;
    const waiting = step(deleted(30), T0 + 10_000, mem);
    expect(waiting.plan.after).toBe(1000);
    expect(waiting.plan.delete).toBeUndefined();
    expect(waiting.plan.events).toEqual([
      { type: "Normal", reason: "Killing", message: "Stopping container c", fieldPath: "spec.containers{c}" },
    ]);
    const stopped = step(deleted(30), T0 + 11_000, mem);
    expect(stopped.plan.delete).toBe(true);
    expect(stopped.pod.status?.phase).toBe("Succeeded");
    expect(stopped.pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });

    const killed = step(deleted(0), T0 + 10_000, memory());
    expect(killed.plan.delete).toBe(true);
    expect(killed.pod.status?.phase).toBe("Failed");
    expect(killed.pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 137, reason: "Error" });
  });

  it("removes a pod deleted before it started at once, with nothing to stop", () => {
    const pod = {
      ...newPod(),
      metadata: { ...newPod().metadata, deletionTimestamp: new Date(T0 + 30_000).toISOString(), deletionGracePeriodSeconds: 30 },
    } as Pod;
    expect(step(pod, T0, memory()).plan).toEqual({ events: [], delete: true });
  });

  it("crash-loop under Always: the first restart at once, then CrashLoopBackOff for kubelet's back-off", () => {
    const mem = memory();
    let pod = step(newPod(), T0, mem, "crash-loop").pod;
    pod = step(pod, T0 + 1000, mem, "crash-loop").pod;
    let s = pod.status!.containerStatuses![0]!;
    expect(s).toMatchObject({ restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 1, reason: "Error" } } });
    const backingOff = step(pod, T0 + 2000, mem, "crash-loop");
    s = backingOff.pod.status!.containerStatuses![0]!;
    expect(s.state?.waiting).toEqual({ reason: "CrashLoopBackOff", message: "back-off 10s restarting failed container=c pod=p_ns(u-1)" });
    expect(backingOff.plan.after).toBe(10_000);
    expect(backingOff.plan.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "BackOff"]]);
    expect(backingOff.pod.status?.phase).toBe("Running");
    const restarted = step(backingOff.pod, T0 + 12_000, mem, "crash-loop").pod;
    expect(restarted.status?.containerStatuses?.[0]).toMatchObject({ restartCount: 2, state: { running: {} } });
  });

  it("exit under Never ends the pod Failed or Succeeded by the code; OnFailure completes a zero exit", () => {
    for (const [simulate, policy, phase] of [
      ["exit=3", "Never", "Failed"],
      ["exit=0", "Never", "Succeeded"],
      ["exit=0", "OnFailure", "Succeeded"],
    ] as const) {
      const mem = memory();
      const pod = step(newPod({ restartPolicy: policy }), T0, mem, simulate).pod;
      const done = step(pod, T0 + 1000, mem, simulate);
      expect(done.pod.status?.phase, `${simulate} ${policy}`).toBe(phase);
      expect(done.plan.after).toBeUndefined();
      expect(ready(done.pod)).toBe("False");
    }
  });

  it("keeps a slow-starting pod Pending with ContainerCreating, then starts it", () => {
    const mem = memory();
    const creating = step(newPod(), T0, mem, "slow-start=2s");
    expect(creating.pod.status?.phase).toBe("Pending");
    expect(creating.pod.status?.containerStatuses?.[0]?.state).toEqual({ waiting: { reason: "ContainerCreating" } });
    expect(creating.plan.after).toBe(2000);
    const started = step(creating.pod, T0 + 2000, mem, "slow-start=2s");
    expect(started.pod.status?.phase).toBe("Running");
    expect(creating.plan.events.map((e) => e.reason)).toEqual(["Pulling"]);
    expect(started.plan.events[0]?.message).toBe('Successfully pulled image "nginx:1.27" in 2s (2s including waiting)');
    expect(started.plan.events.map((e) => e.reason)).not.toContain("Pulling");
  });
});

describe("helpers", () => {
  it("doubles the back-off from the base up to the cap, and prints durations as Go does", () => {
    expect([0, 1, 2, 3, 6, 7].map((n) => backoffMs(n, timing))).toEqual([0, 10_000, 20_000, 40_000, 300_000, 300_000]);
    expect([500, 1500, 10_000, 60_000, 160_000, 3_600_000].map(goDuration)).toEqual(["500ms", "1.5s", "10s", "1m0s", "2m40s", "1h0m0s"]);
    expect([parseDuration("1m30s"), parseDuration("1.5s"), parseDuration("250ms"), parseDuration("5"), parseDuration("")]).toEqual([
      90_000,
      1500,
      250,
      undefined,
      undefined,
    ]);
  });

  it("parses the simulate annotation: directives combine, unknown ones are kept apart", () => {
    expect(parseSimulation("never-ready, slow-start=3s")).toEqual({
      neverReady: true,
      exitCode: undefined,
      slowStartMs: 3000,
      unknown: [],
    });
    expect(parseSimulation("exit=42")).toMatchObject({ exitCode: 42 });
    expect(parseSimulation("crash-loop")).toMatchObject({ exitCode: 1 });
    expect(parseSimulation("exit=300,slow-start=soon,fly").unknown).toEqual(["exit=300", "slow-start=soon", "fly"]);
  });

  it("derives QoS classes as Kubernetes does", () => {
    const c = (resources: object) => ({ name: "c", image: "i", resources }) as never;
    expect(qosClass([c({})])).toBe("BestEffort");
    expect(qosClass([c({ requests: { cpu: "1" } })])).toBe("Burstable");
    expect(qosClass([c({ limits: { cpu: "1", memory: "1Gi" } })])).toBe("Guaranteed");
  });

  it("gives node i its /24 and address, and pods the lowest free address from .2, kept across a restart", () => {
    expect([nodePodCidr("10.244.0.0/16", 0), nodePodCidr("10.244.0.0/16", 5)]).toEqual(["10.244.0.0/24", "10.244.5.0/24"]);
    expect(nodeAddress("10.89.0.0/16", 0)).toBe("10.89.0.1");
    expect(() => nodePodCidr("10.244.0.0/24", 1)).toThrow(/no room/);
    const ips = new PodAddresses("10.244.3.0/24");
    expect(ips.assign("a", "10.244.3.7")).toBe("10.244.3.7");
    expect([ips.assign("b"), ips.assign("c"), ips.assign("b")]).toEqual(["10.244.3.2", "10.244.3.3", "10.244.3.2"]);
    ips.release("b");
    expect(ips.assign("d")).toBe("10.244.3.2");
    for (let i = 0; i < 250; i++) ips.assign(`x${i}`);
    expect(ips.assign("full")).toBeUndefined();
  });
});
