// Both certificate controllers in the kubernetes naming profile: Kubernetes' own signer names and
// groups, as real processes against a real apiserver process and nats-server.
import { parseCertificate } from "@orch/pki";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppProcess, approve, createCsr, issuedCertificate, startApp, useCluster, whoAmI } from "../../csr-signer/test/cluster.js";
import type { Csr } from "../src/index.js";

const cluster = useCluster("kubernetes");
const CLIENT = ["digital signature", "key encipherment", "client auth"];

describe("csr-approver and csr-signer in the kubernetes profile", () => {
  const apps: AppProcess[] = [];
  beforeAll(() => {
    // Each with its own least-privilege identity, as the apiserver's bootstrap policy grants it.
    apps.push(startApp("csr-approver", cluster, { identity: "own" }), startApp("csr-signer", cluster, { identity: "own" }));
  });
  afterAll(() => Promise.all(apps.map((a) => a.stop())));

  it("signs an approved kubernetes.io/kube-apiserver-client request; the certificate authenticates", async () => {
    expect(cluster.profile.signers.apiserverClient).toBe("kubernetes.io/kube-apiserver-client");
    const { keyPem } = await createCsr(
      cluster.admin,
      cluster,
      "jane",
      { signerName: "kubernetes.io/kube-apiserver-client", usages: CLIENT },
      { commonName: "jane", organizations: ["devs"] },
    );
    await approve(cluster, "jane");
    const certPem = await issuedCertificate(cluster, "jane");
    expect(await whoAmI(cluster, certPem, keyPem)).toEqual({ userInfo: { username: "jane", groups: ["devs", "system:authenticated"] } });
  });

  it("auto-approves and signs a kubernetes.io/kube-apiserver-client-kubelet request, speaking of the kubelet", async () => {
    await createCsr(
      cluster.admin,
      cluster,
      "node-n1",
      { signerName: "kubernetes.io/kube-apiserver-client-kubelet", usages: CLIENT },
      { commonName: "system:node:n1", organizations: ["system:nodes"] },
    );
    const certPem = await issuedCertificate(cluster, "node-n1");
    expect(parseCertificate(certPem).subject.commonName).toBe("system:node:n1");
    const csr = await cluster.admin.get<Csr>(cluster.csrs, "node-n1");
    expect(csr.status.conditions?.find((c) => c.type === "Approved")).toMatchObject({
      reason: "AutoApproved",
      message: "Auto approving kubelet client certificate after SubjectAccessReview.",
    });
  });
});
