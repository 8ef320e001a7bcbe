// ObjectMeta rules common to every kind, run before the kind's own validation.
import type { ObjectHeader, ObjectMeta } from "@orch/api";
import { type FieldError, fieldError } from "@orch/machinery";
import type { KindDefinition } from "./kind.js";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

export function dnsSubdomainName(name: string): string[] {
  const out: string[] = [];
  if (name.length > 253) out.push("must be no more than 253 characters");
  if (!DNS_SUBDOMAIN.test(name)) out.push(SUBDOMAIN_MSG);
  return out;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export function dnsLabelName(name: string): string[] {
  const out: string[] = [];
  if (name.length > 63) out.push("must be no more than 63 characters");
  if (!DNS_LABEL.test(name)) out.push(LABEL_MSG);
  return out;
}

export function validateMetaForCreate(kind: KindDefinition, meta: ObjectMeta, obj: ObjectHeader = { metadata: meta }): FieldError[] {
  const errs: FieldError[] = [];
  const validateName = kind.validateName ?? dnsSubdomainName;
  if (!meta.name) {
    errs.push(fieldError.required("metadata.name", "name or generateName is required"));
  } else {
    for (const msg of validateName(meta.name, obj)) errs.push(fieldError.invalid("metadata.name", meta.name, msg));
  }
  if (kind.namespaced && !meta.namespace) errs.push(fieldError.required("metadata.namespace"));
  if (meta.generation !== undefined && meta.generation < 0) {
    errs.push(fieldError.invalid("metadata.generation", meta.generation, "must be greater than or equal to 0"));
  }
  return errs;
}

export function validateMetaForUpdate(
  kind: KindDefinition,
  meta: ObjectMeta,
  old: ObjectMeta,
  obj: ObjectHeader = { metadata: meta },
): FieldError[] {
  const errs = validateMetaForCreate(kind, meta, obj);
  const immutable = (field: keyof ObjectMeta) => {
    if (JSON.stringify(meta[field]) !== JSON.stringify(old[field])) {
      errs.push(fieldError.invalid(`metadata.${field}`, meta[field], "field is immutable"));
    }
  };
  immutable("name");
  immutable("namespace");
  immutable("uid");
  if (old.deletionTimestamp) {
    const added = (meta.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f)).sort();
    if (added.length > 0) {
      errs.push(
        fieldError.forbidden(
          "metadata.finalizers",
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(", ")}}`,
        ),
      );
    }
  }
  return errs;
}
