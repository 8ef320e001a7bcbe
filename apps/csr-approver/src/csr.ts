// The parts of a CertificateSigningRequest the approver reads: where the resource lives, its
// conditions, and the PKCS#10 request in `spec.request`.
import type { CertificateSigningRequest, NamingProfile } from "@orch/api";
import type { ResourceRef } from "@orch/client";
import { type ParsedCertificateRequest, parseCertificateRequest, pemBlocks } from "@orch/pki";

export type Csr = CertificateSigningRequest;

export const csrResource = (profile: NamingProfile): ResourceRef => ({
  group: profile.group("certificates"),
  version: "v1",
  plural: "certificatesigningrequests",
  namespaced: false,
});

export const hasTrueCondition = (csr: Csr, type: string): boolean =>
  (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");

/** Kubernetes' ParseCSR: the first PEM block of the (base64 on the wire) request must be a CERTIFICATE REQUEST. */
export function parseRequest(csr: Csr): ParsedCertificateRequest {
  // PEM is ASCII; latin1 keeps any other byte as one character.
  const block = pemBlocks(Buffer.from(csr.spec.request, "base64").toString("latin1"))[0];
  if (block?.type !== "CERTIFICATE REQUEST") throw new Error("PEM block type must be CERTIFICATE REQUEST");
  return parseCertificateRequest(block.der);
}
