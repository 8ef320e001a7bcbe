// The service account signing keys: files `sa-<n>.key` (private) and `sa-<n>.pub` (public only) in
// one directory. The private key with the highest <n> signs; every key verifies, so tokens signed
// before a rotation keep working until they expire or their key file is removed.
import { type KeyObject, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The JWS algorithms a service account key can sign with, by key type (Kubernetes accepts the same). */
export type SigningAlgorithm = "ES256" | "ES384" | "ES512" | "RS256";

export interface VerifyingKey {
  /** Kubernetes' key id: base64url(SHA-256(DER SubjectPublicKeyInfo)), so the same key has the same kid in both. */
  kid: string;
  alg: SigningAlgorithm;
  publicKey: KeyObject;
  /** The file it came from, for messages. */
  file: string;
}

export interface SigningKey extends VerifyingKey {
  privateKey: KeyObject;
}

export interface KeySet {
  /** Signs new tokens: the newest private key. */
  signing: SigningKey;
  /** Verify tokens: every key in the directory, the signing key first. */
  verifying: VerifyingKey[];
}

const KEY_FILE = /^sa-(\d+)\.(key|pub)$/;

const CURVES: Record<string, SigningAlgorithm> = { prime256v1: "ES256", secp384r1: "ES384", secp521r1: "ES512" };

function algorithmOf(key: KeyObject, file: string): SigningAlgorithm {
  const alg =
    key.asymmetricKeyType === "rsa"
      ? "RS256"
      : key.asymmetricKeyType === "ec"
        ? CURVES[key.asymmetricKeyDetails?.namedCurve ?? ""]
        : undefined;
  if (!alg) throw new Error(`${file}: only ECDSA (P-256, P-384, P-521) and RSA keys can sign service account tokens`);
  return alg;
}

export function keyId(publicKey: KeyObject): string {
  return createHash("sha256")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest("base64url");
}

interface KeyFile {
  n: number;
  name: string;
  private: boolean;
}

async function keyFiles(dir: string): Promise<KeyFile[]> {
  const names = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return [] as string[];
    throw e;
  });
  const files: KeyFile[] = [];
  for (const name of names) {
    const m = KEY_FILE.exec(name);
    if (m) files.push({ n: Number(m[1]), name, private: m[2] === "key" });
  }
  // Newest first; at one number a private key wins over its public half.
  return files.sort((a, b) => b.n - a.n || Number(b.private) - Number(a.private));
}

/** Reads every key of `dir`; fails when none of them can sign. */
export async function loadKeySet(dir: string): Promise<KeySet> {
  let signing: SigningKey | undefined;
  const verifying: VerifyingKey[] = [];
  const seen = new Set<string>();
  for (const f of await keyFiles(dir)) {
    const file = join(dir, f.name);
    const pem = await readFile(file, "utf8");
    let privateKey: KeyObject | undefined;
    let publicKey: KeyObject;
    try {
      privateKey = f.private ? createPrivateKey(pem) : undefined;
      publicKey = privateKey ? createPublicKey(privateKey) : createPublicKey(pem);
    } catch (e) {
      throw new Error(`${file}: not a PEM ${f.private ? "private" : "public"} key (${(e as Error).message})`);
    }
    const key: VerifyingKey = { kid: keyId(publicKey), alg: algorithmOf(publicKey, file), publicKey, file };
    if (privateKey && !signing) signing = { ...key, privateKey };
    // `sa-2.pub` beside `sa-2.key` (or a copy elsewhere) is the same key: list it once.
    if (!seen.has(key.kid)) verifying.push(key), seen.add(key.kid);
  }
  if (!signing) throw new Error(`${dir}: no service account signing key (sa-<n>.key)`);
  verifying.sort((a, b) => Number(b.kid === signing.kid) - Number(a.kid === signing.kid));
  return { signing, verifying };
}

/** Writes a new P-256 private key as `sa-<n+1>.key`, the next signing key; returns its path. */
export async function addSigningKey(dir: string): Promise<string> {
  const newest = (await keyFiles(dir))[0]?.n ?? 0;
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const file = join(dir, `sa-${newest + 1}.key`);
  // `wx`: two starts racing on a fresh directory must not overwrite each other's key.
  await writeFile(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600, flag: "wx" });
  return file;
}

/** The key set of `dir`, creating the first signing key when there is none (first start). */
export async function ensureKeySet(dir: string): Promise<KeySet> {
  if (!(await keyFiles(dir)).some((f) => f.private)) {
    // Another process starting on the same directory may have written `sa-1.key` first: use that one.
    await addSigningKey(dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
  }
  return loadKeySet(dir);
}
