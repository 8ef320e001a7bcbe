// From a validated EncryptionConfiguration to the storage engine's ValueTransformers, as
// k8s.io/apiserver pkg/server/options/encryptionconfig/config.go builds its transformer per resource.
import {
  type ObjectKey,
  type StoredValue,
  UnreadableValueError,
  type ValueTransformer,
  type ValueTransformers,
  keyText,
} from "@orch/storage";
import { readFile } from "node:fs/promises";
import {
  type EncryptionConfiguration,
  EncryptionConfigurationError,
  type ProviderConfiguration,
  decodeBase64Strict,
  parseEncryptionConfiguration,
  parseGroupResource,
  providerType,
} from "./configuration.js";
import {
  type PrefixTransformer,
  type Transformer,
  aesProvider,
  cbcTransformer,
  gcmTransformer,
  identityTransformer,
  prefixTransformers,
} from "./providers.js";

export const AESCBC_PREFIX = "k8s:enc:aescbc:v1:";
export const AESGCM_PREFIX = "k8s:enc:aesgcm:v1:";

/** Reads, decodes and validates the file of --encryption-provider-config; the transformers of every resource it names. */
export async function loadEncryptionConfiguration(path: string): Promise<ValueTransformers> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new EncryptionConfigurationError(`error reading encryption provider configuration file "${path}": ${(e as Error).message}`);
  }
  return valueTransformers(parseEncryptionConfiguration(text, path));
}

function providerTransformer(provider: ProviderConfiguration): PrefixTransformer {
  const keys = (p: { keys: { name: string; secret: string }[] }) =>
    p.keys.map((k) => ({ name: k.name, secret: decodeBase64Strict(k.secret)! }));
  switch (providerType(provider)) {
    case "aescbc":
      return aesProvider(AESCBC_PREFIX, keys(provider.aescbc!), cbcTransformer);
    case "aesgcm":
      return aesProvider(AESGCM_PREFIX, keys(provider.aesgcm!), gcmTransformer);
    case "identity":
      return { prefix: Buffer.alloc(0), transformer: identityTransformer };
    case "secretbox":
      // XSalsa20-Poly1305 is not in node:crypto; a dependency for a provider Kubernetes no longer recommends is not worth it.
      throw new EncryptionConfigurationError("the secretbox provider is not supported by orch: use aesgcm or aescbc");
    default:
      throw new EncryptionConfigurationError("kms providers are not supported by orch: use aesgcm or aescbc");
  }
}

const grText = (group: string, resource: string) => (group === "" && resource === "*" ? "*." : group ? `${resource}.${group}` : resource);

/** One transformer per group/resource entry (`secrets`, `*.apps`, `*.*`), providers of repeated entries appended. */
export function valueTransformers(config: EncryptionConfiguration): ValueTransformers {
  const byResource = new Map<string, PrefixTransformer[]>();
  for (const entry of config.resources) {
    const providers = entry.providers.map(providerTransformer);
    for (const name of entry.resources) {
      const { group, resource } = parseGroupResource(name);
      for (const [maskGroup, maskResource] of [
        [group, "*"],
        ["*", "*"],
      ] as const) {
        if (byResource.has(`${maskGroup}/${maskResource}`))
          throw new EncryptionConfigurationError(
            `resource "${grText(group, resource)}" is masked by earlier rule "${grText(maskGroup, maskResource)}"`,
          );
      }
      const key = `${group}/${resource}`;
      byResource.set(key, [...(byResource.get(key) ?? []), ...providers]);
    }
  }
  const transformers = new Map<string, ValueTransformer>();
  for (const [gr, providers] of byResource)
    transformers.set(gr, new ResourceTransformer(prefixTransformers(providers, "no matching prefix found")));
  // Resolved once per storage resource: the engine asks on every read and write.
  const resolved = new Map<string, ValueTransformer | undefined>();
  return (storageResource) => {
    const known = resolved.get(storageResource);
    if (known !== undefined || resolved.has(storageResource)) return known;
    // Storage resources are `<group|core>/<plural>`; the configuration names the core group "".
    const slash = storageResource.indexOf("/");
    const group = storageResource.slice(0, slash) === "core" ? "" : storageResource.slice(0, slash);
    const resource = storageResource.slice(slash + 1);
    const found = transformers.get(`${group}/${resource}`) ?? transformers.get(`${group}/*`) ?? transformers.get("*/*");
    resolved.set(storageResource, found);
    return found;
  };
}

/** A resource's providers in the engine's terms: JSON text in and out, bytes stored for anything encrypted. */
class ResourceTransformer implements ValueTransformer {
  constructor(private readonly providers: Transformer) {}

  toStorage(json: string, key: ObjectKey): StoredValue {
    const stored = this.providers.encrypt(Buffer.from(json), authenticatedData(key));
    // Identity first: the JSON stays text, as it is stored for a resource that is not configured.
    return stored[0] === 0x7b /* { */ ? stored.toString() : stored;
  }

  fromStorage(stored: StoredValue, key: ObjectKey): { json: string; stale: boolean } {
    const bytes = typeof stored === "string" ? Buffer.from(stored) : stored;
    try {
      const { data, stale } = this.providers.decrypt(bytes, authenticatedData(key));
      return { json: data.toString(), stale };
    } catch (e) {
      throw new UnreadableValueError(key, withKeyName((e as Error).message, bytes));
    }
  }
}

/** What AES-GCM binds a value to: its storage key, so a value copied onto another object does not read. */
const authenticatedData = (key: ObjectKey): Buffer => Buffer.from(keyText(key));

/** Kubernetes' message, plus the key the value was written with, so the operator knows which key is missing. */
function withKeyName(message: string, bytes: Buffer): string {
  const match = /^k8s:enc:([a-z0-9]+):v[0-9]+:([^:]*):/.exec(bytes.subarray(0, 300).toString("latin1"));
  return match ? `${message} (the value was written with the ${match[1]} key "${match[2]}")` : message;
}
