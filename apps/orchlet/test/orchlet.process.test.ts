// The simulated nodes end to end, every part a real process: the orchlet gets each node's certificate
// through a CSR, registers its Nodes and heartbeats, runs the pods bound to them (and misbehaves as
// their annotation says), stops them gracefully, and when it is killed its Nodes go NotReady; started
// again it resumes its pods as they were.
import type { CertificateSigningRequest, Pod } from "@orch/api";
import { type KubeObject, isNotFound } from "@orch/client";
import { parseCertificate } from "@orch/pki";
import { eventually } from "@orch/testing";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { events, freshNamespace, isReady, nodes, pod, pods, useCluster } from "./cluster.js";

interface NodeObject extends KubeObject {
  spec?: { podCIDR?: string; taints?: { key: string; effect: string }[] };
  status?: {
    capacity?: Record<string, string>;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    addresses?: { type: string; address: string }[];
  };
}
interface EventObject extends KubeObject {
  reason?: string;
  message?: string;
  type?: string;
  source?: { component?: string; host?: string };
  involvedObject?: { name?: string; fieldPath?: string };
}

const csrs = { group: "certificates.orch.io", version: "v1", plural: "certificatesigningrequests", namespaced: false };
const leases = { group: "coordination.orch.io", version: "v1", plural: "leases", namespaced: true };

