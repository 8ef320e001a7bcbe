// Structural defaulting (apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go): a
// missing member, or a null one the schema does not allow, gets a deep copy of its schema's default;
// then the members are defaulted in turn, so defaults nest.
import { type SchemaNode, additionalSchema, deepCopy, isPlainObject } from "./structural.js";

const isNonNullableNull = (x: unknown, s: SchemaNode | undefined): s is SchemaNode => x === null && s !== undefined && !s.nullable;

export function applyDefaults(x: unknown, s: SchemaNode | undefined): void {
  if (!s) return;
  if (isPlainObject(x)) {
    for (const [key, prop] of s.properties) {
      if (!prop.hasDefault) continue;
      if (!Object.hasOwn(x, key) || isNonNullableNull(x[key], prop)) x[key] = deepCopy(prop.default);
    }
    for (const key of Object.keys(x)) {
      const prop = s.properties.get(key);
      if (prop) {
        applyDefaults(x[key], prop);
      } else if (s.additionalProperties !== undefined) {
        const values = additionalSchema(s);
        if (isNonNullableNull(x[key], values)) x[key] = deepCopy(values.default ?? null);
        applyDefaults(x[key], values);
      }
    }
  } else if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], s.items)) x[i] = deepCopy(s.items.default ?? null);
      applyDefaults(x[i], s.items);
    }
  }
}
