import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { X509Certificate, createHash, createPublicKey, randomBytes } from "node:crypto";
import type { KeyObject } from "node:crypto";
import { OID, altNamesDer, der, nameDer, parseDer, readAltNames, readName } from "./asn1.js";
import type { Subject, SubjectAltNames } from "./asn1.js";
import {
  type Element,
  TAG,
  bitString,
  booleanTrue,
  children,
  explicit,
  nullValue,
  octetString,
  oid,
  readElement,
  sequence,
  time,
  tlv,
  unsignedInteger,
} from "./der.js";
import { generateKey, loadPrivateKey, loadPublicKey, privateKeyPem, signWith, signatureScheme, spkiDer } from "./keys.js";
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
  const name = nameDer({ commonName: options.commonName });
  const notBefore = wholeSeconds(new Date());
  const notAfter = new Date(notBefore.getTime() + days * 86_400_000);
  const { privateKey, publicKey } = await generateKey("ecdsa");
  const spki = spkiDer(publicKey);
  const extensions = [
    basicConstraints(true),
    extension(OID.keyUsage, true, keyUsageBitString(new Set([0, 5, 6]))), // digitalSignature, keyCertSign, cRLSign
    extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(spki))),
  ];
  const certPem = signCertificate({ issuer: name, subject: name, spki, notBefore, notAfter, extensions }, privateKey);
  return { certPem, keyPem: privateKeyPem(privateKey) };
}

/**
 * Issues a certificate signed by `ca` (ECDSA P-256/P-384/P-521, RSA or Ed25519 CA key), shaped like the
 * Kubernetes CSR signer's: random 128-bit serial, basicConstraints critical, keyUsage/extKeyUsage from the
 * usage strings, SAN, subject and authority key identifiers.
 */
export async function issueCertificate(options: IssueCertificateOptions): Promise<{ certPem: string; keyPem?: string }> {
  // Everything that can be wrong with the input is checked before any key is generated.
  const caCert = readIssuer(firstPemBlock(options.ca.certPem, ["CERTIFICATE"], "CA certificate").der);
  const caKey = loadPrivateKey(options.ca.keyPem);
  if (!caCert.isCA) throw new Error("CA certificate is not a CA (basicConstraints CA=false)");
  if (!Buffer.from(caCert.spki).equals(spkiDer(createPublicKey(caKey))))
    throw new Error("CA private key does not match the CA certificate");
  const usages = usagesToX509(options.isCA ? [...options.usages, "cert sign"] : options.usages);
  const subject = nameDer(options.subject);
  const altNames = altNamesDer(options);
  const { notBefore, notAfter } = validity(options, caCert.notAfter);

  let generated: KeyObject | undefined;
  let subjectKey: KeyObject;
  if (options.publicKeyPem !== undefined) {
    subjectKey = loadPublicKey(options.publicKeyPem);
  } else {
    const pair = await generateKey("ecdsa");
    [subjectKey, generated] = [pair.publicKey, pair.privateKey];
  }
  const spki = spkiDer(subjectKey);

  const extensions = [basicConstraints(options.isCA ?? false)];
  if (usages.keyUsageBits.size) extensions.push(extension(OID.keyUsage, true, keyUsageBitString(usages.keyUsageBits)));
  if (usages.extKeyUsageOids.length) extensions.push(extension(OID.extKeyUsage, false, sequence(...usages.extKeyUsageOids.map(oid))));
  extensions.push(extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(spki))));
  // AuthorityKeyIdentifier { keyIdentifier [0] IMPLICIT OCTET STRING }
  extensions.push(extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, caCert.keyIdentifier))));
  if (altNames) {
    // RFC 5280 4.2.1.6: critical when the subject is empty.
    const emptySubject = !options.subject.commonName && !options.subject.organizations?.length;
    extensions.push(extension(OID.subjectAltName, emptySubject, altNames));
  }

  const certPem = signCertificate({ issuer: caCert.subject, subject, spki, notBefore, notAfter, extensions }, caKey);
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

/** What issuing needs of the CA's certificate, read from its DER (Go's issuer: RawSubject, SubjectKeyId...). */
interface Issuer {
  subject: Uint8Array;
  spki: Uint8Array;
  notAfter: Date;
  isCA: boolean;
  /** The CA's subjectKeyIdentifier, else one computed from its key: the leaf's authorityKeyIdentifier. */
  keyIdentifier: Uint8Array;
}

