// The scheduler as a real process, with its own least-privilege identity, against a real apiserver
// process and nats-server. Nodes are created through the API (their Ready condition through /status);
// the test plays the node agent only where Kubernetes needs one: it confirms a victim's graceful
// deletion. Each test's nodes are deleted after it, so every test sees only its own.
import type { Event, Pod } from "@orch/api";
import type { KubeObject, ResourceRef } from "@orch/client";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApp, useCluster, waitFor } from "../../csr-signer/test/cluster.js";

const cluster = useCluster("orch");
const run = promisify(execFile);

const nodesRef: ResourceRef = { group: "", version: "v1", plural: "nodes", namespaced: false };
const podsRef: ResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
const eventsRef: ResourceRef = { group: "", version: "v1", plural: "events", namespaced: true };
const namespacesRef: ResourceRef = { group: "", version: "v1", plural: "namespaces", namespaced: false };
const classesRef: ResourceRef = { group: "scheduling.orch.io", version: "v1", plural: "priorityclasses", namespaced: false };

let created: string[] = [];
let seq = 0;

beforeAll(() => {
  startApp("scheduler", cluster, { identity: "own" });
});

afterEach(async () => {
  for (const name of created) await cluster.admin.delete(nodesRef, name).catch(() => undefined);
  created = [];
});

interface NodeOptions {
  cpu?: string;
  ready?: "True" | "False";
  unschedulable?: boolean;
}

/** A node as a node agent registers it: created, then its Ready condition written through /status. */
async function node(name: string, o: NodeOptions = {}): Promise<void> {
  created.push(name);
  const capacity = { cpu: o.cpu ?? "2", memory: "4Gi", pods: "110" };
  await cluster.admin.create<KubeObject>(nodesRef, {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name },
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: { capacity, allocatable: capacity },
  } as KubeObject);
  await cluster.admin.patch(
    nodesRef,
    name,
    { status: { conditions: [{ type: "Ready", status: o.ready ?? "True", reason: "KubeletReady", message: "ready" }] } },
    { subresource: "status" },
  );
}

async function namespace(): Promise<string> {
  const name = `sched-${process.pid}-${++seq}`;
  await cluster.admin.create<KubeObject>(namespacesRef, { apiVersion: "v1", kind: "Namespace", metadata: { name } } as KubeObject);
  return name;
}

/** A pod requesting `cpu`; created once its namespace's default service account exists (admission needs it). */
async function pod(ns: string, name: string, cpu: string, spec: Record<string, unknown> = {}): Promise<Pod> {
  const body = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: { containers: [{ name: "c", image: "busybox", resources: { requests: { cpu } } }], ...spec },
  } as unknown as Pod;
  return waitFor(`pod ${ns}/${name} created`, () => cluster.admin.create<Pod>(podsRef, body).catch(() => undefined));
}

async function priorityClass(name: string, value: number, preemptionPolicy?: string): Promise<void> {
  await cluster.admin.create<KubeObject>(classesRef, {
    apiVersion: "scheduling.orch.io/v1",
    kind: "PriorityClass",
    metadata: { name },
    value,
    ...(preemptionPolicy ? { preemptionPolicy } : {}),
  } as KubeObject);
}

const getPod = (ns: string, name: string) => cluster.admin.get<Pod>(podsRef, name, { namespace: ns });
const boundTo = (ns: string, name: string) => waitFor(`${ns}/${name} bound`, async () => (await getPod(ns, name)).spec?.nodeName, 30_000);
const conditionOf = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
const unschedulable = (ns: string, name: string) =>
  waitFor(`${ns}/${name} Unschedulable`, async () => {
    const c = conditionOf(await getPod(ns, name), "PodScheduled");
    return c?.status === "False" && c;
  });

