// Secret (core/v1), with Kubernetes' ValidateSecret for its data: keys as ConfigMap keys, at most
// 1 MiB of data (decoded) in all, as etcd-backed Kubernetes refuses larger Secrets, and the keys each
// well-known `type` needs (SECRET_TYPES). The type names are Kubernetes' in both profiles (kubectl
// and every client hard-code them); the service account annotation is the profile's. As in Kubernetes'
// conversion to its internal type, `stringData` is merged into `data` while the body is decoded, so it
// is never stored nor returned, and `data` that is not base64 is a decoding error (400). An immutable
// Secret keeps its data and stays immutable (ValidateSecretUpdate).
import { type ObjectHeader, Secret, defaultSecret } from "@orch/api";
import { type FieldError, FieldPath, fieldError, fieldImmutableErrorMsg, goBase64Error, jsonEqual } from "@orch/machinery";
import { DecodeError, decodeJson } from "@orch/machinery/serializer";
import type { KindDefinition, RequestContext } from "../../generic/kind.js";
import { AGE, column, defineKind } from "../../generic/define.js";
import { isConfigMapKey } from "./pod-validation-formats.js";

/** core.MaxSecretSize: the data of one Secret, in bytes. */
export const MAX_SECRET_BYTES = 1024 * 1024;

function validateSecretData(obj: ObjectHeader): FieldError[] {
  const data = (obj.data as Record<string, string> | undefined) ?? {};
  const at = FieldPath.root("data");
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const msg of isConfigMapKey(key)) errs.push(fieldError.invalid(at.key(key), key, msg));
    total += typeof value === "string" ? Buffer.byteLength(value, "base64") : 0;
  }
  if (total > MAX_SECRET_BYTES) errs.push(fieldError.tooLong(at, "", MAX_SECRET_BYTES));
  return errs;
}

/** Kubernetes' well-known Secret types (core.SecretType*), the same names in both profiles. */
export const SECRET_TYPES = {
  serviceAccountToken: "kubernetes.io/service-account-token",
  dockercfg: "kubernetes.io/dockercfg",
  dockerConfigJson: "kubernetes.io/dockerconfigjson",
  basicAuth: "kubernetes.io/basic-auth",
  sshAuth: "kubernetes.io/ssh-auth",
  tls: "kubernetes.io/tls",
} as const;

/**
 * json.Unmarshal(bytes, &map[string]interface{}{})'s error, or undefined. The bytes are read one
 * character each (latin1), so a syntax error names the byte Go's scanner names.
 */
function goJsonObjectError(bytes: Buffer): string | undefined {
  let value: unknown;
  try {
    value = decodeJson(bytes.toString("latin1"));
  } catch (e) {
    if (e instanceof DecodeError) return e.message;
    throw e;
  }
  if (value === null || (typeof value === "object" && !Array.isArray(value))) return undefined;
  const kind = Array.isArray(value) ? "array" : typeof value === "boolean" ? "bool" : typeof value;
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`;
}

/** The switch on `type` in ValidateSecret: each well-known type's required keys (or annotation). */
function validateSecretType(obj: ObjectHeader, ctx: RequestContext): FieldError[] {
  const data = (obj.data as Record<string, string> | undefined) ?? {};
  const has = (key: string) => Object.hasOwn(data, key);
  const bytes = (key: string) => Buffer.from(data[key] ?? "", "base64");
  const at = FieldPath.root("data");
  const dockerConfig = (key: string): FieldError[] => {
    if (!has(key)) return [fieldError.required(at.key(key))];
    const error = goJsonObjectError(bytes(key));
    return error ? [fieldError.invalid(at.key(key), "<secret contents redacted>", error)] : [];
  };
  switch (obj.type) {
    case SECRET_TYPES.serviceAccountToken: {
      // Only the name: the uid and the token are a controller's to add later.
      const key = ctx.profile.annotations.serviceAccountName;
      if (obj.metadata.annotations?.[key]) return [];
      return [fieldError.required(FieldPath.root("metadata").child("annotations").key(key))];
    }
    case SECRET_TYPES.dockercfg:
      return dockerConfig(".dockercfg");
    case SECRET_TYPES.dockerConfigJson:
      return dockerConfig(".dockerconfigjson");
    case SECRET_TYPES.basicAuth:
      // Either may be empty, but one must be there.
      return has("username") || has("password") ? [] : [fieldError.required(at.key("username")), fieldError.required(at.key("password"))];
    case SECRET_TYPES.sshAuth:
      // Present and not empty.
      return bytes("ssh-privatekey").length > 0 ? [] : [fieldError.required(at.key("ssh-privatekey"))];
    case SECRET_TYPES.tls:
      return ["tls.crt", "tls.key"].filter((key) => !has(key)).map((key) => fieldError.required(at.key(key)));
    default:
      return [];
  }
}

/** ValidateSecret: the data, then the rules of its type. */
function validateSecret(obj: ObjectHeader, ctx: RequestContext): FieldError[] {
  return [...validateSecretData(obj), ...validateSecretType(obj, ctx)];
}

/**
 * Convert_v1_Secret_To_core_Secret: `data` decoded as `[]byte` (its first bad value is the decoder's
 * error), then every `stringData` entry written over `data` as the bytes of its UTF-8 text.
 */
function fromVersioned(secret: Secret): string | undefined {
  for (const value of Object.values(secret.data ?? {})) {
    const error = goBase64Error(value);
    if (error) return error;
  }
  const { stringData } = secret;
  delete secret.stringData;
  if (stringData && Object.keys(stringData).length > 0) {
    secret.data = { ...secret.data };
    for (const [key, text] of Object.entries(stringData)) secret.data[key] = Buffer.from(text, "utf8").toString("base64");
  }
  return undefined;
}

/** The rules immutable Secrets and ConfigMaps share: `immutable` stays true and `fields` keep their values. */
export function immutableDataErrors(obj: ObjectHeader, old: ObjectHeader, fields: readonly string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const message = "field is immutable when `immutable` is set";
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push(fieldError.forbidden("immutable", message));
  for (const field of fields) {
    // Go compares the maps with reflect.DeepEqual, where an absent map and an empty one differ.
    if (!jsonEqual(obj[field] ?? null, old[field] ?? null)) errs.push(fieldError.forbidden(field, message));
  }
  return errs;
}

/** ValidateSecretUpdate: the type never changes, then the immutable rules, then ValidateSecret. */
function validateSecretUpdate(obj: ObjectHeader, old: ObjectHeader, ctx: RequestContext): FieldError[] {
  const errs: FieldError[] = [];
  if (obj.type !== old.type) errs.push(fieldError.invalid("type", obj.type, fieldImmutableErrorMsg));
  return [...errs, ...immutableDataErrors(obj, old, ["data"]), ...validateSecret(obj, ctx)];
}

export const secrets = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
    schema: Secret,
    strategy: { fromVersioned, defaults: defaultSecret, validate: validateSecret, validateUpdate: validateSecretUpdate },
    selectableFields: { type: (o) => o.type as string | undefined },
    printerColumns: [
      column("Type", "string", (o) => o.type),
      column("Data", "integer", (o) => Object.keys((o.data as object | undefined) ?? {}).length),
      AGE,
    ],
  });
