// Secret (core/v1), with Kubernetes' ValidateSecret for its data: keys as ConfigMap keys, and at most
// 1 MiB of data (decoded) in all, as etcd-backed Kubernetes refuses larger Secrets.
import { type ObjectHeader, Secret, defaultSecret } from "@orch/api";
import { type FieldError, FieldPath, fieldError } from "@orch/machinery";
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

export const secrets = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
    schema: Secret,
    strategy: { defaults: defaultSecret, validate: validateSecretData, validateUpdate: validateSecretData },
    selectableFields: { type: (o) => o.type as string | undefined },
    printerColumns: [
      column("Type", "string", (o) => o.type),
      column("Data", "integer", (o) => Object.keys((o.data as object | undefined) ?? {}).length),
      AGE,
    ],
  });