function readIssuer(certificateDer: Uint8Array): Issuer {
  try {
    const [tbs] = children(readElement(certificateDer).content);
    const fields = children(tbs!.content);
    // version [0] is optional (v1); serial, signature, issuer, validity, subject, spki follow.
    const [, , , validityField, subject, spki, ...optional] = fields[0]?.tag === 0xa0 ? fields.slice(1) : fields;
    if (!validityField || !subject || !spki) throw new Error("too few fields");
    const extensions = new Map<string, { critical: boolean; value: Uint8Array }>();
    const extensionsField = optional.find((f) => f.tag === 0xa3);
    for (const ext of extensionsField ? children(children(extensionsField.content)[0]!.content) : []) {
      const parts = children(ext.content);
      const critical = parts.length === 3 && parts[1]!.tag === TAG.boolean && parts[1]!.content[0] !== 0;
      extensions.set(Buffer.from(parts[0]!.bytes).toString("hex"), { critical, value: parts.at(-1)!.content });
    }
    const lookup = (id: string) => extensions.get(Buffer.from(oid(id)).toString("hex"))?.value;
    const basic = lookup(OID.basicConstraints);
    const cA = basic ? children(readElement(basic).content)[0] : undefined;
    const ski = lookup(OID.subjectKeyIdentifier);
    return {
      subject: subject.bytes,
      spki: spki.bytes,
      notAfter: readTime(children(validityField.content)[1]!),
      isCA: cA?.tag === TAG.boolean && cA.content[0] !== 0,
      keyIdentifier: ski ? readElement(ski).content : keyIdentifier(spki.bytes),
    };
  } catch (e) {
    throw new Error(`invalid certificate: ${(e as Error).message}`, { cause: e });
  }
}

/** UTCTime (YYMMDDHHMMSSZ, 1950–2049) or GeneralizedTime (YYYYMMDDHHMMSS[.fff]Z). */
function readTime(element: Element): Date {
  const text = Buffer.from(element.content).toString("latin1");
  const m = /^(\d{2}|\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\.\d+)?Z$/.exec(text);
  if (!m || (element.tag === TAG.utcTime) !== (m[1]!.length === 2)) throw new Error(`bad time ${JSON.stringify(text)}`);
  const year = m[1]!.length === 4 ? Number(m[1]) : Number(m[1]) + (Number(m[1]) < 50 ? 2000 : 1900);
  return new Date(
    Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Math.floor(Number(m[7] ?? 0) * 1000)),
  );
}

/** TBSCertificate v3, signed with `key`, as PEM. */
function signCertificate(
  p: { issuer: Uint8Array; subject: Uint8Array; spki: Uint8Array; notBefore: Date; notAfter: Date; extensions: Uint8Array[] },
  key: KeyObject,
): string {
  const scheme = signatureScheme(key);
  const algorithm = scheme.nullParameters ? sequence(oid(scheme.oid), nullValue()) : sequence(oid(scheme.oid));
  const tbs = sequence(
    explicit(0, unsignedInteger(Uint8Array.of(2))), // v3
    unsignedInteger(randomBytes(16)),
    algorithm, // the TBS names the algorithm too
    p.issuer,
    sequence(time(p.notBefore), time(p.notAfter)),
    p.subject,
    p.spki,
    explicit(3, sequence(...p.extensions)),
  );
  return toPem("CERTIFICATE", sequence(tbs, algorithm, bitString(signWith(key, tbs))));
}

// Certificates carry whole seconds; truncating keeps notBefore <= now.
function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

/** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE (omitted when false, as DER wants), extnValue }. */
function extension(extnID: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical ? sequence(oid(extnID), booleanTrue(), octetString(value)) : sequence(oid(extnID), octetString(value));
}

/** BasicConstraints ::= SEQUENCE { cA BOOLEAN DEFAULT FALSE, ... }, critical. */
function basicConstraints(cA: boolean): Uint8Array {
  return extension(OID.basicConstraints, true, cA ? sequence(booleanTrue()) : sequence());
}

// RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits (the BIT STRING's content after its unused-bits byte).
function keyIdentifier(spki: Uint8Array): Uint8Array {
  const subjectPublicKey = children(readElement(spki).content)[1]!;
  return new Uint8Array(createHash("sha1").update(subjectPublicKey.content.subarray(1)).digest());
}
