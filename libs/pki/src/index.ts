export { pemBlocks, toPem } from "./pem.js";
export type { PemBlock } from "./pem.js";
export type { Subject, SubjectAltNames } from "./asn1.js";
export type { KeyType, PublicKeyAlgorithm } from "./keys.js";
export { KEY_USAGES } from "./usages.js";
export type { KeyUsage } from "./usages.js";
export { createCA, issueCertificate, parseCertificate, parseCertificates, verifyChain } from "./certificate.js";
export type { CertificateAndKey, CreateCAOptions, IssueCertificateOptions, ParsedCertificate } from "./certificate.js";
export { createCertificateRequest, csrRequestDer, parseCertificateRequest } from "./request.js";
export type { CreateCertificateRequestOptions, ParsedCertificateRequest } from "./request.js";
export {
  MIN_LIFETIME_SECONDS,
  SHORT_LIFETIME_SECONDS,
  SIGNING_BACKDATE_SECONDS,
  certificateLifetimeSeconds,
  signCertificateRequest,
  signingValidity,
} from "./signing.js";
export type { SignCertificateRequestOptions } from "./signing.js";
export {
  apiserverClientUsagesRefusal,
  nodeClientRequestRefusal,
  nodeServingRequestRefusal,
  wellKnownSignerRefusal,
} from "./signer-rules.js";
export type { NodeIdentity, SignerRefusal, WellKnownSigners } from "./signer-rules.js";
