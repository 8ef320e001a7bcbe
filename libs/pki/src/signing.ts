// How Kubernetes' local CSR signer turns an approved request into a certificate
// (pkg/controller/certificates/signer/signer.go and authority/policies.go, PermissiveSigningPolicy):
// the lifetime is the request's expirationSeconds within the signer's bounds, notBefore is backdated
// so clients with a slightly slow clock accept the certificate at once, and the subject, SANs and key
// come from the request while the usages come from the API object.
import { issueCertificate } from "./certificate.js";
import type { CertificateAndKey } from "./certificate.js";
import { parseCertificateRequest } from "./request.js";
import type { KeyUsage } from "./usages.js";

/** notBefore is this far in the past (Kubernetes' Backdate, 5 minutes). */
export const SIGNING_BACKDATE_SECONDS = 5 * 60;
/** Lifetimes below this are "short": their notAfter is not backdated (5 minutes is about 1% of 8 hours). */
export const SHORT_LIFETIME_SECONDS = 8 * 3600;
/** The shortest lifetime issued, twice the backdate, whatever the request asks for. */
export const MIN_LIFETIME_SECONDS = 10 * 60;

/**
 * The lifetime to issue (signer.duration): the requested `expirationSeconds`, capped at the signer's
 * maximum (`--cluster-signing-duration`) and raised to 10 minutes; the maximum when none is requested.
 */
export function certificateLifetimeSeconds(expirationSeconds: number | undefined, maxSeconds: number): number {
  if (expirationSeconds === undefined) return maxSeconds;
  if (expirationSeconds > maxSeconds) return maxSeconds;
  if (expirationSeconds < MIN_LIFETIME_SECONDS) return MIN_LIFETIME_SECONDS;
  return expirationSeconds;
}

/**
 * PermissiveSigningPolicy's validity: notBefore = now − 5 min; notAfter = now + lifetime − 5 min, or
 * now + lifetime for a short-lived certificate. (The cap at the CA's own notAfter is issueCertificate's.)
 */
export function signingValidity(lifetimeSeconds: number, now: Date = new Date()): { notBefore: Date; notAfter: Date } {
  // Certificates carry whole seconds: truncate once here so both ends move together.
  const t = Math.floor(now.getTime() / 1000) * 1000;
  const backdate = SIGNING_BACKDATE_SECONDS * 1000;
  const notAfter = lifetimeSeconds < SHORT_LIFETIME_SECONDS ? t + lifetimeSeconds * 1000 : t + lifetimeSeconds * 1000 - backdate;
  return { notBefore: new Date(t - backdate), notAfter: new Date(notAfter) };
}

export interface SignCertificateRequestOptions {
  ca: CertificateAndKey;
  /** The PKCS#10 request, PEM ("CERTIFICATE REQUEST") or DER. */
  request: string | Uint8Array;
  /** Kubernetes usage strings (`spec.usages`); an unknown one fails the signing. */
  usages: readonly string[];
  /** From certificateLifetimeSeconds. */
  lifetimeSeconds: number;
  /** Default: now. */
  now?: Date;
}

/**
 * Signs a certificate request with `ca` as Kubernetes' signer does: the request's self-signature must
 * hold; subject (common name and organizations, the attributes identity uses) and SANs are copied,
 * any extension the request asks for is not; not a CA. Returns the certificate as PEM.
 */
export async function signCertificateRequest(options: SignCertificateRequestOptions): Promise<string> {
  const request = parseCertificateRequest(options.request);
  if (!request.signatureValid) throw new Error("unable to verify certificate request signature");
  const { notBefore, notAfter } = signingValidity(options.lifetimeSeconds, options.now);
  const { certPem } = await issueCertificate({
    ca: options.ca,
    subject: request.subject,
    dnsNames: request.dnsNames,
    ipAddresses: request.ipAddresses,
    emailAddresses: request.emailAddresses,
    uris: request.uris,
    // issueCertificate refuses unknown usage strings, as keyUsagesFromStrings does.
    usages: options.usages as readonly KeyUsage[],
    notBefore,
    validitySeconds: (notAfter.getTime() - notBefore.getTime()) / 1000,
    publicKeyPem: request.publicKeyPem,
  });
  return certPem;
}
