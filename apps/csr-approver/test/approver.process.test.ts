// The csr-approver and csr-signer as real processes against a real apiserver process and nats-server:
// a node agent's client certificate request is approved after a SubjectAccessReview and then issued;
// nothing else is approved. The requesters are real identities: client certificates from the cluster CA.
import { ApiClient, type KubeObject } from "@orch/client";
import { type KeyUsage, issueCertificate, parseCertificate, verifyChain } from "@orch/pki";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AppProcess,
  type Cluster,
  createCsr,
  issuedCertificate,
  startApp,
  useCluster,
  waitFor,
  whoAmI,
} from "../../csr-signer/test/cluster.js";
import type { Csr } from "../src/index.js";

const cluster = useCluster("orch");
const CLIENT: KeyUsage[] = ["digital signature", "key encipherment", "client auth"];

/** A client authenticated as `username` in `groups`, with a certificate the cluster CA issued directly (as a bootstrap would). */
async function clientAs(c: Cluster, username: string, groups: string[]): Promise<ApiClient> {
  const pki = join(c.apiserver.dataDir, "pki");
  const ca = { certPem: readFileSync(join(pki, "ca.crt"), "utf8"), keyPem: readFileSync(join(pki, "ca.key"), "utf8") };
  const { certPem, keyPem } = await issueCertificate({
    ca,
    subject: { commonName: username, organizations: groups },
    usages: CLIENT,
    validitySeconds: 3600,
  });
  return new ApiClient({ server: c.apiserver.url, ca: c.caPem, cert: certPem, key: keyPem! }, { userAgent: "csr-approver-test" });
}

/** RBAC as a cluster operator sets it up for node agents (kubeadm's bindings of Kubernetes' bootstrap roles). */
async function grant(c: Cluster, name: string, rules: object[], subject: { kind: "User" | "Group"; name: string }): Promise<void> {
  const group = c.profile.group("rbac.authorization");
  const roles = { group, version: "v1", plural: "clusterroles", namespaced: false };
  const bindings = { group, version: "v1", plural: "clusterrolebindings", namespaced: false };
  await c.admin.create<KubeObject>(roles, { apiVersion: `${group}/v1`, kind: "ClusterRole", metadata: { name }, rules } as KubeObject);
  await c.admin.create<KubeObject>(bindings, {
    apiVersion: `${group}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: group, kind: "ClusterRole", name },
    subjects: [{ apiGroup: group, ...subject }],
  } as KubeObject);
}

const approvalOf = async (c: Cluster, name: string) =>
  (await c.admin.get<Csr>(c.csrs, name)).status.conditions?.find((x) => x.type === "Approved");

describe("csr-approver with csr-signer", () => {
  const apps: AppProcess[] = [];
  const clients: ApiClient[] = [];
  let certificates: string;

  beforeAll(async () => {
    // Each with its own least-privilege identity, as the apiserver's bootstrap policy grants it.
    apps.push(startApp("csr-approver", cluster, { identity: "own" }), startApp("csr-signer", cluster, { identity: "own" }));
    certificates = cluster.profile.group("certificates");
    // Anyone may ask for certificates; nodes may ask for their own client certificate to be approved.
    await grant(
      cluster,
      "csr-requesters",
      [{ apiGroups: [certificates], resources: ["certificatesigningrequests"], verbs: ["create", "get", "list", "watch"] }],
      {
        kind: "Group",
        name: "system:authenticated",
      },
    );
    await grant(
      cluster,
      "node-self-client",
      [{ apiGroups: [certificates], resources: ["certificatesigningrequests/selfnodeclient"], verbs: ["create"] }],
      {
        kind: "Group",
        name: "system:nodes",
      },
    );
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(apps.map((a) => a.stop()));
  });

  it("auto-approves a node's request for its own client certificate; the issued certificate is that node", async () => {
    const node = await clientAs(cluster, "system:node:n1", ["system:nodes"]);
    clients.push(node);
    const { keyPem } = await createCsr(
      node,
      cluster,
      "node-n1",
      { signerName: cluster.profile.signers.apiserverClientNodeAgent, usages: CLIENT },
      { commonName: "system:node:n1", organizations: ["system:nodes"] },
    );
    const certPem = await issuedCertificate(cluster, "node-n1");
    expect(await approvalOf(cluster, "node-n1")).toMatchObject({
      type: "Approved",
      status: "True",
      reason: "AutoApproved",
      message: "Auto approving self orchlet client certificate after SubjectAccessReview.",
    });
    expect(verifyChain(certPem, cluster.caPem)).toBe(true);
    expect(parseCertificate(certPem).subject).toEqual({ commonName: "system:node:n1", organizations: ["system:nodes"] });
    expect(await whoAmI(cluster, certPem, keyPem)).toEqual({
      userInfo: { username: "system:node:n1", groups: ["system:nodes", "system:authenticated"] },
    });
  });

  it("auto-approves a node client certificate requested on a node's behalf by someone allowed to (nodeclient)", async () => {
    await createCsr(
      cluster.admin,
      cluster,
      "node-n2-by-admin",
      { signerName: cluster.profile.signers.apiserverClientNodeAgent, usages: ["digital signature", "client auth"] },
      { commonName: "system:node:n2", organizations: ["system:nodes"] },
    );
    await issuedCertificate(cluster, "node-n2-by-admin");
    expect((await approvalOf(cluster, "node-n2-by-admin"))?.message).toBe(
      "Auto approving orchlet client certificate after SubjectAccessReview.",
    );
  });

  it("approves nothing else: a requester without the permission, another node's name, another signer", async () => {
    const { signers } = cluster.profile;
    const mallory = await clientAs(cluster, "mallory", ["devs"]);
    const n3 = await clientAs(cluster, "system:node:n3", ["system:nodes"]);
    clients.push(mallory, n3);
    const node = (n: string) => ({ commonName: `system:node:${n}`, organizations: ["system:nodes"] });
    // mallory may create requests but not ask for node certificates.
    await createCsr(mallory, cluster, "by-mallory", { signerName: signers.apiserverClientNodeAgent, usages: CLIENT }, node("n1"));
    // A node may have its own certificate approved, not another node's (that is nodeclient).
    await createCsr(n3, cluster, "n3-for-n1", { signerName: signers.apiserverClientNodeAgent, usages: CLIENT }, node("n1"));
    // Client certificates for people are for people to approve, whoever asks.
    await createCsr(cluster.admin, cluster, "person", { signerName: signers.apiserverClient, usages: CLIENT }, { commonName: "jane" });
    // Processed after them by the same controllers.
    await createCsr(n3, cluster, "sentinel", { signerName: signers.apiserverClientNodeAgent, usages: CLIENT }, node("n3"));
    await waitFor("the sentinel's approval", () => approvalOf(cluster, "sentinel"));
    // The approver's workers run side by side, so the sentinel alone does not say the other two were
    // decided: each refusal is reported (and retried later), which does. "person" is not the approver's
    // signer; the signer has issued the sentinel, requested after it.
    const [approver] = apps;
    for (const name of ["by-mallory", "n3-for-n1"]) {
      await waitFor(`the approver's refusal of ${name}`, () => approver!.output().includes(`reconcile ${name} failed`));
    }
    await issuedCertificate(cluster, "sentinel");
    for (const name of ["by-mallory", "n3-for-n1", "person"]) {
      const csr = await cluster.admin.get<Csr>(cluster.csrs, name);
      expect(csr.status.conditions ?? [], name).toEqual([]);
      expect(csr.status.certificate, name).toBeUndefined();
    }
  });
});
