// A CRD schema's `default`s checked when the CRD is written, as apiextensions-apiserver
// pkg/apiserver/schema/defaulting/validation.go (ValidateDefaults) does: each default must already be
// pruned (`must not have unknown fields`), must validate against its own node's schema with
// kube-openapi's messages, hold valid embedded resources, and pass the node's CEL rules, with the
// errors placed under `….default`. additionalProperties is not followed: defaults are forbidden there
// inside resource metadata, and Kubernetes does not follow it either.
import type { JSONSchemaProps } from "@orch/api";
import { type FieldError, FieldPath, fieldError, fieldErrorText, jsonEqual } from "@orch/machinery";
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

/** A step from a resource root to a node: a property name, or any item of a list. */
type Step = string | { item: true };

/** NewRootObjectFunc: the value placed at `steps` inside a stand-in object of the resource. */
function surroundingObject(steps: readonly Step[], value: unknown): Record<string, unknown> {
  let inner: unknown = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    inner = typeof step === "string" ? { [step]: inner } : [inner];
  }
  return { apiVersion: "validation/v1", kind: "Validation", ...(inner as Record<string, unknown>) };
}

/** ToAggregate's text: one error as is, several in brackets. */
const aggregate = (errs: readonly FieldError[]) =>
  errs.length === 1 ? fieldErrorText(errs[0]!) : `[${errs.map(fieldErrorText).join(", ")}]`;

function validateDefault(s: SchemaNode, at: FieldPath, resource: ResourceContext, requirePruned: boolean): FieldError[] {
  const value = s.default;
  const defaultAt = at.child("default");
  const errs: FieldError[] = [];
  if (resource.insideMeta) {
    // A default for apiVersion, kind or metadata is checked in the object it would produce.
    const produced = validateEmbeddedResourcesAt(resource.root, surroundingObject(resource.steps, deepCopy(value)), FieldPath.root());
    if (produced.length) return [fieldError.invalid(defaultAt, value, `must result in valid metadata: ${aggregate(produced)}`)];
  } else if (requirePruned) {
    const pruned = deepCopy(value);
    pruneUnknownFields(pruned, s, s.embeddedResource);
    if (!jsonEqual(pruned, value)) errs.push(fieldError.invalid(defaultAt, value, "must not have unknown fields"));
  }
  const embedded = resource.insideMeta ? [] : validateEmbeddedResourcesAt(s, value, defaultAt);
  if (embedded.length) return [...errs, ...embedded];
  const schemaErrors = validateOpenAPIAt(s, value, defaultAt);
  if (schemaErrors.length) return [...errs, ...schemaErrors];
  // The rules see the default as both self and oldSelf (an unchanged value).
  return [...errs, ...validateRules(s, value, value, defaultAt, resource.root === s)];
}

/** The resource a node belongs to (the root, or the nearest embedded resource) and the way to it. */
interface ResourceContext {
  root: SchemaNode;
  steps: readonly Step[];
  /** Under the resource's apiVersion, kind or metadata. */
  insideMeta: boolean;
}

const resourceMeta = new Set(["apiVersion", "kind", "metadata"]);

function walk(s: SchemaNode, at: FieldPath, resource: ResourceContext, requirePruned: boolean): FieldError[] {
  if (s.embeddedResource) resource = { root: s, steps: [], insideMeta: false };
  const errs = s.hasDefault ? validateDefault(s, at, resource, requirePruned) : [];
  if (s.items) {
    const inItems = { ...resource, steps: [...resource.steps, { item: true } as const] };
    errs.push(...walk(s.items, at.child("items"), inItems, requirePruned));
  }
  for (const [name, prop] of s.properties) {
    const insideMeta = resource.insideMeta || (resource.root === s && resourceMeta.has(name));
    errs.push(
      ...walk(prop, at.child("properties").key(name), { ...resource, steps: [...resource.steps, name], insideMeta }, requirePruned),
    );
  }
  return errs;
}

/** The default errors of a CRD version schema (structural, already checked); `at` is …openAPIV3Schema. */
export function validateSchemaDefaults(schema: JSONSchemaProps, options: DefaultsOptions, at: FieldPath): FieldError[] {
  const root = compileNode(schema, options.extensionPrefix);
  // The CRD's root is validated as an embedded resource would be (ValidateDefaults' isResourceRoot).
  const rootResource = { ...root, embeddedResource: true };
  return walk(rootResource, at, { root: rootResource, steps: [], insideMeta: false }, options.requirePrunedDefaults);
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
