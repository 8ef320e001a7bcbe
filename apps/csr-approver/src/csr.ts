// The request of a CertificateSigningRequest as the approver reads it.
import type { CertificateSigningRequest } from "@orch/api";
import { type ParsedCertificateRequest, csrRequestDer, parseCertificateRequest } from "@orch/pki";

export type Csr = CertificateSigningRequest;

/** Kubernetes' ParseCSR: `spec.request` must hold a CERTIFICATE REQUEST; throws otherwise. */
export const parseRequest = (csr: Csr): ParsedCertificateRequest =>
  parseCertificateRequest(csrRequestDer(Buffer.from(csr.spec.request, "base64")));
