// The simulated nodes under ORCH_PROFILE=kubernetes speak as kubelet does: Kubernetes' signers, the
// kube-node-lease namespace, kubelet's reasons, messages and event source, and the annotation under
// kubernetes.io; the node lifecycle controller's words are Kubernetes' too.
import type { CertificateSigningRequest, Pod } from "@orch/api";
import type { KubeObject } from "@orch/client";
import { eventually } from "@orch/testing";
import { describe, expect, it } from "vitest";
import { events, freshNamespace, isReady, nodes, pod, pods, useCluster } from "./cluster.js";

interface NodeObject extends KubeObject {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe("orchlet under the kubernetes profile", () => {
  const c = useCluster("kubernetes");

  it("registers its nodes with kubelet's client signer, reasons and lease namespace", async () => {
    const requests = (
      await c.admin.list<CertificateSigningRequest>({
        group: "certificates.k8s.io",
        version: "v1",
        plural: "certificatesigningrequests",
        namespaced: false,
      })
    ).items;
    expect(
      requests.filter((r) => r.spec.signerName === "kubernetes.io/kube-apiserver-client-kubelet" && r.status?.certificate),
    ).toHaveLength(2);
    const node = await c.admin.get<NodeObject>(nodes, "node-0");
    expect(node.status?.conditions?.find((x) => x.type === "Ready")).toMatchObject({
      status: "True",
      reason: "KubeletReady",
      message: "kubelet is posting ready status",
    });
    expect(node.metadata?.labels).toMatchObject({ "kubernetes.io/hostname": "node-0", "kubernetes.io/os": "linux" });
    const lease = await c.admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(
      { group: "coordination.k8s.io", version: "v1", plural: "leases", namespaced: true },
      "node-1",
      { namespace: "kube-node-lease" },
    );
    expect(lease.spec?.holderIdentity).toBe("node-1");
  });

  it("runs pods as kubelet, and reads kubernetes.io/orchlet-simulate", async () => {
    const ns = await freshNamespace(c.admin);
    await c.admin.create(pods, pod("web", "node-0"), { namespace: ns });
    await c.admin.create(pods, pod("stuck", "node-0", { simulate: "never-ready", annotationKey: "kubernetes.io/orchlet-simulate" }), {
      namespace: ns,
    });
    await eventually("web Ready", async () => isReady(await c.admin.get<Pod>(pods, "web", { namespace: ns })));
    const stuck = await c.admin.get<Pod>(pods, "stuck", { namespace: ns });
    expect(stuck.status?.phase).toBe("Running");
    expect(isReady(stuck)).toBe(false);
    const started = await eventually("the Started event", async () =>
      (await c.admin.list<KubeObject & { reason?: string; source?: { component?: string } }>(events, { namespace: ns })).items.find(
        (e) => e.reason === "Started",
      ),
    );
    expect(started.source?.component).toBe("kubelet");
  });

  it("killed, its nodes are marked with Kubernetes' words", async () => {
    await c.orchlet.stop("SIGKILL");
    const node = await eventually(
      "node-1 Unknown",
      async () => {
        const n = await c.admin.get<NodeObject>(nodes, "node-1");
        return n.status?.conditions?.find((x) => x.type === "Ready")?.status === "Unknown" && n;
      },
      { timeoutMs: 20_000 },
    );
    expect(node.status?.conditions?.find((x) => x.type === "Ready")).toMatchObject({
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
    });
  });
});
