// Secret (core/v1), with Kubernetes' ValidateSecret for its data: keys as ConfigMap keys, and at most
// 1 MiB of data (decoded) in all, as etcd-backed Kubernetes refuses larger Secrets. As in Kubernetes'
// conversion to its internal type, `stringData` is merged into `data` while the body is decoded, so it
// is never stored nor returned, and `data` that is not base64 is a decoding error (400). An immutable
// Secret keeps its data and stays immutable (ValidateSecretUpdate).
import { type ObjectHeader, Secret, defaultSecret } from "@orch/api";
import { type FieldError, FieldPath, fieldError, fieldImmutableErrorMsg, goBase64Error, jsonEqual } from "@orch/machinery";
import type { KindDefinition } from "../../generic/kind.js";
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
function validateSecretUpdate(obj: ObjectHeader, old: ObjectHeader): FieldError[] {
  const errs: FieldError[] = [];
  if (obj.type !== old.type) errs.push(fieldError.invalid("type", obj.type, fieldImmutableErrorMsg));
  return [...errs, ...immutableDataErrors(obj, old, ["data"]), ...validateSecretData(obj)];
}

export const secrets = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
    schema: Secret,
    strategy: { fromVersioned, defaults: defaultSecret, validate: validateSecretData, validateUpdate: validateSecretUpdate },
    selectableFields: { type: (o) => o.type as string | undefined },
    printerColumns: [
      column("Type", "string", (o) => o.type),
      column("Data", "integer", (o) => Object.keys((o.data as object | undefined) ?? {}).length),
      AGE,
    ],
  });
