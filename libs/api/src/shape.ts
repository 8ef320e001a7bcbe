// Derives the merge shape (@orch/machinery `Shape`) of a built-in kind from its valibot schema: the
// list semantics and struct strategies live beside the schema, as metadata, in one place.
import { type ObjectShape, type Shape, scalarShape, untypedShape } from "@orch/machinery";
import * as v from "valibot";
import { SCHEMA_WRAPPERS, type SchemaNode } from "./decode.js";
import { type AnySchema, listSemantics } from "./schema.js";

/** Struct-level merge semantics (Kubernetes' `patchStrategy=retainKeys`, `+mapType=atomic`). */
export type StructSemantics = { retainKeys?: boolean; mapType?: "atomic" | "granular" };

/** Marks a struct schema with its merge semantics. */
export const withStructSemantics = <S extends AnySchema>(schema: S, semantics: StructSemantics) => v.pipe(schema, v.metadata(semantics));

const cache = new WeakMap<object, Shape>();

/** The shape of values this schema decodes. */
export function shapeOf(schema: AnySchema): Shape {
  const node = schema as unknown as SchemaNode;
  const known = cache.get(node);
  if (known) return known;
  const shape = derive(node);
  cache.set(node, shape);
  return shape;
}

function derive(node: SchemaNode): Shape {
  if (SCHEMA_WRAPPERS.has(node.type)) return shapeOf(node.wrapped as unknown as AnySchema);
  switch (node.type) {
    case "lazy":
      return lazyShape(node);
    case "object":
    case "loose_object": {
      const entries = node.entries!;
      const meta = structMeta(node);
      const shape: ObjectShape = {
        kind: "object",
        field: (name) => (Object.hasOwn(entries, name) ? shapeOf(entries[name] as unknown as AnySchema) : undefined),
        defaultOf: (name) => (Object.hasOwn(entries, name) ? schemaDefault(entries[name]!) : undefined),
        ...(meta.mapType ? { mapType: meta.mapType } : {}),
        ...(meta.retainKeys ? { retainKeys: true } : {}),
        ...(node.type === "loose_object" ? { preserveUnknown: true } : {}),
      };
      return shape;
    }
    case "array": {
      const semantics = listSemantics(node as unknown as AnySchema) ?? { listType: "atomic" as const };
      return { kind: "list", item: shapeOf(node.item as unknown as AnySchema), ...semantics };
    }
    case "record":
      return { kind: "map", value: shapeOf(node.value as unknown as AnySchema) };
    case "union": {
      // A union of an object form and something else (JSONSchemaPropsOrBool) is shaped by its object form.
      const shapes = node.options!.map((o) => shapeOf(o as unknown as AnySchema));
      return shapes.find((s) => s.kind !== "scalar") ?? scalarShape;
    }
    case "unknown":
    case "any":
      return untypedShape;
    default:
      return scalarShape;
  }
}

/** Recursive schemas (JSONSchemaProps) resolve on first use, so the cycle is not walked eagerly. */
function lazyShape(node: SchemaNode): Shape {
  let resolved: Shape | undefined;
  const target = () => (resolved ??= shapeOf(node.getter!(undefined) as unknown as AnySchema));
  return {
    kind: "object",
    field: (name) => (target().kind === "object" ? (target() as ObjectShape).field(name) : undefined),
  };
}

/** The default an optional member takes (valibot `optional(schema, default)`). */
function schemaDefault(node: SchemaNode): unknown {
  const fallback = (node as { default?: unknown }).default;
  return typeof fallback === "function" ? (fallback as () => unknown)() : fallback;
}

function structMeta(node: SchemaNode): StructSemantics {
  const meta = node.pipe?.find((a) => a.kind === "metadata" && a.type === "metadata");
  return (meta?.metadata as StructSemantics | undefined) ?? {};
}
