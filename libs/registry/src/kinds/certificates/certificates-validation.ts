// The certificates group's content checks, with Kubernetes' messages: signer names (both kinds),
// `[]byte` fields, and what the PEM in a CertificateSigningRequest must hold.
import { type FieldError, type FieldPath, fieldError, goQuote, isDNS1123Label, isDNS1123Subdomain } from "@orch/machinery";
import { type ParsedCertificateRequest, csrRequestDer, parseCertificateRequest, parseCertificates, pemBlocks } from "@orch/pki";

const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_LABEL_MAX = 63;
const DOMAIN_MAX = DNS1123_SUBDOMAIN_MAX;
// The path is `<namespace>.<name>` at most: a label, a dot and a subdomain.
const SIGNER_NAME_MAX = DOMAIN_MAX + 1 + (DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1);

/**
 * ValidateSignerName: `<domain>/<path>`, the domain of at least two DNS labels, the path of dot-separated
 * DNS subdomains. Only the first bad label of each part is reported, as Kubernetes does.
 */
export function validateSignerName(path: FieldPath, signerName: string): FieldError[] {
  if (signerName === "") return [fieldError.required(path)];
  const segments = signerName.split("/");
  const [domain, signerPath] = segments;
  if (segments.length !== 2 || domain === undefined || signerPath === undefined) {
    return [fieldError.invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  }
  const errs: FieldError[] = [];
  // Lengths are in bytes, as Go's len().
  if (Buffer.byteLength(domain) > DOMAIN_MAX) errs.push(fieldError.tooLong(path, "", DOMAIN_MAX));
  const domainLabels = domain.split(".");
  for (const label of domainLabels) {
    const bad = isDNS1123Label(label);
    for (const msg of bad) errs.push(fieldError.invalid(path, domain, `validating label ${goQuote(label)}: ${msg}`));
    if (bad.length > 0) break;
  }
  if (domainLabels.length < 2) {
    errs.push(fieldError.invalid(path, domain, "should be a domain with at least two segments separated by dots"));
  }
  for (const label of signerPath.split(".")) {
    const bad = isDNS1123Subdomain(label);
    for (const msg of bad) errs.push(fieldError.invalid(path, signerPath, `validating label ${goQuote(label)}: ${msg}`));
    if (bad.length > 0) break;
  }
  if (Buffer.byteLength(signerName) > SIGNER_NAME_MAX) errs.push(fieldError.tooLong(path, "", SIGNER_NAME_MAX));
  return errs;
}

/**
 * The bytes of a `[]byte` field, base64 in JSON. Go's decoder is strict (padding required) but skips
 * line breaks; undefined when the text is not base64.
 */
function decodeBytes(base64: string): Buffer | undefined {
  const text = base64.replace(/[\r\n]/g, "");
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, "base64");
}

/** PEM is ASCII; latin1 keeps every other byte as one character, so nothing is merged or lost. */
const pemText = (bytes: Buffer): string => bytes.toString("latin1");

// ---- a CertificateSigningRequest's request (spec.request) -------------------------------------------

// CheckSignature's error, by key type (crypto/rsa's ErrVerification for RSA).
const signatureFailure = {
  RSA: "crypto/rsa: verification error",
  ECDSA: "x509: ECDSA verification failure",
  Ed25519: "x509: Ed25519 verification failure",
};

/** ParseCSR + CheckSignature: the first PEM block must be a CERTIFICATE REQUEST signed by its own key. */
export function parseRequest(base64: string): { csr: ParsedCertificateRequest } | { error: string } {
  const bytes = decodeBytes(base64);
  if (!bytes) return { error: "illegal base64 data" };
  let der: Uint8Array;
  try {
    der = csrRequestDer(bytes);
  } catch (e) {
    return { error: (e as Error).message };
  }
  let csr: ParsedCertificateRequest;
  try {
    csr = parseCertificateRequest(der);
  } catch (e) {
    const message = (e as Error).message;
    // Go parses a request with any key but cannot verify an unknown algorithm's signature.
    return { error: /unsupported public key algorithm/.test(message) ? "x509: cannot verify signature: algorithm unimplemented" : message };
  }
  return csr.signatureValid ? { csr } : { error: signatureFailure[csr.publicKeyAlgorithm] };
}

// ---- a CertificateSigningRequest's certificate (status.certificate) ----------------------------------

/** validateCertificate: one or more header-less CERTIFICATE blocks of X.509 DER; text around them is free. */
export function certificateError(base64: string | undefined): string | undefined {
  if (!base64) return undefined;
  const bytes = decodeBytes(base64);
  if (!bytes) return "illegal base64 data";
  if (bytes.length === 0) return undefined;
  const blocks = pemBlocks(pemText(bytes));
  for (const block of blocks) {
    if (block.type !== "CERTIFICATE") return `only CERTIFICATE PEM blocks are allowed, found ${goQuote(block.type)}`;
    if (Object.keys(block.headers).length > 0) return "no PEM block headers are permitted";
    let count: number;
    try {
      count = parseCertificates(block.der).length;
    } catch {
      return "x509: malformed certificate";
    }
    if (count === 0) return "found CERTIFICATE PEM block containing 0 certificates";
  }
  return blocks.length === 0 ? "must contain at least one CERTIFICATE PEM block" : undefined;
}

/** bytes.Equal on two `[]byte` fields (unset and empty are equal). */
export function sameBytes(a: string | undefined, b: string | undefined): boolean {
  const x = decodeBytes(a ?? "");
  const y = decodeBytes(b ?? "");
  return x && y ? x.equals(y) : (a ?? "") === (b ?? "");
}
