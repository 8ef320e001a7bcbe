// The merge shape (@orch/machinery `Shape`) of a custom resource, read from its structural schema:
// objects by their properties, maps by additionalProperties, lists by `x-*-list-type` and
// `x-*-list-map-keys`, `x-*-map-type`, and untyped values where unknown fields are preserved.
import { ObjectMeta, shapeOf } from "@orch/api";
import { type ListType, type ObjectShape, type Shape, scalarShape, untypedShape } from "@orch/machinery";
import type { SchemaNode } from "./structural.js";

const listTypes: ReadonlySet<string> = new Set(["atomic", "set", "map"]);

const mapTypeOf = (s: SchemaNode): { mapType?: "atomic" | "granular" } =>
  s.mapType === "atomic" || s.mapType === "granular" ? { mapType: s.mapType } : {};

/** The shape of a schema node; `resource` marks the root and embedded resources (typed metadata). */
export function shapeOfSchema(s: SchemaNode, resource = false): Shape {
  const isResource = resource || s.embeddedResource;
  if (s.intOrString) return scalarShape;
  if (s.type === "array") {
    const listType = (s.listType && listTypes.has(s.listType) ? s.listType : "atomic") as ListType;
    return {
      kind: "list",
      item: s.items ? shapeOfSchema(s.items) : untypedShape,
      listType,
      ...(listType === "map" && s.listMapKeys.length ? { listMapKeys: s.listMapKeys } : {}),
    };
  }
  const objectLike = s.type === "object" || s.properties.size > 0 || isResource;
  if (!objectLike) return s.type === "" ? untypedShape : scalarShape;
  if (s.additionalProperties !== undefined && s.properties.size === 0 && !isResource) {
    const values = typeof s.additionalProperties === "object" ? shapeOfSchema(s.additionalProperties) : untypedShape;
    return { kind: "map", value: values, ...mapTypeOf(s) };
  }
  if (s.type === "object" && s.properties.size === 0 && s.preserveUnknownFields && !isResource) return untypedShape;
  const fields = new Map<string, Shape>();
  for (const [name, prop] of s.properties) fields.set(name, shapeOfSchema(prop));
  if (isResource) {
    fields.set("apiVersion", scalarShape);
    fields.set("kind", scalarShape);
    fields.set("metadata", shapeOf(ObjectMeta));
  }
  const shape: ObjectShape = {
    kind: "object",
    field: (name) => fields.get(name),
    ...mapTypeOf(s),
    ...(s.preserveUnknownFields ? { preserveUnknown: true } : {}),
  };
  return shape;
}