describe("orchlet", () => {
  const c = useCluster();

  const getPod = async (ns: string, name: string) => c.admin.get<Pod>(pods, name, { namespace: ns });
  const waitPod = <T>(what: string, ns: string, name: string, check: (p: Pod) => T | undefined | false, timeoutMs = 15_000) =>
    eventually(what, async () => check(await getPod(ns, name)), { timeoutMs }).catch((e: Error) => {
      throw new Error(`${e.message}\n${c.output()}`);
    });
  const eventsOf = async (ns: string, name: string) =>
    (await c.admin.list<EventObject>(events, { namespace: ns })).items.filter((e) => e.involvedObject?.name === name);

  it("registers its nodes with certificates from CSRs, and kubectl lists them Ready", async () => {
    const out = await c.kubectl("get", "nodes");
    expect(out.stderr).toBe("");
    expect(out.stdout).toMatch(/^node-0\s+Ready\s+<none>\s+\S+\s+v1\.32\.0$/m);
    expect(out.stdout).toMatch(/^node-1\s+Ready\s+<none>\s+\S+\s+v1\.32\.0$/m);

    const node = await c.admin.get<NodeObject>(nodes, "node-1");
    expect(node.spec?.podCIDR).toBe("10.244.1.0/24");
    expect(node.status?.capacity).toMatchObject({ cpu: "4", memory: "16Gi", pods: "110" });
    expect(node.status?.addresses).toEqual([
      { type: "InternalIP", address: "10.89.0.2" },
      { type: "Hostname", address: "node-1" },
    ]);
    expect(node.status?.conditions?.find((x) => x.type === "Ready")).toMatchObject({
      status: "True",
      reason: "OrchletReady",
      message: "orchlet is posting ready status",
    });
    expect(node.status?.conditions?.map((x) => x.type).sort()).toEqual(["DiskPressure", "MemoryPressure", "PIDPressure", "Ready"]);

    // Each node asked for its client certificate with the bootstrap identity; approved and issued.
    const requests = (await c.admin.list<CertificateSigningRequest>(csrs)).items;
    const client = requests.filter((r) => r.spec.signerName === "orch.io/orch-apiserver-client-orchlet");
    expect(client.map((r) => r.spec.username).sort()).toEqual(["system:bootstrap:orchlet", "system:bootstrap:orchlet"]);
    for (const r of client) {
      expect(r.status?.conditions?.find((x) => x.type === "Approved")?.status).toBe("True");
      expect(r.status?.certificate).toBeTruthy();
    }
    // The serving certificates are asked for by the nodes themselves, one after the other once the
    // orchlet is ready, and wait for an administrator.
    const servingRequests = async () =>
      (await c.admin.list<CertificateSigningRequest>(csrs)).items.filter((r) => r.spec.signerName === "orch.io/orchlet-serving");
    await eventually("both nodes to ask for a serving certificate", async () => (await servingRequests()).length === 2);
    const serving = await servingRequests();
    expect(serving.map((r) => r.spec.username).sort()).toEqual(["system:node:node-0", "system:node:node-1"]);
    expect(serving.every((r) => !r.status?.conditions?.length)).toBe(true);

    // It verifies the apiserver with the node client signer's published trust bundle, not only the bootstrap CA.
    await eventually("the orchlet saying how it verifies the apiserver", () =>
      c.orchlet.output().includes("verifying the apiserver with the bootstrap CA and the published trust bundle"),
    );

    // The heartbeat: a Lease per node in orch-node-lease, held by the node.
    const lease = await c.admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(leases, "node-0", {
      namespace: "orch-node-lease",
    });
    expect(lease.spec?.holderIdentity).toBe("node-0");
  });

  it("keeps the serving certificate an administrator approved: the node's name and address, from the orchlet-serving signer", async () => {
    // The node asks for it once its client certificate works, which may be just after it registered.
    const pending = await eventually("node-0's serving CSR", async () =>
      (await c.admin.list<CertificateSigningRequest>(csrs)).items.find(
        (r) => r.spec.signerName === "orch.io/orchlet-serving" && r.spec.username === "system:node:node-0",
      ),
    );
    pending.status = { conditions: [{ type: "Approved", status: "True", reason: "AdminApproved", message: "checked the SANs" }] };
    await c.admin.updateSubresource(csrs, pending, "approval");
    const file = join(c.apiserver.dataDir, "orchlet", "pki", "node-0-serving.crt");
    await eventually("the serving certificate kept", () => existsSync(file), { timeoutMs: 15_000 });
    const cert = parseCertificate(readFileSync(file, "utf8"));
    expect(cert.subject).toEqual({ commonName: "system:node:node-0", organizations: ["system:nodes"] });
    expect(cert.dnsNames).toEqual(["node-0"]);
    expect(cert.ipAddresses).toEqual(["10.89.0.1"]);
    expect(cert.extKeyUsages).toEqual(["server auth"]);
    // The log line follows the file.
    await eventually("the orchlet saying so", () => c.orchlet.output().includes("node-0: serving certificate issued"));
  });

  it("runs a pod bound to a node: Running, then Ready, with container statuses, an IP from the node's range and kubelet's events", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("web", "node-1"), { namespace: ns });
    const ready = await waitPod("the pod Ready", ns, "web", (p) => isReady(p) && p);
    expect(ready.status?.phase).toBe("Running");
    expect(ready.status?.hostIP).toBe("10.89.0.2");
    expect(ready.status?.podIP).toMatch(/^10\.244\.1\.\d+$/);
    expect(ready.status?.podIPs).toEqual([{ ip: ready.status?.podIP }]);
    expect(ready.status?.startTime).toBeTruthy();
    expect(ready.status?.qosClass).toBe("BestEffort");
    const [container] = ready.status?.containerStatuses ?? [];
    expect(container).toMatchObject({ name: "web", ready: true, started: true, restartCount: 0, image: "nginx:1.27" });
    expect(container?.state?.running?.startedAt).toBeTruthy();
    expect(container?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(container?.imageID).toMatch(/^nginx@sha256:[0-9a-f]{64}$/);
    for (const type of ["PodScheduled", "Initialized", "ContainersReady", "Ready", "PodReadyToStartContainers"]) {
      expect(ready.status?.conditions?.find((x) => x.type === type)?.status, type).toBe("True");
    }

    const recorded = await eventually("the kubelet events", async () => {
      const list = await eventsOf(ns, "web");
      return list.length >= 3 && list;
    });
    expect(recorded.map((e) => e.reason)).toEqual(expect.arrayContaining(["Pulled", "Created", "Started"]));
    const started = recorded.find((e) => e.reason === "Started")!;
    expect(started).toMatchObject({ type: "Normal", message: "Started container web", source: { component: "orchlet", host: "node-1" } });
    expect(started.involvedObject?.fieldPath).toBe("spec.containers{web}");

    const wide = await c.kubectl("get", "pod", "web", "-n", ns, "-o", "wide", "--no-headers");
    expect(wide.stdout).toMatch(/^web\s+1\/1\s+Running\s+0\s+\S+\s+10\.244\.1\.\d+\s+node-1\s/);
  });

  it("never-ready: the container runs but the pod is never Ready", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("stuck", "node-0", { simulate: "never-ready, fly" }), { namespace: ns });
    await c.admin.create(pods, pod("control", "node-0"), { namespace: ns });
    // The control pod, created after it on the same node with the same delay, is Ready first.
    await waitPod("the control pod Ready", ns, "control", isReady);
    const stuck = await getPod(ns, "stuck");
    expect(stuck.status?.phase).toBe("Running");
    expect(stuck.status?.containerStatuses?.[0]).toMatchObject({ ready: false, started: true });
    expect(stuck.status?.conditions?.find((x) => x.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [web]",
    });
    // A directive it does not know is reported, and the rest still applies.
    const warning = await eventually("the InvalidSimulation event", async () =>
      (await eventsOf(ns, "stuck")).find((e) => e.reason === "InvalidSimulation"),
    );
    expect(warning).toMatchObject({ type: "Warning", message: "unknown orch.io/orchlet-simulate directives: fly" });
  });

  it("crash-loop: the container keeps exiting, restartCount grows, CrashLoopBackOff between restarts", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("crash", "node-0", { simulate: "crash-loop" }), { namespace: ns });
    const backingOff = await waitPod("CrashLoopBackOff", ns, "crash", (p) => {
      const s = p.status?.containerStatuses?.[0];
      return s?.state?.waiting?.reason === "CrashLoopBackOff" && p;
    });
    const s = backingOff.status!.containerStatuses![0]!;
    expect(s.state?.waiting?.message).toMatch(/^back-off [\d.]+m?s restarting failed container=web pod=crash_/);
    expect(s.lastState?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(backingOff.status?.phase).toBe("Running");
    await waitPod("three restarts", ns, "crash", (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 3);
    const backOff = (await eventsOf(ns, "crash")).find((e) => e.reason === "BackOff");
    expect(backOff).toMatchObject({ type: "Warning" });
    expect(backOff?.message).toMatch(/^Back-off restarting failed container web in pod crash_/);
  });

  it("slow-start: Pending with ContainerCreating for the duration, then Running and Ready", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("slow", "node-0", { simulate: "slow-start=1500ms" }), { namespace: ns });
    const creating = await waitPod("ContainerCreating", ns, "slow", (p) => p.status?.containerStatuses?.[0]?.state?.waiting && p);
    expect(creating.status?.phase).toBe("Pending");
    expect(creating.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("ContainerCreating");
    expect(creating.status?.podIP).toBeUndefined();
    const ready = await waitPod("the slow pod Ready", ns, "slow", (p) => isReady(p) && p);
    expect(ready.status?.phase).toBe("Running");
    const pulled = (await eventsOf(ns, "slow")).filter((e) => e.reason === "Pulling" || e.reason === "Pulled").map((e) => e.message);
    expect(pulled).toEqual(
      expect.arrayContaining(['Pulling image "nginx:1.27"', 'Successfully pulled image "nginx:1.27" in 1.5s (1.5s including waiting)']),
    );
  });

  it("exit=<code>: the restart policy decides — Never fails, OnFailure restarts a failure and completes a success", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("never", "node-0", { simulate: "exit=3", restartPolicy: "Never" }), { namespace: ns });
    await c.admin.create(pods, pod("done", "node-1", { simulate: "exit=0", restartPolicy: "OnFailure" }), { namespace: ns });
    await c.admin.create(pods, pod("retry", "node-1", { simulate: "exit=2", restartPolicy: "OnFailure" }), { namespace: ns });
    const failed = await waitPod("Failed", ns, "never", (p) => p.status?.phase === "Failed" && p);
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: "Error" });
    expect(failed.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(failed.status?.conditions?.find((x) => x.type === "Ready")).toMatchObject({ status: "False", reason: "PodCompleted" });
    const succeeded = await waitPod("Succeeded", ns, "done", (p) => p.status?.phase === "Succeeded" && p);
    expect(succeeded.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    const retried = await waitPod("a restart", ns, "retry", (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && p);
    expect(retried.status?.phase).toBe("Running");
    expect(retried.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ exitCode: 2, reason: "Error" });
    // kubectl's STATUS is the container's reason, as Kubernetes' pod printer gives it.
    const table = await c.kubectl("get", "pods", "-n", ns, "--no-headers");
    expect(table.stdout).toMatch(/^never\s+0\/1\s+Error\s+0\s/m);
    expect(table.stdout).toMatch(/^done\s+0\/1\s+Completed\s+0\s/m);
    expect(table.stdout).toMatch(/^retry\s+\d\/1\s+\S+\s+[1-9]\d* \(\d+s ago\)\s/m);
  });

  it("graceful deletion: Killing, the containers stopped within the grace period, then the pod removed by its node", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("bye", "node-1"), { namespace: ns });
    const ready = await waitPod("Ready", ns, "bye", (p) => isReady(p) && p);
    // Follow every change from here: the last state before the pod is gone is what the node posted.
    const stream = c.admin.watch<Pod>(pods, { namespace: ns, resourceVersion: ready.metadata.resourceVersion });
    await c.admin.delete(pods, "bye", { namespace: ns, gracePeriodSeconds: 30 });
    const seen: Pod[] = [];
    for await (const event of stream) {
      if (event.type === "BOOKMARK") continue;
      seen.push(event.object);
      if (event.type === "DELETED") break;
    }
    stream.close();
    expect(seen[0]?.metadata.deletionTimestamp).toBeTruthy();
    expect(seen[0]?.metadata.deletionGracePeriodSeconds).toBe(30);
    const last = seen[seen.length - 1]!;
    expect(last.status?.phase).toBe("Succeeded");
    expect(last.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    await expect(getPod(ns, "bye")).rejects.toSatisfy(isNotFound);
    const killing = (await eventsOf(ns, "bye")).find((e) => e.reason === "Killing");
    expect(killing).toMatchObject({ type: "Normal", message: "Stopping container web", source: { component: "orchlet", host: "node-1" } });
  });

  it("SIGKILLed: its Nodes go NotReady once the lease expires; started again, it resumes its pods as they were", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("survivor", "node-0"), { namespace: ns });
    const before = await waitPod("Ready", ns, "survivor", (p) => isReady(p) && p);
    const csrCount = (await c.admin.list(csrs)).items.length;

    await c.orchlet.stop("SIGKILL");
    const lost = await eventually(
      "node-0 Unknown",
      async () => {
        const node = await c.admin.get<NodeObject>(nodes, "node-0");
        return node.status?.conditions?.find((x) => x.type === "Ready")?.status === "Unknown" && node;
      },
      { timeoutMs: 20_000 },
    );
    for (const type of ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"]) {
      expect(
        lost.status?.conditions?.find((x) => x.type === type),
        type,
      ).toMatchObject({
        status: "Unknown",
        reason: "NodeStatusUnknown",
        message: "Orchlet stopped posting node status.",
      });
    }
    expect((await c.kubectl("get", "node", "node-0", "--no-headers")).stdout).toMatch(/^node-0\s+NotReady\s/);
    const tainted = await eventually("the unreachable taints", async () => {
      const node = await c.admin.get<NodeObject>(nodes, "node-0");
      return (node.spec?.taints?.length ?? 0) >= 2 && node;
    });
    expect(tainted.spec?.taints?.map((t) => `${t.key}:${t.effect}`).sort()).toEqual([
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/unreachable:NoSchedule",
    ]);
    // Its pods are no longer Ready (the node lifecycle controller's MarkPodsNotReady).
    await waitPod("the pod not Ready", ns, "survivor", (p) => !isReady(p));

    await c.startOrchlet();
    await eventually("node-0 Ready again, untainted", async () => {
      const node = await c.admin.get<NodeObject>(nodes, "node-0");
      return node.status?.conditions?.find((x) => x.type === "Ready")?.status === "True" && !node.spec?.taints?.length;
    });
    const after = await waitPod("the pod Ready again", ns, "survivor", (p) => isReady(p) && p);
    // The same pod, the same container, never restarted: resumed, not recreated.
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.status?.podIP).toBe(before.status?.podIP);
    expect(after.status?.containerStatuses?.[0]).toMatchObject({
      containerID: before.status?.containerStatuses?.[0]?.containerID,
      restartCount: 0,
      state: { running: { startedAt: before.status?.containerStatuses?.[0]?.state?.running?.startedAt } },
    });
    // It kept its certificates: no new request.
    expect((await c.admin.list(csrs)).items.length).toBe(csrCount);
  });
});
