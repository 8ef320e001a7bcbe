// The providers of Kubernetes' k8s.io/apiserver pkg/storage/value/encrypt (aes, identity) with its
// stored format, so that a value is byte-for-byte what an apiserver would have put in etcd:
//   aescbc:   "k8s:enc:aescbc:v1:<key name>:" + 16-byte IV + AES-CBC(PKCS#7 padded JSON)
//   aesgcm:   "k8s:enc:aesgcm:v1:<key name>:" + 12-byte nonce + AES-GCM ciphertext + 16-byte tag
//   identity: the JSON itself
// A resource's providers are tried in order by prefix (value.prefixTransformers); the first one writes.
import { type CipherGCMTypes, createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** One key of an AES provider: its name, written into every value it encrypts, and its bytes. */
export interface NamedKey {
  name: string;
  secret: Buffer;
}

/** What a transformer reads: the stored bytes after its prefix, and the data the value is bound to. */
export interface Transformer {
  encrypt(data: Buffer, authenticatedData: Buffer): Buffer;
  /** Throws with Kubernetes' message when the data is not what this transformer wrote. */
  decrypt(data: Buffer, authenticatedData: Buffer): { data: Buffer; stale: boolean };
}

const AES_BLOCK = 16;
const GCM_NONCE = 12;
const GCM_TAG = 16;

const aesName = (key: Buffer, mode: "cbc" | "gcm") => `aes-${key.length * 8}-${mode}` as const;

/** AES-CBC with a random IV and PKCS#7 padding (aes.go `cbc`); the data it binds to is not used, as there. */
export function cbcTransformer(key: Buffer): Transformer {
  const algorithm = aesName(key, "cbc");
  return {
    encrypt(data) {
      const iv = randomBytes(AES_BLOCK);
      const cipher = createCipheriv(algorithm, key, iv); // Node pads with PKCS#7, as aes.go does by hand.
      return Buffer.concat([iv, cipher.update(data), cipher.final()]);
    },
    decrypt(stored) {
      if (stored.length < AES_BLOCK) throw new Error("the stored data was shorter than the required size");
      const body = stored.subarray(AES_BLOCK);
      if (body.length % AES_BLOCK !== 0) throw new Error("the stored data is not a multiple of the block size");
      const decipher = createDecipheriv(algorithm, key, stored.subarray(0, AES_BLOCK));
      // The padding is checked here, to fail with Kubernetes' messages rather than OpenSSL's "bad decrypt".
      decipher.setAutoPadding(false);
      const plain = Buffer.concat([decipher.update(body), decipher.final()]);
      const padding = plain[plain.length - 1] ?? 0;
      if (padding === 0 || padding > plain.length) throw new Error("invalid PKCS7 data (empty or not padded)");
      for (let i = plain.length - padding; i < plain.length; i++) {
        if (plain[i] !== padding) throw new Error("invalid padding on input");
      }
      return { data: plain.subarray(0, plain.length - padding), stale: false };
    },
  };
}

/** AES-GCM with a random 12-byte nonce (aes.go `NewGCMTransformer`), bound to the object's storage key. */
export function gcmTransformer(key: Buffer): Transformer {
  const algorithm = aesName(key, "gcm") as CipherGCMTypes;
  return {
    encrypt(data, authenticatedData) {
      const nonce = randomBytes(GCM_NONCE);
      const cipher = createCipheriv(algorithm, key, nonce, { authTagLength: GCM_TAG });
      cipher.setAAD(authenticatedData);
      return Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    },
    decrypt(stored, authenticatedData) {
      if (stored.length < GCM_NONCE) throw new Error("the stored data was shorter than the required size");
      if (stored.length < GCM_NONCE + GCM_TAG) throw new Error("cipher: message authentication failed");
      const decipher = createDecipheriv(algorithm, key, stored.subarray(0, GCM_NONCE), { authTagLength: GCM_TAG });
      decipher.setAAD(authenticatedData);
      decipher.setAuthTag(stored.subarray(stored.length - GCM_TAG));
      try {
        return {
          data: Buffer.concat([decipher.update(stored.subarray(GCM_NONCE, stored.length - GCM_TAG)), decipher.final()]),
          stale: false,
        };
      } catch {
        throw new Error("cipher: message authentication failed");
      }
    },
  };
}

const ENCRYPTED_PREFIX = Buffer.from("k8s:enc:");

/** identity.NewEncryptCheckTransformer: the data as it is, unless it is plainly something encrypted. */
export const identityTransformer: Transformer = {
  encrypt: (data) => data,
  decrypt(data) {
    if (startsWith(data, ENCRYPTED_PREFIX)) throw new Error("identity transformer tried to read encrypted data");
    return { data, stale: false };
  },
};

export const startsWith = (data: Buffer, prefix: Buffer): boolean =>
  data.length >= prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;

/** value.PrefixTransformer: a transformer and the prefix that marks its values. */
export interface PrefixTransformer {
  prefix: Buffer;
  transformer: Transformer;
}

/**
 * value.NewPrefixTransformers: writes with the first, reads with the first whose prefix matches and
 * succeeds; `stale` when that was not the first. `notFound` is the error when no prefix matched.
 */
export function prefixTransformers(transformers: PrefixTransformer[], notFound: string): Transformer {
  const first = transformers[0];
  if (!first) throw new Error("no transformers");
  return {
    encrypt: (data, authenticatedData) => Buffer.concat([first.prefix, first.transformer.encrypt(data, authenticatedData)]),
    decrypt(data, authenticatedData) {
      const errors: string[] = [];
      for (const [i, { prefix, transformer }] of transformers.entries()) {
        if (!startsWith(data, prefix)) continue;
        try {
          const result = transformer.decrypt(data.subarray(prefix.length), authenticatedData);
          return { data: result.data, stale: result.stale || i !== 0 };
        } catch (e) {
          // An identity (empty prefix) that fails is skipped without a word, as in Kubernetes.
          if (prefix.length > 0) errors.push((e as Error).message);
        }
      }
      const unique = [...new Set(errors)];
      throw new Error(unique.length === 0 ? notFound : unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`);
    },
  };
}

/** encryptionconfig.aesPrefixTransformer: one prefix per key, `<name>:`, inside the provider's prefix. */
export function aesProvider(prefix: string, keys: NamedKey[], forKey: (key: Buffer) => Transformer): PrefixTransformer {
  const perKey = keys.map((k) => ({ prefix: Buffer.from(`${k.name}:`), transformer: forKey(k.secret) }));
  return {
    prefix: Buffer.from(prefix),
    transformer: prefixTransformers(perKey, "no matching key was found for the provided AES transformer"),
  };
}
