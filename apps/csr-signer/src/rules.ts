// Which requests the signer handles and what each well-known signer refuses (Kubernetes'
// pkg/controller/certificates/signer/signer.go: handle and getCSRVerificationFuncForSignerName).
import { type ParsedCertificateRequest, wellKnownSignerRefusal } from "@orch/pki";
import { type CertificateSigningRequest as Csr, type NamingProfile, csrConditionTrue } from "@orch/api";

/** The signers this controller issues for (and publishes the CA of); requests to any other (custom) signer are left alone. */
export function wellKnownSigners(profile: NamingProfile): string[] {
  const { apiserverClient, apiserverClientNodeAgent, nodeAgentServing } = profile.signers;
  return [apiserverClient, apiserverClientNodeAgent, nodeAgentServing];
}

export function isWellKnownSigner(profile: NamingProfile, signerName: string): boolean {
  return wellKnownSigners(profile).includes(signerName);
}

/** Approved (and not denied), not failed, not yet issued, for one of our signers. */
export function awaitsSigning(profile: NamingProfile, csr: Csr): boolean {
  return (
    isWellKnownSigner(profile, csr.spec.signerName) &&
    csrConditionTrue(csr, "Approved") &&
    !csrConditionTrue(csr, "Denied") &&
    !csrConditionTrue(csr, "Failed") &&
    !csr.status?.certificate
  );
}

/** Why the well-known signer `signerName` will not issue for this request, or undefined when it will. */
export const signerRefusal = (
  profile: NamingProfile,
  signerName: string,
  request: ParsedCertificateRequest,
  usages: readonly string[],
): string | undefined => wellKnownSignerRefusal(profile.signers, profile.nodes, signerName, request, usages)?.message;
