// Kubernetes' EncryptionConfiguration (apiserver.config.k8s.io/v1), the file behind
// --encryption-provider-config: decoded, then validated as k8s.io/apiserver's
// pkg/apis/apiserver/validation/validation_encryption.go validates it, with its messages.
import { FieldPath, type FieldError, fieldError, fieldErrorText, goAggregate } from "@orch/machinery";
import * as v from "valibot";
import { parse as parseYaml } from "yaml";

// Go decodes a missing or null field as its zero value; so do these defaults.
const Key = v.object({ name: v.nullish(v.string(), ""), secret: v.nullish(v.string(), "") });
const Keys = v.object({ keys: v.nullish(v.array(Key), []) });
const Provider = v.object({
  aescbc: v.optional(Keys),
  aesgcm: v.optional(Keys),
  secretbox: v.optional(Keys),
  identity: v.optional(v.nullable(v.looseObject({}))),
  kms: v.optional(v.looseObject({})),
});
const ResourceConfiguration = v.object({
  resources: v.nullish(v.array(v.string()), []),
  providers: v.nullish(v.array(Provider), []),
});
const EncryptionConfigurationSchema = v.object({
  apiVersion: v.literal("apiserver.config.k8s.io/v1"),
  kind: v.literal("EncryptionConfiguration"),
  resources: v.nullish(v.array(ResourceConfiguration), []),
});

export type EncryptionKey = v.InferOutput<typeof Key>;
export type ProviderConfiguration = v.InferOutput<typeof Provider>;
export type EncryptionConfiguration = v.InferOutput<typeof EncryptionConfigurationSchema>;

/** The providers orch can store with; `secretbox` and `kms` pass validation but are refused when loaded. */
export const PROVIDER_TYPES = ["aescbc", "aesgcm", "secretbox", "identity", "kms"] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** The one provider an element names (validation guarantees exactly one). */
export function providerType(p: ProviderConfiguration): ProviderType | undefined {
  return PROVIDER_TYPES.find((t) => p[t] !== undefined);
}

/** A configuration file that does not decode or does not validate. */
export class EncryptionConfigurationError extends Error {}

