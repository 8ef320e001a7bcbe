// Structural pruning (apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go) and the
// removal of nulls a schema does not allow (schema/defaulting/prunenulls.go), in place.
import { type SchemaNode, additionalSchema, isPlainObject } from "./structural.js";

const typeAndObjectMeta = new Set(["apiVersion", "kind", "metadata"]);

/** The ObjectMeta fields of an embedded resource's metadata (metav1.ObjectMeta's JSON names). */
const objectMetaFields = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

const join = (parent: string, key: string) => (parent === "" ? key : `${parent}.${key}`);

class Pruner {
  readonly dropped: string[] = [];

  drop(x: Record<string, unknown>, key: string, path: string): void {
    this.dropped.push(join(path, key));
    delete x[key];
  }

  /**
   * prune(): a node without schema keeps scalars but loses every object member; `embedded` marks the
   * resource root and embedded resources, whose apiVersion, kind and metadata stay.
   */
  prune(x: unknown, s: SchemaNode | undefined, path: string, root = false): void {
    if (s?.preserveUnknownFields) return this.skipPrune(x, s, path, root);
    if (isPlainObject(x)) {
      if (!s) {
        for (const key of Object.keys(x)) this.drop(x, key, path);
        return;
      }
      for (const key of Object.keys(x)) {
        if ((root || s.embeddedResource) && typeAndObjectMeta.has(key)) {
          if (key === "metadata" && s.embeddedResource && !root) this.pruneEmbeddedMetadata(x[key], join(path, key));
          continue;
        }
        const prop = s.properties.get(key);
        if (prop) this.prune(x[key], prop, join(path, key));
        else if (s.additionalProperties !== undefined) this.prune(x[key], additionalSchema(s), join(path, key));
        else this.drop(x, key, path);
      }
    } else if (Array.isArray(x)) {
      x.forEach((item, i) => this.prune(item, s?.items, `${path}[${i}]`));
    }
  }

  /** Under x-preserve-unknown-fields: unknown members stay, known ones are pruned by their schema. */
  skipPrune(x: unknown, s: SchemaNode | undefined, path: string, root = false): void {
    if (!s) return;
    if (isPlainObject(x)) {
      for (const key of Object.keys(x)) {
        if ((root || s.embeddedResource) && typeAndObjectMeta.has(key)) {
          if (key === "metadata" && s.embeddedResource && !root) this.pruneEmbeddedMetadata(x[key], join(path, key));
          continue;
        }
        const prop = s.properties.get(key);
        if (prop) this.prune(x[key], prop, join(path, key));
        else if (s.additionalProperties !== undefined) this.prune(x[key], additionalSchema(s), join(path, key));
      }
    } else if (Array.isArray(x)) {
      x.forEach((item, i) => this.skipPrune(item, s.items, `${path}[${i}]`));
    }
  }

  /** An embedded resource's metadata keeps ObjectMeta's fields only (objectmeta.Coerce). */
  pruneEmbeddedMetadata(metadata: unknown, path: string): void {
    if (!isPlainObject(metadata)) return;
    for (const key of Object.keys(metadata)) if (!objectMetaFields.has(key)) this.drop(metadata, key, path);
  }
}

/** Drops the fields `schema` does not know, in place; returns their paths (`spec.foo`, `spec.list[0].x`). */
export function pruneUnknownFields(value: unknown, schema: SchemaNode, resourceRoot = true): string[] {
  const pruner = new Pruner();
  pruner.prune(value, schema, "", resourceRoot);
  return pruner.dropped;
}

/** PruneNonNullableNullsWithoutDefaults: a null where the schema is not nullable and has no default goes. */
export function pruneNonNullableNulls(x: unknown, s: SchemaNode | undefined): void {
  if (!s) return;
  if (isPlainObject(x)) {
    for (const key of Object.keys(x)) {
      const member = x[key];
      const prop = s.properties.get(key) ?? additionalSchema(s);
      if (!prop) continue;
      if (member === null && !prop.hasDefault && !prop.nullable) delete x[key];
      else pruneNonNullableNulls(member, prop);
    }
  } else if (Array.isArray(x)) {
    for (const item of x) pruneNonNullableNulls(item, s.items);
  }
}
