import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { constants, createPrivateKey, createPublicKey, generateKeyPair, sign, verify } from "node:crypto";
import type { KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { OID } from "./asn1.js";
import { firstPemBlock } from "./pem.js";

export type KeyType = "ecdsa" | "rsa" | "ed25519";
export type PublicKeyAlgorithm = "RSA" | "ECDSA" | "Ed25519";

const generate = promisify(generateKeyPair);

/** A fresh key pair: ECDSA P-256, RSA 2048 or Ed25519. */
export async function generateKey(type: KeyType = "ecdsa"): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  if (type === "rsa") return generate("rsa", { modulusLength: 2048 });
  if (type === "ed25519") return generate("ed25519");
  return generate("ec", { namedCurve: "P-256" });
}

/**
 * PKCS#8 "PRIVATE KEY" PEM: one format for every key type, read by Node's tls and by Go's
 * tls.X509KeyPair (client-go tries PKCS#1, PKCS#8 and SEC1).
 */
export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: "pkcs8", format: "pem" }).toString();
}

const privateKeyFormats = { "PRIVATE KEY": "pkcs8", "EC PRIVATE KEY": "sec1", "RSA PRIVATE KEY": "pkcs1" } as const;

/** Reads the first private key block (PKCS#8, SEC1 or PKCS#1); other blocks such as EC PARAMETERS are skipped. */
export function loadPrivateKey(pem: string): KeyObject {
  const block = firstPemBlock(pem, [...Object.keys(privateKeyFormats), "ENCRYPTED PRIVATE KEY"], "private key");
  if (block.type === "ENCRYPTED PRIVATE KEY" || /ENCRYPTED/i.test(block.headers["Proc-Type"] ?? "")) {
    throw new Error("private key: encrypted private keys are not supported");
  }
  const type = privateKeyFormats[block.type as keyof typeof privateKeyFormats];
  try {
    return createPrivateKey({ key: Buffer.from(block.der), format: "der", type });
  } catch (e) {
    throw new Error(`private key: cannot parse ${block.type}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * A public key from SPKI DER or a "PUBLIC KEY" PEM block. Only that block type: Node would happily derive
 * a public key from a private key PEM, hiding a caller's mix-up.
 */
export function loadPublicKey(input: string | Uint8Array): KeyObject {
  const der = typeof input === "string" ? firstPemBlock(input, ["PUBLIC KEY"], "public key").der : input;
  try {
    return createPublicKey({ key: Buffer.from(der), format: "der", type: "spki" });
  } catch (e) {
    throw new Error(`public key: cannot parse: ${(e as Error).message}`, { cause: e });
  }
}

export function spkiDer(key: KeyObject): Uint8Array {
  return new Uint8Array(key.export({ type: "spki", format: "der" }));
}

export function publicKeyAlgorithm(spki: pkijs.PublicKeyInfo): PublicKeyAlgorithm {
  switch (spki.algorithm.algorithmId) {
    case OID.rsaEncryption:
      return "RSA";
    case OID.ecPublicKey:
      return "ECDSA";
    case OID.ed25519:
      return "Ed25519";
    default:
      throw new Error(`unsupported public key algorithm ${spki.algorithm.algorithmId}`);
  }
}

// Signature algorithms Go's x509 accepts, by OID: the key type they need and their digest.
const RSA_PSS = "1.2.840.113549.1.1.10";
const signatureAlgorithms: Record<string, { key: string; hash: string | null }> = {
  "1.2.840.113549.1.1.5": { key: "rsa", hash: "sha1" },
  "1.2.840.113549.1.1.14": { key: "rsa", hash: "sha224" },
  "1.2.840.113549.1.1.11": { key: "rsa", hash: "sha256" },
  "1.2.840.113549.1.1.12": { key: "rsa", hash: "sha384" },
  "1.2.840.113549.1.1.13": { key: "rsa", hash: "sha512" },
  "1.2.840.10045.4.1": { key: "ec", hash: "sha1" },
  "1.2.840.10045.4.3.1": { key: "ec", hash: "sha224" },
  "1.2.840.10045.4.3.2": { key: "ec", hash: "sha256" },
  "1.2.840.10045.4.3.3": { key: "ec", hash: "sha384" },
  "1.2.840.10045.4.3.4": { key: "ec", hash: "sha512" },
  [OID.ed25519]: { key: "ed25519", hash: null },
};
const hashOids: Record<string, string> = {
  "1.3.14.3.2.26": "sha1",
  "2.16.840.1.101.3.4.2.4": "sha224",
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};

/**
 * The signature algorithm Go's x509 would pick for `key`: SHA-256 for RSA and P-256, SHA-384 for P-384,
 * SHA-512 for P-521, pure Ed25519. RSA's AlgorithmIdentifier carries NULL parameters, the others none.
 */
export function signatureScheme(key: KeyObject): { oid: string; hash: string | null; nullParameters: boolean } {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return { oid: "1.2.840.113549.1.1.11", hash: "sha256", nullParameters: true };
    case "ed25519":
      return { oid: OID.ed25519, hash: null, nullParameters: false };
    case "ec": {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === "prime256v1") return { oid: "1.2.840.10045.4.3.2", hash: "sha256", nullParameters: false };
      if (curve === "secp384r1") return { oid: "1.2.840.10045.4.3.3", hash: "sha384", nullParameters: false };
      if (curve === "secp521r1") return { oid: "1.2.840.10045.4.3.4", hash: "sha512", nullParameters: false };
      throw new Error(`unsupported signing key: EC curve ${curve}`);
    }
    default:
      throw new Error(`unsupported signing key type ${key.asymmetricKeyType}`);
  }
}

/** signatureScheme(key) as a pkijs AlgorithmIdentifier (certificate requests are still built with pkijs). */
export function signatureAlgorithm(key: KeyObject): { identifier: pkijs.AlgorithmIdentifier; hash: string | null } {
  const { oid, hash, nullParameters } = signatureScheme(key);
  const identifier = new pkijs.AlgorithmIdentifier(
    nullParameters ? { algorithmId: oid, algorithmParams: new asn1js.Null() } : { algorithmId: oid },
  );
  return { identifier, hash };
}

/** Signs `data` with the algorithm from signatureScheme(key). */
export function signWith(key: KeyObject, data: Uint8Array): Uint8Array {
  // node:crypto emits ECDSA signatures DER-encoded, which is what X.509 and PKCS#10 carry.
  return new Uint8Array(sign(signatureScheme(key).hash, data, key));
}

/** Verifies a signature over `data`; false for a bad signature or an algorithm that does not fit the key. */
export function verifyWith(key: KeyObject, algorithm: pkijs.AlgorithmIdentifier, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (algorithm.algorithmId === RSA_PSS) {
      if (key.asymmetricKeyType !== "rsa") return false;
      const pss = new pkijs.RSASSAPSSParams({ schema: algorithm.algorithmParams });
      const hash = hashOids[pss.hashAlgorithm.algorithmId];
      // node:crypto uses the message digest for MGF1 too, so other MGF1 digests cannot be checked.
      const mgfHash = pss.maskGenAlgorithm.algorithmParams;
      const mgf = mgfHash instanceof asn1js.Sequence ? new pkijs.AlgorithmIdentifier({ schema: mgfHash }).algorithmId : "1.3.14.3.2.26";
      if (!hash || hashOids[mgf] !== hash) return false;
      return verify(hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pss.saltLength }, signature);
    }
    const known = signatureAlgorithms[algorithm.algorithmId];
    if (!known || known.key !== key.asymmetricKeyType) return false;
    return verify(known.hash, data, key, signature);
  } catch {
    return false;
  }
}
