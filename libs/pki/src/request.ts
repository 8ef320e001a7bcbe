import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { OID, buildAltNames, buildName, der, parseDer, readAltNames, readName } from "./asn1.js";
import type { Subject, SubjectAltNames } from "./asn1.js";
import {
  generateKey,
  loadPublicKey,
  privateKeyPem,
  publicKeyAlgorithm,
  signWith,
  signatureAlgorithm,
  spkiDer,
  verifyWith,
} from "./keys.js";
import type { KeyType, PublicKeyAlgorithm } from "./keys.js";
import { firstPemBlock, pemBlocks, toPem } from "./pem.js";

export interface CreateCertificateRequestOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
  /** Default "ecdsa" (P-256); "rsa" is 2048-bit. */
  keyType?: KeyType;
}

export interface ParsedCertificateRequest extends SubjectAltNames {
  subject: Subject;
  publicKeyAlgorithm: PublicKeyAlgorithm;
  /** SPKI "PUBLIC KEY" PEM, ready for issueCertificate's publicKeyPem. */
  publicKeyPem: string;
  /** Whether the request is signed by its own key (proof of possession). */
  signatureValid: boolean;
}

/** A PKCS#10 request signed by a freshly generated key, with the key as PKCS#8 PEM. */
export async function createCertificateRequest(options: CreateCertificateRequestOptions): Promise<{ csrPem: string; keyPem: string }> {
  const altNames = buildAltNames(options);
  const subject = buildName(options);
  const { privateKey, publicKey } = await generateKey(options.keyType ?? "ecdsa");
  const attributes: pkijs.Attribute[] = [];
  if (altNames) {
    const san = new pkijs.Extension({ extnID: OID.subjectAltName, critical: false, extnValue: altNames.toSchema().toBER(false) });
    const extensions = new pkijs.Extensions({ extensions: [san] });
    attributes.push(new pkijs.Attribute({ type: OID.extensionRequest, values: [extensions.toSchema()] }));
  }
  const csr = new pkijs.CertificationRequest({
    version: 0,
    subject,
    subjectPublicKeyInfo: pkijs.PublicKeyInfo.fromBER(spkiDer(publicKey)),
    attributes, // PKCS#10 requires the [0] attributes field even when it is empty
  });
  csr.signatureAlgorithm = signatureAlgorithm(privateKey).identifier;
  // encodeTBS is protected in pkijs' typings; toSchema(true) runs it and leads with the TBS.
  const tbs = csr.toSchema(true).valueBlock.value[0];
  if (!tbs) throw new Error("pkijs produced no CertificationRequestInfo");
  csr.tbsView = der(tbs);
  csr.signatureValue = new asn1js.BitString({ valueHex: signWith(privateKey, csr.tbsView) });
  return { csrPem: toPem("CERTIFICATE REQUEST", der(csr.toSchema())), keyPem: privateKeyPem(privateKey) };
}

/**
 * Kubernetes' ParseCSR, its first step: the request of a CertificateSigningRequest (`spec.request`,
 * decoded from base64) must start with a CERTIFICATE REQUEST PEM block; its DER. Throws with
 * Kubernetes' message otherwise.
 */
export function csrRequestDer(request: Uint8Array): Uint8Array {
  // PEM is ASCII; latin1 keeps any other byte as one character.
  const block = pemBlocks(Buffer.from(request).toString("latin1"))[0];
  if (block?.type !== "CERTIFICATE REQUEST") throw new Error("PEM block type must be CERTIFICATE REQUEST");
  return block.der;
}

/**
 * Reads a PKCS#10 request (first "CERTIFICATE REQUEST" or legacy "NEW CERTIFICATE REQUEST" block, or DER)
 * and checks its self-signature. Throws on anything that is not a well-formed request with an RSA,
 * ECDSA or Ed25519 key.
 */
export function parseCertificateRequest(pemOrDer: string | Uint8Array): ParsedCertificateRequest {
  const bytes =
    typeof pemOrDer === "string"
      ? firstPemBlock(pemOrDer, ["CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST"], "certificate request").der
      : pemOrDer;
  let csr: pkijs.CertificationRequest;
  try {
    csr = new pkijs.CertificationRequest({ schema: parseDer(bytes, "certificate request") });
  } catch (e) {
    const message = (e as Error).message;
    throw new Error(message.startsWith("invalid") ? message : `invalid certificate request: ${message}`, { cause: e });
  }
  const algorithm = publicKeyAlgorithm(csr.subjectPublicKeyInfo);
  const spki = der(csr.subjectPublicKeyInfo.toSchema());
  const key = loadPublicKey(spki);
  const signatureValid = verifyWith(key, csr.signatureAlgorithm, csr.tbsView, csr.signatureValue.valueBlock.valueHexView);
  return {
    subject: readName(csr.subject),
    ...readAltNames(requestedAltNames(csr)),
    publicKeyAlgorithm: algorithm,
    publicKeyPem: toPem("PUBLIC KEY", spki),
    signatureValid,
  };
}

function requestedAltNames(csr: pkijs.CertificationRequest): pkijs.AltName | undefined {
  for (const attribute of csr.attributes ?? []) {
    if (attribute.type !== OID.extensionRequest) continue;
    for (const value of attribute.values) {
      const extensions = new pkijs.Extensions({ schema: value });
      const san = extensions.extensions.find((e) => e.extnID === OID.subjectAltName);
      if (san) return san.parsedValue as pkijs.AltName;
    }
  }
  return undefined;
}
