// A CRD schema's `default`s checked when the CRD is written, as apiextensions-apiserver
// pkg/apiserver/schema/defaulting/validation.go (ValidateDefaults) does: each default must already be
// pruned (`must not have unknown fields`), must validate against its own node's schema with
// kube-openapi's messages, hold valid embedded resources, and pass the node's CEL rules, with the
// errors placed under `….default`. additionalProperties is not followed: defaults are forbidden there
// inside resource metadata, and Kubernetes does not follow it either.
import type { JSONSchemaProps } from "@orch/api";
import { type FieldError, FieldPath, fieldError, jsonEqual } from "@orch/machinery";
import { validateRules } from "./cel.js";
import { validateEmbeddedResourcesAt } from "./embedded.js";
import { validateOpenAPIAt } from "./openapi.js";
import { pruneUnknownFields } from "./prune.js";
import { type SchemaNode, compileNode, deepCopy } from "./structural.js";
import type { SchemaOptions } from "./types.js";

export interface DefaultsOptions extends SchemaOptions {
  /**
   * requirePrunedDefaults: false only on an update of a CRD that already held an unpruned default
   * (Kubernetes ratchets the rule so such CRDs stay updatable).
   */
  requirePrunedDefaults: boolean;
}

function validateDefault(s: SchemaNode, at: FieldPath, resourceRoot: boolean, requirePruned: boolean): FieldError[] {
  const value = s.default;
  const defaultAt = at.child("default");
  const errs: FieldError[] = [];
  if (requirePruned) {
    const pruned = deepCopy(value);
    pruneUnknownFields(pruned, s, s.embeddedResource);
    if (!jsonEqual(pruned, value)) errs.push(fieldError.invalid(defaultAt, value, "must not have unknown fields"));
  }
  const embedded = validateEmbeddedResourcesAt(s, value, defaultAt);
  if (embedded.length) return [...errs, ...embedded];
  const schemaErrors = validateOpenAPIAt(s, value, defaultAt);
  if (schemaErrors.length) return [...errs, ...schemaErrors];
  // The rules see the default as both self and oldSelf (an unchanged value).
  return [...errs, ...validateRules(s, value, value, defaultAt, resourceRoot)];
}

function walk(s: SchemaNode, at: FieldPath, isResourceRoot: boolean, requirePruned: boolean): FieldError[] {
  const errs = s.hasDefault ? validateDefault(s, at, isResourceRoot || s.embeddedResource, requirePruned) : [];
  if (s.items) errs.push(...walk(s.items, at.child("items"), false, requirePruned));
  for (const [name, prop] of s.properties) errs.push(...walk(prop, at.child("properties").key(name), false, requirePruned));
  return errs;
}

/** The default errors of a CRD version schema (structural, already checked); `at` is …openAPIV3Schema. */
export function validateSchemaDefaults(schema: JSONSchemaProps, options: DefaultsOptions, at: FieldPath): FieldError[] {
  return walk(compileNode(schema, options.extensionPrefix), at, true, options.requirePrunedDefaults);
}

/** Whether a schema (any node) carries a default: unpruned-default ratcheting and defaulting on read ask this. */
export function schemaHasDefaults(schema: JSONSchemaProps | undefined): boolean {
  if (!schema || typeof schema !== "object") return false;
  if (schema.default !== undefined && schema.default !== null) return true;
  const children: (JSONSchemaProps | boolean | JSONSchemaProps[] | undefined)[] = [
    schema.items,
    schema.additionalProperties,
    schema.not,
    ...Object.values(schema.properties ?? {}),
    ...(schema.allOf ?? []),
    ...(schema.anyOf ?? []),
    ...(schema.oneOf ?? []),
  ];
  return children.some((c) => (Array.isArray(c) ? c.some(schemaHasDefaults) : typeof c === "object" && schemaHasDefaults(c)));
}

/** schemaHasUnprunedDefaults: whether any default of a schema is not already pruned by its node. */
export function schemaHasUnprunedDefaults(schema: JSONSchemaProps, options: SchemaOptions): boolean {
  if (!schemaHasDefaults(schema)) return false;
  return validateSchemaDefaults(schema, { ...options, requirePrunedDefaults: true }, FieldPath.root()).some(
    (e) => e.detail === "must not have unknown fields",
  );
}
