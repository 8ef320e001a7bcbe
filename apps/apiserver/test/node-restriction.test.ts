// Node agents' identities: the bootstrap credential may only ask for node certificates; a node
// (system:node:<name>, group system:nodes) has Kubernetes' system:node rights, and the node
// restriction in admission limits its writes to its own Node, Lease and pods (Kubernetes'
// NodeRestriction, with its messages).
import { createCertificateRequest, issueCertificate } from "@orch/pki";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { b64 } from "./certificate-fixtures.js";
import { Client, freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();

const NODES = "/api/v1/nodes";
/** What the orchlet sends for a node: `system:node:<name>` in `system:nodes`. */
const nodeRequest = b64((await createCertificateRequest({ commonName: "system:node:node-c", organizations: ["system:nodes"] })).csrPem);
const LEASES = "/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases";
const CSRS = "/apis/certificates.orch.io/v1/certificatesigningrequests";

function fromKubeconfig(file: string): Client {
  const config = parseYaml(readFileSync(join(t.dataDir, "controllers", file), "utf8"));
  const pem = (b64: string) => Buffer.from(b64, "base64").toString("utf8");
  const user = config.users[0].user;
  return new Client(t.server.url, {
    ca: pem(config.clusters[0].cluster["certificate-authority-data"]),
    cert: pem(user["client-certificate-data"]),
    key: pem(user["client-key-data"]),
  });
}

/** A client certificate from the cluster CA for `system:node:<name>` in `system:nodes` (what the csr-signer issues). */
async function nodeClient(name: string): Promise<Client> {
  const pki = join(t.dataDir, "pki");
  const ca = { certPem: readFileSync(join(pki, "ca.crt"), "utf8"), keyPem: readFileSync(join(pki, "ca.key"), "utf8") };
  const { certPem, keyPem } = await issueCertificate({
    ca,
    subject: { commonName: `system:node:${name}`, organizations: ["system:nodes"] },
    usages: ["digital signature", "client auth"],
    validitySeconds: 3600,
  });
  return new Client(t.server.url, { ca: ca.certPem, cert: certPem, key: keyPem! });
}

const node = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: "v1", kind: "Node", metadata: { name }, ...extra });
const pod = (name: string, nodeName: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { nodeName, containers: [{ name: "c", image: "nginx" }] },
});

