import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { X509Certificate, createHash, createPublicKey, randomBytes } from "node:crypto";
import type { KeyObject } from "node:crypto";
import { OID, buildAltNames, buildName, der, parseDer, positiveInteger, readAltNames, readName } from "./asn1.js";
import type { Subject, SubjectAltNames } from "./asn1.js";
import { generateKey, loadPrivateKey, loadPublicKey, privateKeyPem, signWith, signatureAlgorithm, spkiDer } from "./keys.js";
import { firstPemBlock, toPem } from "./pem.js";
import { extKeyUsageName, keyUsageBitString, keyUsagesFromBitString, usagesToX509 } from "./usages.js";
import type { KeyUsage } from "./usages.js";

/** A certificate and its private key, both PEM. */
export interface CertificateAndKey {
  certPem: string;
  keyPem: string;
}

export interface CreateCAOptions {
  commonName: string;
  /** Default 3650 (ten years, as kubeadm). */
  validityDays?: number;
}

export interface IssueCertificateOptions {
  ca: CertificateAndKey;
  /** A parsed CSR's `subject` fits as it is. */
  subject: { commonName?: string; organizations?: string[] };
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
  /** Kubernetes certificates/v1 usage strings; unknown ones are rejected. */
  usages: readonly KeyUsage[];
  /** Default: now. */
  notBefore?: Date;
  /** notAfter = notBefore + validitySeconds, capped at the CA's notAfter (as the Kubernetes signer does). */
  validitySeconds: number;
  /** Certify this key (SPKI "PUBLIC KEY" PEM, e.g. from a CSR); absent: generate an ECDSA P-256 key. */
  publicKeyPem?: string;
  /** Issue an intermediate CA; "cert sign" is then implied. */
  isCA?: boolean;
}

export interface ParsedCertificate extends SubjectAltNames {
  subject: Subject;
  issuer: Subject;
  /** Lowercase hex, no leading zero bytes. */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  keyUsages: KeyUsage[];
  /** Kubernetes usage strings; EKUs without one are given as dotted OIDs. */
  extKeyUsages: string[];
  publicKeyPem: string;
}

/** A self-signed ECDSA P-256 CA. */
export async function createCA(options: CreateCAOptions): Promise<CertificateAndKey> {
  const days = options.validityDays ?? 3650;
  if (!(days > 0)) throw new Error("validityDays must be positive");
  const name = buildName({ commonName: options.commonName });
  const notBefore = wholeSeconds(new Date());
  const notAfter = new Date(notBefore.getTime() + days * 86_400_000);
  const { privateKey, publicKey } = await generateKey("ecdsa");
  const spki = pkijs.PublicKeyInfo.fromBER(spkiDer(publicKey));
  const cert = newCertificate({ issuer: name, subject: name, spki, notBefore, notAfter });
  cert.extensions = [
    basicConstraints(true),
    keyUsageExtension(new Set([0, 5, 6])), // digitalSignature, keyCertSign, cRLSign
    subjectKeyIdentifier(keyIdentifier(spki)),
  ];
  return { certPem: signCertificate(cert, privateKey), keyPem: privateKeyPem(privateKey) };
}

/**
 * Issues a certificate signed by `ca` (ECDSA P-256/P-384/P-521, RSA or Ed25519 CA key), shaped like the
 * Kubernetes CSR signer's: random 128-bit serial, basicConstraints critical, keyUsage/extKeyUsage from the
 * usage strings, SAN, subject and authority key identifiers.
 */
