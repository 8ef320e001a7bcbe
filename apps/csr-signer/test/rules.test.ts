import { type CertificateSigningRequest as Csr, namingProfile } from "@orch/api";
import { createCertificateRequest, parseCertificateRequest } from "@orch/pki";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_LIFETIME_SECONDS, awaitsSigning, isWellKnownSigner, signerConfig, signerRefusal } from "../src/index.js";

const orch = namingProfile("orch");
const kubernetes = namingProfile("kubernetes");
const CLIENT = ["digital signature", "key encipherment", "client auth"];

const csr = (signerName: string, conditions: Array<{ type: string; status: string }>, certificate?: string): Csr => ({
  metadata: { name: "r" },
  spec: { request: "", signerName, usages: CLIENT },
  status: { conditions, ...(certificate ? { certificate } : {}) },
});
const approved = [{ type: "Approved", status: "True" }];

describe("awaitsSigning", () => {
  it("is true for an approved request of each well-known signer, in either profile", () => {
    for (const profile of [orch, kubernetes]) {
      const { apiserverClient, apiserverClientNodeAgent, nodeAgentServing } = profile.signers;
      for (const signer of [apiserverClient, apiserverClientNodeAgent, nodeAgentServing]) {
        expect(awaitsSigning(profile, csr(signer, approved)), signer).toBe(true);
      }
    }
  });

  it("is false when not approved, denied, failed or issued, and for custom and legacy signers", () => {
    const signer = orch.signers.apiserverClient;
    expect(awaitsSigning(orch, csr(signer, []))).toBe(false);
    expect(awaitsSigning(orch, csr(signer, [{ type: "Denied", status: "True" }]))).toBe(false);
    expect(awaitsSigning(orch, csr(signer, [...approved, { type: "Failed", status: "True" }]))).toBe(false);
    expect(awaitsSigning(orch, csr(signer, approved, "Zm9v"))).toBe(false);
    expect(awaitsSigning(orch, csr("example.com/custom", approved))).toBe(false);
    expect(awaitsSigning(orch, csr(orch.signers.legacyUnknown, approved))).toBe(false);
    // The other profile's names are custom names here.
    expect(awaitsSigning(orch, csr(kubernetes.signers.apiserverClient, approved))).toBe(false);
    expect(isWellKnownSigner(kubernetes, kubernetes.signers.nodeAgentServing)).toBe(true);
  });
});

describe("signerRefusal", () => {
  it("applies each signer's own rule, with Kubernetes' messages", async () => {
    const client = parseCertificateRequest((await createCertificateRequest({ commonName: "jane", organizations: ["devs"] })).csrPem);
    const { signers } = orch;
    expect(signerRefusal(orch, signers.apiserverClient, client, CLIENT)).toBeUndefined();
    expect(signerRefusal(orch, signers.apiserverClient, client, ["client auth", "server auth"])).toBe(
      "invalid usage for client certificate: server auth",
    );
    expect(signerRefusal(orch, signers.apiserverClient, client, ["digital signature"])).toBe(
      "missing required usage for client certificate: client auth",
    );
    expect(signerRefusal(orch, signers.apiserverClientNodeAgent, client, CLIENT)).toBe("subject organization is not system:nodes");
    expect(signerRefusal(orch, signers.nodeAgentServing, client, CLIENT)).toBe("subject organization is not system:nodes");

    const node = parseCertificateRequest(
      (await createCertificateRequest({ commonName: "system:node:n1", organizations: ["system:nodes"] })).csrPem,
    );
    expect(signerRefusal(kubernetes, kubernetes.signers.apiserverClientNodeAgent, node, CLIENT)).toBeUndefined();
    expect(signerRefusal(kubernetes, kubernetes.signers.nodeAgentServing, node, ["digital signature", "server auth"])).toBe(
      "DNS or IP subjectAltName is required",
    );
  });
});

describe("signerConfig", () => {
  it("signs with the apiserver's CA in the data directory for at most a year by default", () => {
    expect(signerConfig({ ORCH_DATA_DIR: "/var/orch" })).toEqual({
      certFile: "/var/orch/pki/ca.crt",
      keyFile: "/var/orch/pki/ca.key",
      maxLifetimeSeconds: DEFAULT_MAX_LIFETIME_SECONDS,
      caRecheckMs: 30_000,
    });
    expect(DEFAULT_MAX_LIFETIME_SECONDS).toBe(8760 * 3600);
  });

  it("takes other files and another maximum from the environment, and refuses a bad duration", () => {
    expect(
      signerConfig({
        ORCH_DATA_DIR: "/d",
        ORCH_SIGNER_CERT_FILE: "/etc/ca.pem",
        ORCH_SIGNER_KEY_FILE: "/etc/ca-key.pem",
        ORCH_CLUSTER_SIGNING_DURATION_SECONDS: "3600",
        ORCH_SIGNER_CA_RECHECK_SECONDS: "0.5",
      }),
    ).toEqual({ certFile: "/etc/ca.pem", keyFile: "/etc/ca-key.pem", maxLifetimeSeconds: 3600, caRecheckMs: 500 });
    for (const bad of ["0", "-5", "1.5", "1y"]) {
      expect(() => signerConfig({ ORCH_CLUSTER_SIGNING_DURATION_SECONDS: bad })).toThrow(
        /ORCH_CLUSTER_SIGNING_DURATION_SECONDS must be a positive whole number/,
      );
    }
  });
});
