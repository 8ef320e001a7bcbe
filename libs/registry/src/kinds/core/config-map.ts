// ConfigMap (core/v1), with Kubernetes' ValidateConfigMap and ValidateConfigMapUpdate: keys as
// IsConfigMapKey, no key in both data and binaryData, at most 1 MiB of both together, and nothing of
// data, binaryData or immutable may change once `immutable` is true.
import { ConfigMap } from "@orch/api";
import { type FieldError, FieldPath, fieldError, goBase64Error, jsonEqual } from "@orch/machinery";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { AGE, column, defineKind } from "../../generic/define.js";
import { isConfigMapKey } from "./pod-validation-formats.js";
import { MAX_SECRET_BYTES } from "./secret.js";

function validate(configMap: ConfigMap): FieldError[] {
  const data = configMap.data ?? {};
  const binaryData = configMap.binaryData ?? {};
  const errs: FieldError[] = [];
  let totalBytes = 0;
  for (const [key, value] of Object.entries(data)) {
    const at = FieldPath.root("data").key(key);
    for (const msg of isConfigMapKey(key)) errs.push(fieldError.invalid(at, key, msg));
    if (key in binaryData) errs.push(fieldError.invalid(at, key, "duplicate of key present in binaryData"));
    totalBytes += Buffer.byteLength(value, "utf8");
  }
  for (const [key, value] of Object.entries(binaryData)) {
    for (const msg of isConfigMapKey(key)) errs.push(fieldError.invalid(FieldPath.root("binaryData").key(key), key, msg));
    totalBytes += Buffer.byteLength(value, "base64");
  }
  // Kubernetes reports the size on the whole object: an empty field path.
  if (totalBytes > MAX_SECRET_BYTES) errs.push(fieldError.tooLong("", "", MAX_SECRET_BYTES));
  return errs;
}

function validateUpdate(configMap: ConfigMap, old: ConfigMap): FieldError[] {
  const errs: FieldError[] = [];
  if (old.immutable) {
    const immutable = "field is immutable when `immutable` is set";
    if (!configMap.immutable) errs.push(fieldError.forbidden("immutable", immutable));
    if (!jsonEqual(configMap.data ?? null, old.data ?? null)) errs.push(fieldError.forbidden("data", immutable));
    if (!jsonEqual(configMap.binaryData ?? null, old.binaryData ?? null)) errs.push(fieldError.forbidden("binaryData", immutable));
  }
  return [...errs, ...validate(configMap)];
}

/** `binaryData` is `[]byte`: a value that is not base64 is the decoder's error (400), as for a Secret's data. */
function fromVersioned(configMap: ConfigMap): string | undefined {
  for (const value of Object.values(configMap.binaryData ?? {})) {
    const error = goBase64Error(value);
    if (error) return error;
  }
  return undefined;
}

const strategy: Strategy<ConfigMap> = { fromVersioned, validate, validateUpdate };

export const configMaps = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    shortNames: ["cm"],
    namespaced: true,
    schema: ConfigMap,
    strategy,
    printerColumns: [column("Data", "integer", (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length), AGE],
  });