export async function issueCertificate(options: IssueCertificateOptions): Promise<{ certPem: string; keyPem?: string }> {
  // Everything that can be wrong with the input is checked before any key is generated.
  const caCert = decodeCertificate(firstPemBlock(options.ca.certPem, ["CERTIFICATE"], "CA certificate").der);
  const caKey = loadPrivateKey(options.ca.keyPem);
  checkCA(caCert, caKey);
  const usages = usagesToX509(options.isCA ? [...options.usages, "cert sign"] : options.usages);
  const subject = buildName(options.subject);
  const altNames = buildAltNames(options);
  const { notBefore, notAfter } = validity(options, caCert.notAfter.value);

  let generated: KeyObject | undefined;
  let subjectKey: KeyObject;
  if (options.publicKeyPem !== undefined) {
    subjectKey = loadPublicKey(options.publicKeyPem);
  } else {
    const pair = await generateKey("ecdsa");
    [subjectKey, generated] = [pair.publicKey, pair.privateKey];
  }
  const spki = pkijs.PublicKeyInfo.fromBER(spkiDer(subjectKey));

  const cert = newCertificate({ issuer: caCert.subject, subject, spki, notBefore, notAfter });
  const extensions = [basicConstraints(options.isCA ?? false)];
  if (usages.keyUsageBits.size) extensions.push(keyUsageExtension(usages.keyUsageBits));
  if (usages.extKeyUsageOids.length) {
    const eku = new pkijs.ExtKeyUsage({ keyPurposes: usages.extKeyUsageOids });
    extensions.push(extension(OID.extKeyUsage, false, eku.toSchema()));
  }
  extensions.push(subjectKeyIdentifier(keyIdentifier(spki)));
  const aki = new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: authorityKeyId(caCert) }) });
  extensions.push(extension(OID.authorityKeyIdentifier, false, aki.toSchema()));
  if (altNames) {
    // RFC 5280 4.2.1.6: critical when the subject is empty.
    const emptySubject = !options.subject.commonName && !options.subject.organizations?.length;
    extensions.push(extension(OID.subjectAltName, emptySubject, altNames.toSchema()));
  }
  cert.extensions = extensions;

  const certPem = signCertificate(cert, caKey);
  return generated ? { certPem, keyPem: privateKeyPem(generated) } : { certPem };
}

// As the Kubernetes signer: notAfter is capped at the CA's, and an expired CA signs nothing.
function validity(options: IssueCertificateOptions, caNotAfter: Date): { notBefore: Date; notAfter: Date } {
  if (!(options.validitySeconds > 0)) throw new Error("validitySeconds must be positive");
  const notBefore = wholeSeconds(options.notBefore ?? new Date());
  const notAfter = wholeSeconds(new Date(notBefore.getTime() + options.validitySeconds * 1000));
  if (Date.now() >= caNotAfter.getTime() || notBefore >= caNotAfter) {
    throw new Error(`the CA certificate expired at ${caNotAfter.toISOString()}`);
  }
  return { notBefore, notAfter: notAfter > caNotAfter ? caNotAfter : notAfter };
}

/** Reads a certificate from PEM (first CERTIFICATE block) or DER. */
export function parseCertificate(pemOrDer: string | Uint8Array): ParsedCertificate {
  const bytes = typeof pemOrDer === "string" ? firstPemBlock(pemOrDer, ["CERTIFICATE"], "certificate").der : pemOrDer;
  const cert = decodeCertificate(bytes);
  const ext = (id: string) => cert.extensions?.find((e) => e.extnID === id);
  const bc = ext(OID.basicConstraints)?.parsedValue as pkijs.BasicConstraints | undefined;
  const ku = ext(OID.keyUsage)?.parsedValue as asn1js.BitString | undefined;
  const eku = ext(OID.extKeyUsage)?.parsedValue as pkijs.ExtKeyUsage | undefined;
  const san = ext(OID.subjectAltName)?.parsedValue as pkijs.AltName | undefined;
  const serial = Buffer.from(cert.serialNumber.valueBlock.valueHexView)
    .toString("hex")
    .replace(/^(00)+(?=.)/, "");
  return {
    subject: readName(cert.subject),
    issuer: readName(cert.issuer),
    serialNumber: serial,
    notBefore: cert.notBefore.value,
    notAfter: cert.notAfter.value,
    isCA: bc?.cA === true,
    ...readAltNames(san),
    keyUsages: ku instanceof asn1js.BitString ? keyUsagesFromBitString(ku) : [],
    extKeyUsages: (eku?.keyPurposes ?? []).map(extKeyUsageName),
    publicKeyPem: toPem("PUBLIC KEY", der(cert.subjectPublicKeyInfo.toSchema())),
  };
}

/**
 * Every certificate in `der`, which may hold several DER certificates back to back (Go's
 * x509.ParseCertificates: a PEM block may carry a chain). Empty input gives an empty list; throws on the
 * first element that is not a certificate.
 */
export function parseCertificates(der: Uint8Array): ParsedCertificate[] {
  const certificates: ParsedCertificate[] = [];
  for (let offset = 0; offset < der.byteLength; ) {
    const rest = der.subarray(offset);
    const element = asn1js.fromBER(rest);
    if (element.offset === -1) throw new Error(`invalid certificate: not DER${element.result.error ? ` (${element.result.error})` : ""}`);
    certificates.push(parseCertificate(rest.subarray(0, element.offset)));
    offset += element.offset;
  }
  return certificates;
}

