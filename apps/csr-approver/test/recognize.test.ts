import { namingProfile } from "@orch/api";
import { createCertificateRequest } from "@orch/pki";
import type { CreateCertificateRequestOptions } from "@orch/pki";
import { describe, expect, it } from "vitest";
import { type Csr, accessReviewFor, awaitsApproval, isNodeClientCert, parseRequest, recognize } from "../src/index.js";

const orch = namingProfile("orch");
const kubernetes = namingProfile("kubernetes");
const CLIENT = ["digital signature", "key encipherment", "client auth"];
const node = { commonName: "system:node:n1", organizations: ["system:nodes"] };

async function csrOf(options: CreateCertificateRequestOptions, spec: Partial<Csr["spec"]> = {}, status: Csr["status"] = {}): Promise<Csr> {
  const { csrPem } = await createCertificateRequest(options);
  return {
    apiVersion: "certificates.orch.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name: "r" },
    spec: { request: Buffer.from(csrPem).toString("base64"), signerName: orch.signers.apiserverClientNodeAgent, usages: CLIENT, ...spec },
    status,
  };
}

describe("recognize (the approver's recognisers)", () => {
  it("asks for selfnodeclient, then nodeclient, when the requester is the node it names", async () => {
    const csr = await csrOf(node, { username: "system:node:n1", groups: ["system:nodes", "system:authenticated"] });
    expect(recognize(orch, csr, parseRequest(csr))).toEqual([
      { subresource: "selfnodeclient", message: "Auto approving self orchlet client certificate after SubjectAccessReview." },
      { subresource: "nodeclient", message: "Auto approving orchlet client certificate after SubjectAccessReview." },
    ]);
  });

  it("asks only for nodeclient when someone else requests a node's certificate", async () => {
    const csr = await csrOf(node, { username: "orch-admin" });
    expect(recognize(orch, csr, parseRequest(csr)).map((r) => r.subresource)).toEqual(["nodeclient"]);
  });

  it("speaks of the kubelet in the kubernetes profile", async () => {
    const csr = await csrOf(node, { username: "system:node:n1", signerName: kubernetes.signers.apiserverClientNodeAgent });
    expect(recognize(kubernetes, csr, parseRequest(csr)).map((r) => r.message)).toEqual([
      "Auto approving self kubelet client certificate after SubjectAccessReview.",
      "Auto approving kubelet client certificate after SubjectAccessReview.",
    ]);
  });

  it("recognises nothing that is not exactly a node client certificate request", async () => {
    const cases: Array<[CreateCertificateRequestOptions, Partial<Csr["spec"]>]> = [
      [node, { signerName: orch.signers.apiserverClient }],
      [node, { signerName: orch.signers.nodeAgentServing }],
      [node, { signerName: "example.com/custom" }],
      [{ ...node, organizations: ["system:nodes", "system:masters"] }, {}],
      [{ ...node, organizations: [] }, {}],
      [{ ...node, commonName: "n1" }, {}],
      [{ ...node, dnsNames: ["n1.example"] }, {}],
      [{ ...node, ipAddresses: ["10.0.0.1"] }, {}],
      [{ ...node, emailAddresses: ["n1@example.com"] }, {}],
      [{ ...node, uris: ["spiffe://cluster/n1"] }, {}],
      [node, { usages: ["client auth"] }],
      [node, { usages: [...CLIENT, "server auth"] }],
      [node, { usages: ["digital signature", "key encipherment"] }],
    ];
    for (const [options, spec] of cases) {
      const csr = await csrOf(options, { username: "system:node:n1", ...spec });
      expect(recognize(orch, csr, parseRequest(csr)), JSON.stringify([options, spec])).toEqual([]);
    }
    // Key encipherment is optional (non-RSA keys), and usage order does not matter.
    const noRsa = await csrOf(node, { usages: ["client auth", "digital signature"] });
    expect(isNodeClientCert(orch, noRsa, parseRequest(noRsa))).toBe(true);
  });
});

describe("awaitsApproval", () => {
  it("is true only without a decision, a failure or a certificate", async () => {
    const csr = await csrOf(node);
    expect(awaitsApproval(csr)).toBe(true);
    for (const type of ["Approved", "Denied", "Failed"]) {
      expect(awaitsApproval({ ...csr, status: { conditions: [{ type, status: "True" }] } })).toBe(false);
    }
    expect(awaitsApproval({ ...csr, status: { certificate: "Zm9v" } })).toBe(false);
  });
});

describe("accessReviewFor", () => {
  it("is a SubjectAccessReview of the requester recorded in the spec, empty fields left out", async () => {
    const csr = await csrOf(node, { username: "system:node:n1", uid: "u-1", groups: ["system:nodes"], extra: { scopes: ["a", "b"] } });
    const attributes = {
      group: "certificates.orch.io",
      resource: "certificatesigningrequests",
      verb: "create",
      subresource: "selfnodeclient",
    };
    expect(accessReviewFor(orch, csr, attributes)).toEqual({
      apiVersion: "authorization.orch.io/v1",
      kind: "SubjectAccessReview",
      spec: { user: "system:node:n1", uid: "u-1", groups: ["system:nodes"], extra: { scopes: ["a", "b"] }, resourceAttributes: attributes },
    });
    const anonymous = await csrOf(node, { extra: {} });
    expect(accessReviewFor(kubernetes, anonymous, attributes)).toEqual({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: { resourceAttributes: attributes },
    });
  });
});