async function eventsOf(ns: string, name: string): Promise<string[]> {
  const list = await cluster.admin.list<Event>(eventsRef, { namespace: ns, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason} ${e.source?.component}: ${e.message}`);
}

describe("scheduler", () => {
  it("with no node at all, a pod is Unschedulable: no nodes available to schedule pods", async () => {
    const ns = await namespace();
    await pod(ns, "early", "1");
    expect(await unschedulable(ns, "early")).toMatchObject({ reason: "Unschedulable", message: "no nodes available to schedule pods" });
    await node("first");
    expect(await boundTo(ns, "early")).toBe("first");
  });

  it("binds pods to Ready nodes with room, spreading them; records Scheduled; kubectl get nodes shows the nodes", async () => {
    const ns = await namespace();
    for (const n of ["spread-a", "spread-b", "spread-c"]) await node(n);
    await node("spread-cordoned", { unschedulable: true });
    for (const p of ["p1", "p2", "p3"]) await pod(ns, p, "1");
    const placed = await Promise.all(["p1", "p2", "p3"].map((p) => boundTo(ns, p)));
    // Least allocated: one pod per node, none on the cordoned one.
    expect(new Set(placed)).toEqual(new Set(["spread-a", "spread-b", "spread-c"]));
    const p1 = await getPod(ns, "p1");
    expect(conditionOf(p1, "PodScheduled")).toMatchObject({ status: "True" });
    await waitFor("the Scheduled event", async () =>
      (await eventsOf(ns, "p1")).includes(`Normal Scheduled default-scheduler: Successfully assigned ${ns}/p1 to ${p1.spec?.nodeName}`),
    );

    const { stdout } = await run("kubectl", ["--kubeconfig", cluster.apiserver.kubeconfigPath, "get", "nodes"]);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    expect(lines.find((l) => l.startsWith("spread-a "))).toMatch(/^spread-a\s+Ready\s+<none>\s+\S+\s*$/);
    expect(lines.find((l) => l.startsWith("spread-cordoned "))).toMatch(/^spread-cordoned\s+Ready,SchedulingDisabled\s+<none>/);
  });

  it("a pod that fits nowhere is Unschedulable with Kubernetes' message and a FailedScheduling event; a node with room then takes it", async () => {
    const ns = await namespace();
    await node("small", { cpu: "1" });
    await node("not-ready", { cpu: "8", ready: "False" });
    await node("cordoned", { cpu: "8", unschedulable: true });
    await pod(ns, "big", "2");
    const message =
      "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable. " +
      "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..";
    expect(await unschedulable(ns, "big")).toMatchObject({ reason: "Unschedulable", message });
    await waitFor("the FailedScheduling event", async () =>
      (await eventsOf(ns, "big")).includes(`Warning FailedScheduling default-scheduler: ${message}`),
    );

    await node("roomy", { cpu: "4" });
    expect(await boundTo(ns, "big")).toBe("roomy");
  });

  it("on full nodes, a high-priority pod preempts one low-priority pod; with preemptionPolicy Never it waits", async () => {
    await priorityClass("sched-low", 100);
    await priorityClass("sched-high", 1000);
    await priorityClass("sched-high-never", 1000, "Never");
    const ns = await namespace();
    await node("full-a", { cpu: "2" });
    await node("full-b", { cpu: "2" });
    const low = ["low-1", "low-2", "low-3", "low-4"];
    for (const name of low) await pod(ns, name, "1", { priorityClassName: "sched-low" });
    await Promise.all(low.map((p) => boundTo(ns, p)));

    // Never: stays pending, preempts nobody.
    await pod(ns, "patient", "1", { priorityClassName: "sched-high-never" });
    expect((await unschedulable(ns, "patient")).message).toBe(
      "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..",
    );

    // PreemptLowerPriority: one victim, on the node the preemptor is nominated to.
    await pod(ns, "urgent", "1", { priorityClassName: "sched-high" });
    const nominated = await waitFor("urgent's nomination", async () => (await getPod(ns, "urgent")).status?.nominatedNodeName);
    const victims = await waitFor("a victim being deleted", async () => {
      const going = (await Promise.all(low.map((p) => getPod(ns, p)))).filter((p) => p.metadata.deletionTimestamp);
      return going.length > 0 && going;
    });
    expect(victims).toHaveLength(1);
    const victim = victims[0]!;
    expect(victim.spec?.nodeName).toBe(nominated);
    expect(conditionOf(victim, "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "PreemptionByScheduler",
      message: "default-scheduler: preempting to accommodate a higher priority pod",
    });
    const urgent = await getPod(ns, "urgent");
    await waitFor("the Preempted event", async () =>
      (await eventsOf(ns, victim.metadata.name!)).includes(
        `Normal Preempted default-scheduler: Preempted by pod ${urgent.metadata.uid} on node ${nominated}`,
      ),
    );
    // The node agent confirms the graceful deletion; the room goes to the preemptor, not the patient pod.
    await cluster.admin.delete(podsRef, victim.metadata.name!, { namespace: ns, gracePeriodSeconds: 0 });
    expect(await boundTo(ns, "urgent")).toBe(nominated);
    expect((await getPod(ns, "patient")).spec?.nodeName).toBeUndefined();
    const survivors = await Promise.all(low.filter((p) => p !== victim.metadata.name).map((p) => getPod(ns, p)));
    expect(survivors.every((p) => !p.metadata.deletionTimestamp)).toBe(true);

    // Room made by someone else: the patient pod lands there.
    await cluster.admin.delete(podsRef, survivors[0]!.metadata.name!, { namespace: ns, gracePeriodSeconds: 0 });
    expect(await boundTo(ns, "patient")).toBe(survivors[0]!.spec?.nodeName);
  });
});