/**
 * True when `caPem` issued `certPem` (names, key identifiers, CA key usage and signature check out) and
 * both are valid at `at`. Throws on input that is not a certificate.
 */
export function verifyChain(certPem: string, caPem: string, at: Date = new Date()): boolean {
  const leaf = new X509Certificate(Buffer.from(firstPemBlock(certPem, ["CERTIFICATE"], "certificate").der));
  const ca = new X509Certificate(Buffer.from(firstPemBlock(caPem, ["CERTIFICATE"], "CA certificate").der));
  const valid = (c: X509Certificate) => new Date(c.validFrom) <= at && at <= new Date(c.validTo);
  return ca.ca && leaf.checkIssued(ca) && leaf.verify(ca.publicKey) && valid(leaf) && valid(ca);
}

function decodeCertificate(bytes: Uint8Array): pkijs.Certificate {
  try {
    return new pkijs.Certificate({ schema: parseDer(bytes, "certificate") });
  } catch (e) {
    const message = (e as Error).message;
    throw new Error(message.startsWith("invalid certificate") ? message : `invalid certificate: ${message}`, { cause: e });
  }
}

function checkCA(caCert: pkijs.Certificate, caKey: KeyObject): void {
  const bc = caCert.extensions?.find((e) => e.extnID === OID.basicConstraints)?.parsedValue as pkijs.BasicConstraints | undefined;
  if (bc?.cA !== true) throw new Error("CA certificate is not a CA (basicConstraints CA=false)");
  const certSpki = Buffer.from(der(caCert.subjectPublicKeyInfo.toSchema()));
  if (!certSpki.equals(spkiDer(createPublicKey(caKey)))) throw new Error("CA private key does not match the CA certificate");
}

function newCertificate(p: {
  issuer: pkijs.RelativeDistinguishedNames;
  subject: pkijs.RelativeDistinguishedNames;
  spki: pkijs.PublicKeyInfo;
  notBefore: Date;
  notAfter: Date;
}): pkijs.Certificate {
  return new pkijs.Certificate({
    version: 2, // v3
    serialNumber: positiveInteger(randomBytes(16)),
    issuer: p.issuer,
    subject: p.subject,
    subjectPublicKeyInfo: p.spki,
    notBefore: time(p.notBefore),
    notAfter: time(p.notAfter),
  });
}

function signCertificate(cert: pkijs.Certificate, key: KeyObject): string {
  const algorithm = signatureAlgorithm(key).identifier;
  cert.signature = algorithm; // the TBS names the algorithm too
  cert.signatureAlgorithm = algorithm;
  cert.tbsView = der(cert.encodeTBS());
  cert.signatureValue = new asn1js.BitString({ valueHex: signWith(key, cert.tbsView) });
  return toPem("CERTIFICATE", der(cert.toSchema()));
}

// RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime after.
function time(date: Date): pkijs.Time {
  return new pkijs.Time({ type: date.getUTCFullYear() < 2050 ? 0 : 1, value: date });
}

// Certificates carry whole seconds; truncating keeps notBefore <= now.
function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function extension(extnID: string, critical: boolean, value: { toBER(sizeOnly?: boolean): ArrayBuffer }): pkijs.Extension {
  return new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) });
}

function basicConstraints(cA: boolean): pkijs.Extension {
  return extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA }).toSchema());
}

function keyUsageExtension(bits: Set<number>): pkijs.Extension {
  return extension(OID.keyUsage, true, keyUsageBitString(bits));
}

function subjectKeyIdentifier(id: Uint8Array): pkijs.Extension {
  return extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: id }));
}

// RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits.
function keyIdentifier(spki: pkijs.PublicKeyInfo): Uint8Array {
  return new Uint8Array(createHash("sha1").update(spki.subjectPublicKey.valueBlock.valueHexView).digest());
}

function authorityKeyId(caCert: pkijs.Certificate): Uint8Array {
  const ski = caCert.extensions?.find((e) => e.extnID === OID.subjectKeyIdentifier)?.parsedValue;
  return ski instanceof asn1js.OctetString ? ski.valueBlock.valueHexView : keyIdentifier(caCert.subjectPublicKeyInfo);
}
