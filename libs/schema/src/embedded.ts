// Embedded resources (`x-*-embedded-resource`), as apiextensions-apiserver
// pkg/apiserver/schema/objectmeta/validation.go checks them: apiVersion and kind are required and
// well-formed, and the metadata is valid ObjectMeta (names as path segments; namespaced when it has a
// namespace; a missing name is fine).
import {
  type FieldError,
  FieldPath,
  type ObjectMetaLike,
  fieldError,
  isDNS1035Label,
  nameIsPathSegment,
  validateObjectMeta,
} from "@orch/machinery";
import { type SchemaNode, additionalSchema, isPlainObject } from "./structural.js";

/** schema.ParseGroupVersion's error, if any. */
const groupVersionError = (gv: string): string | undefined =>
  gv !== "/" && (gv.match(/\//g)?.length ?? 0) > 1 ? `unexpected GroupVersion string: ${gv}` : undefined;

/** The ObjectMeta fields of a metadata object, dropping malformed ones as GetObjectMeta(…, true) does. */
function objectMeta(x: Record<string, unknown>): ObjectMetaLike {
  const meta: Record<string, unknown> = {};
  const strings = ["name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"];
  for (const k of strings) if (typeof x[k] === "string") meta[k] = x[k];
  for (const k of ["generation", "deletionGracePeriodSeconds"]) if (typeof x[k] === "number") meta[k] = x[k];
  for (const k of ["labels", "annotations"]) {
    const m = x[k];
    if (isPlainObject(m) && Object.values(m).every((v) => typeof v === "string")) meta[k] = m;
  }
  if (Array.isArray(x.finalizers) && x.finalizers.every((f) => typeof f === "string")) meta.finalizers = x.finalizers;
  if (Array.isArray(x.ownerReferences) && x.ownerReferences.every(isPlainObject)) meta.ownerReferences = x.ownerReferences;
  if (Array.isArray(x.managedFields) && x.managedFields.every(isPlainObject)) meta.managedFields = x.managedFields;
  return meta as ObjectMetaLike;
}

function validateEmbeddedResource(path: FieldPath, x: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  if (!Object.hasOwn(x, "apiVersion")) errs.push(fieldError.required(path.child("apiVersion"), "must not be empty"));
  if (!Object.hasOwn(x, "kind")) errs.push(fieldError.required(path.child("kind"), "must not be empty"));
  for (const [k, v] of Object.entries(x)) {
    if (k === "apiVersion") {
      const at = path.child("apiVersion");
      if (typeof v !== "string") errs.push(fieldError.invalid(at, v, "must be a string"));
      else if (v === "") errs.push(fieldError.invalid(at, v, "must not be empty"));
      else {
        const problem = groupVersionError(v);
        if (problem) errs.push(fieldError.invalid(at, v, problem));
      }
    } else if (k === "kind") {
      const at = path.child("kind");
      if (typeof v !== "string") errs.push(fieldError.invalid(at, v, "must be a string"));
      else if (v === "") errs.push(fieldError.invalid(at, v, "must not be empty"));
      else {
        const problems = isDNS1035Label(v.toLowerCase());
        if (problems.length) errs.push(fieldError.invalid(at, v, `may have mixed case, but should otherwise match: ${problems.join(",")}`));
      }
    }
  }
  const metadata = x.metadata;
  // Malformed metadata is dropped when the object is read (objectmeta.Coerce), not reported here.
  if (!isPlainObject(metadata)) return errs;
  const meta = objectMeta(metadata);
  // A name is not required in an embedded resource; Kubernetes validates it with a stand-in.
  if (!meta.name) meta.name = "fakename";
  errs.push(
    ...validateObjectMeta(meta, {
      namespaced: (meta.namespace ?? "") !== "",
      nameValidator: nameIsPathSegment,
      path: path.child("metadata"),
    }),
  );
  return errs;
}

function validate(path: FieldPath, x: unknown, s: SchemaNode | undefined): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (isPlainObject(x)) {
    if (s.embeddedResource) errs.push(...validateEmbeddedResource(path, x));
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties.get(k);
      if (prop) errs.push(...validate(path.child(k), v, prop));
      else if (s.additionalProperties !== undefined) errs.push(...validate(path.key(k), v, additionalSchema(s)));
    }
  } else if (Array.isArray(x)) {
    x.forEach((item, i) => errs.push(...validate(path.index(i), item, s.items)));
  }
  return errs;
}

/** Validates every embedded resource under the object's root (the root's own metadata is not ours). */
export function validateEmbeddedResources(schema: SchemaNode, obj: unknown): FieldError[] {
  return validate(FieldPath.root(), obj, { ...schema, embeddedResource: false });
}

/** The same for a value at `at` that may itself be an embedded resource (a schema's `default`). */
export function validateEmbeddedResourcesAt(schema: SchemaNode, value: unknown, at: FieldPath): FieldError[] {
  return validate(at, value, schema);
}