/** A group and resource as `schema.ParseGroupResource` splits `deployments.apps`: at the first dot. */
export function parseGroupResource(text: string): { group: string; resource: string } {
  const dot = text.indexOf(".");
  return dot < 0 ? { group: "", resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}

/** Decodes and validates the YAML (or JSON) text of an EncryptionConfiguration; `source` names it in errors. */
export function parseEncryptionConfiguration(text: string, source: string): EncryptionConfiguration {
  if (text.length === 0) throw new EncryptionConfigurationError(`encryption provider configuration file "${source}" is empty`);
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (e) {
    throw new EncryptionConfigurationError(`error decoding encryption provider configuration file "${source}": ${(e as Error).message}`);
  }
  const decoded = v.safeParse(EncryptionConfigurationSchema, data);
  if (!decoded.success) {
    const issues = decoded.issues.map((i) => `${v.getDotPath(i) ?? "<root>"}: ${i.message}`);
    throw new EncryptionConfigurationError(`error decoding encryption provider configuration file "${source}": ${goAggregate(issues)}`);
  }
  const errors = validateEncryptionConfiguration(decoded.output);
  if (errors.length > 0) throw new EncryptionConfigurationError(goAggregate(errors.map(fieldErrorText)));
  return decoded.output;
}

// Kubernetes' messages, word for word.
const moreThanOneElementErr = "more than one provider specified in a single element, should split into different list elements";
const noProviderErr = "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity";
const base64EncodingErr = "secrets must be base64 encoded";
const eventsGroupErr = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file";
const extensionsGroupErr = "'extensions' group has been removed and cannot be used for encryption";
const starResourceErr = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources";
const overlapErr = "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked";
const nonRESTAPIResourceErr = "resources which do not have REST API/s cannot be encrypted";
const resourceNameErr = "resource name should not contain capital letters";
const resourceAcrossGroupErr = "encrypting the same resource across groups is not supported";
const duplicateResourceErr = "the same resource cannot be specified multiple times";
const atLeastOneRequired = (what: string) => `at least one ${what} is required`;

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

export function validateEncryptionConfiguration(c: EncryptionConfiguration): FieldError[] {
  const root = FieldPath.root("resources");
  const resources = c.resources;
  if (resources.length === 0) return [fieldError.required(root, atLeastOneRequired(String(root)))];
  const errs: FieldError[] = [];
  resources.forEach((conf, i) => {
    const r = root.index(i).child("resources");
    const p = root.index(i).child("providers");
    const names = conf.resources;
    const providers = conf.providers;
    if (names.length === 0) errs.push(fieldError.required(r, atLeastOneRequired(String(r))));
    errs.push(...validateResourceOverlap(names, r), ...validateResourceNames(names, r));
    if (providers.length === 0) errs.push(fieldError.required(p, atLeastOneRequired(String(p))));
    providers.forEach((provider, j) => {
      const path = p.index(j);
      const found = PROVIDER_TYPES.filter((t) => provider[t] !== undefined).length;
      if (found !== 1) {
        errs.push(fieldError.invalid(path, provider, found === 0 ? noProviderErr : moreThanOneElementErr));
        return;
      }
      if (provider.aesgcm) errs.push(...validateKeys(provider.aesgcm.keys, path.child("aesgcm", "keys"), AES_KEY_SIZES));
      if (provider.aescbc) errs.push(...validateKeys(provider.aescbc.keys, path.child("aescbc", "keys"), AES_KEY_SIZES));
      if (provider.secretbox) errs.push(...validateKeys(provider.secretbox.keys, path.child("secretbox", "keys"), SECRETBOX_KEY_SIZES));
    });
  });
  return errs;
}

function validateResourceOverlap(resources: string[], at: FieldPath): FieldError[] {
  if (resources.length < 2) return [];
  const parsed = resources.map(parseGroupResource);
  let hasOverlap = false;
  let hasDuplicate = false;
  parsed.forEach((r1, i) => {
    parsed.forEach((r2, j) => {
      if (i === j) return;
      if (r1.group === r2.group && r1.resource === r2.resource) {
        hasDuplicate = true;
        return;
      }
      if (r1.group === "*" && r1.resource === "*") hasOverlap = true;
      else if (r1.group === r2.group && (r1.resource === "*" || r2.resource === "*")) hasOverlap = true;
    });
  });
  const errs: FieldError[] = [];
  if (hasDuplicate) errs.push(fieldError.invalid(at, resources, duplicateResourceErr));
  if (hasOverlap) errs.push(fieldError.invalid(at, resources, overlapErr));
  return errs;
}

function validateResourceNames(resources: string[], at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  resources.forEach((res, j) => {
    const path = at.index(j);
    const { group, resource } = parseGroupResource(res);
    const detail =
      res !== res.toLowerCase()
        ? resourceNameErr
        : res === "*"
          ? starResourceErr
          : ["apiserveripinfo", "serviceipallocations", "servicenodeportallocations"].includes(res)
            ? nonRESTAPIResourceErr
            : group === "events.k8s.io"
              ? eventsGroupErr
              : group === "extensions"
                ? extensionsGroupErr
                : group === "*" && resource !== "*"
                  ? resourceAcrossGroupErr
                  : undefined;
    if (detail) errs.push(fieldError.invalid(path, res, detail));
  });
  return errs;
}

function validateKeys(keys: EncryptionKey[], at: FieldPath, sizes: number[]): FieldError[] {
  if (keys.length === 0) return [fieldError.required(at, atLeastOneRequired("keys"))];
  return keys.flatMap((key, i) => {
    const path = at.index(i);
    const errs: FieldError[] = [];
    if (key.name === "") errs.push(fieldError.required(path.child("name"), "name is a mandatory field for a key"));
    if (key.secret === "") return [...errs, fieldError.required(path.child("secret"), "secret is a mandatory field for a key")];
    const secret = decodeBase64Strict(key.secret);
    // The secret itself is never printed, as in Kubernetes.
    if (!secret) errs.push(fieldError.invalid(path.child("secret"), "REDACTED", base64EncodingErr));
    else if (!sizes.includes(secret.length))
      errs.push(
        fieldError.invalid(
          path.child("secret"),
          "REDACTED",
          `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(" ")}]`,
        ),
      );
    return errs;
  });
}

/** Go's base64.StdEncoding.DecodeString: padded standard alphabet only (Node's decoder accepts anything). */
export function decodeBase64Strict(text: string): Buffer | undefined {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return undefined;
  return Buffer.from(text, "base64");
}
