// Valid certificate material for tests that only need a CertificateSigningRequest or a
// ClusterTrustBundle to pass validation (a signed request, a CA certificate).
import { createCA, createCertificateRequest } from "@orch/pki";

export const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A CA certificate: a valid one-anchor trust bundle. */
export const caCertPem = (await createCA({ commonName: "fixture-ca" })).certPem;

/** A self-signed PKCS#10 request, base64 as `spec.request` carries it. */
export const csrRequest = b64((await createCertificateRequest({ commonName: "fixture" })).csrPem);