describe("node agent identities", () => {
  let ns: string;
  let a: Client;
  beforeAll(async () => {
    ns = await freshNamespace(t.api, "nr");
    a = await nodeClient("node-a");
    expect((await t.api.post(NODES, node("node-b"))).status).toBe(201);
    for (const [name, on] of [
      ["on-a", "node-a"],
      ["on-b", "node-b"],
      ["gone-a", "node-a"],
    ]) {
      const r = await t.api.post(`/api/v1/namespaces/${ns}/pods`, pod(name!, on!));
      expect(r.status, r.text).toBe(201);
    }
  });

  it("the bootstrap credential may create certificate requests and nothing else", async () => {
    const bootstrap = fromKubeconfig("orchlet-bootstrap.kubeconfig");
    const review = await bootstrap.post("/apis/authentication.orch.io/v1/selfsubjectreviews", {
      apiVersion: "authentication.orch.io/v1",
      kind: "SelfSubjectReview",
    });
    expect(review.body.status.userInfo).toEqual({
      username: "system:bootstrap:orchlet",
      groups: ["system:bootstrappers", "system:authenticated"],
    });
    const created = await bootstrap.post(CSRS, {
      apiVersion: "certificates.orch.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { generateName: "node-csr-" },
      spec: { request: nodeRequest, signerName: "orch.io/orch-apiserver-client-orchlet", usages: ["digital signature", "client auth"] },
    });
    expect(created.status, created.text).toBe(201);
    expect((await bootstrap.get(`${CSRS}/${created.body.metadata.name}`)).status).toBe(200);
    expect((await bootstrap.get(`/api/v1/namespaces/${ns}/pods`)).status).toBe(403);
    expect((await bootstrap.post(NODES, node("sneaky"))).status).toBe(403);
  });

  it("a node registers itself, posts its status and renews its own lease", async () => {
    const created = await a.post(NODES, node("node-a"));
    expect(created.status, created.text).toBe(201);
    const status = await a.patch(`${NODES}/node-a/status`, { status: { conditions: [{ type: "Ready", status: "True" }] } });
    expect(status.status, status.text).toBe(200);
    const lease = await a.post(LEASES, {
      apiVersion: "coordination.orch.io/v1",
      kind: "Lease",
      metadata: { name: "node-a" },
      spec: { holderIdentity: "node-a" },
    });
    expect(lease.status, lease.text).toBe(201);
    // Reading is as Kubernetes' system:node: nodes, pods, services.
    expect((await a.get(NODES)).status).toBe(200);
    expect((await a.get("/api/v1/pods")).status).toBe(200);
  });

  it("a node may not write another node, its own taints, or another node's lease", async () => {
    const other = await a.patch(`${NODES}/node-b/status`, { status: { conditions: [{ type: "Ready", status: "False" }] } });
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"');
    const taints = await a.patch(`${NODES}/node-a`, { spec: { taints: [{ key: "k", effect: "NoSchedule" }] } });
    expect(taints.status).toBe(403);
    expect(taints.body.message).toBe('nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints');
    const lease = await a.post(LEASES, { apiVersion: "coordination.orch.io/v1", kind: "Lease", metadata: { name: "node-b" }, spec: {} });
    expect(lease.status).toBe(403);
    expect(lease.body.message).toBe(
      'leases.coordination.orch.io "node-b" is forbidden: can only access node lease with the same name as the requesting node',
    );
  });

  it("a node writes the status of the pods bound to it only, and deletes only those", async () => {
    const own = await a.patch(`/api/v1/namespaces/${ns}/pods/on-a/status`, { status: { phase: "Running" } });
    expect(own.status, own.text).toBe(200);
    const other = await a.patch(`/api/v1/namespaces/${ns}/pods/on-b/status`, { status: { phase: "Running" } });
    expect(other.status).toBe(403);
    expect(other.body.message).toBe(
      'pods "on-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    );
    // Its spec is not the node's to change (RBAC gives a node no update on pods).
    expect((await a.patch(`/api/v1/namespaces/${ns}/pods/on-a`, { metadata: { labels: { x: "y" } } })).status).toBe(403);
    const create = await a.post(`/api/v1/namespaces/${ns}/pods`, pod("new", "node-a"));
    expect(create.status).toBe(403);
    expect(create.body.message).toBe(
      'pods "new" is forbidden: pod does not have "orch.io/config.mirror" annotation, node "node-a" can only create mirror pods',
    );
    const deleteOther = await a.delete(`/api/v1/namespaces/${ns}/pods/on-b`, { gracePeriodSeconds: 0 });
    expect(deleteOther.status).toBe(403);
    expect(deleteOther.body.message).toBe('pods "on-b" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself');
    const deleteOwn = await a.delete(`/api/v1/namespaces/${ns}/pods/gone-a`, { gracePeriodSeconds: 0 });
    expect(deleteOwn.status, deleteOwn.text).toBe(200);
  });

  it("the node-lifecycle-controller may mark nodes and their pods, and not delete them", async () => {
    const controller = fromKubeconfig("node-lifecycle-controller.kubeconfig");
    const status = await controller.patch(`${NODES}/node-b/status`, { status: { conditions: [{ type: "Ready", status: "Unknown" }] } });
    expect(status.status, status.text).toBe(200);
    const taint = await controller.patch(`${NODES}/node-b`, {
      spec: { taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoSchedule" }] },
    });
    expect(taint.status, taint.text).toBe(200);
    expect((await controller.patch(`/api/v1/namespaces/${ns}/pods/on-b/status`, { status: { phase: "Running" } })).status).toBe(200);
    expect((await controller.delete(`${NODES}/node-b`)).status).toBe(403);
    expect((await controller.delete(`/api/v1/namespaces/${ns}/pods/on-b`)).status).toBe(403);
  });
});
