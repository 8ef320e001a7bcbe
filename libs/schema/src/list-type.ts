// The invariants of `x-*-list-type: set` and `map` (apiextensions-apiserver
// pkg/apiserver/schema/listtype/validation.go): items of a set are unique, items of a map are objects
// unique by their key fields. Each later appearance of a repeated value is a Duplicate value error
// (only the first repetition of a value is reported, as Kubernetes does).
import { type FieldError, FieldPath, fieldError } from "@orch/machinery";
import { type SchemaNode, additionalSchema, isPlainObject } from "./structural.js";

/** A key identifying a JSON value: scalars by type and value, compounds by their JSON. */
const identity = (x: unknown): string => `${typeof x}:${JSON.stringify(x)}`;

/** Indices of the first repetition of each repeated identity. */
function repeatedIndices(ids: readonly string[]): number[] {
  const seen = new Map<string, number>();
  const repeated: number[] = [];
  ids.forEach((id, i) => {
    const times = seen.get(id) ?? 0;
    seen.set(id, times + 1);
    if (times === 1) repeated.push(i);
  });
  return repeated;
}

function validateListMap(path: FieldPath, s: SchemaNode, list: readonly unknown[]): FieldError[] {
  for (const [i, x] of list.entries()) {
    if (x !== null && !isPlainObject(x)) return [fieldError.invalid(path.index(i), x, "must be an object for an array of list-type map")];
  }
  if (list.length <= 1) return [];
  const keyOf = (x: unknown): Record<string, unknown> => {
    const key: Record<string, unknown> = {};
    if (!isPlainObject(x)) return key;
    for (const name of s.listMapKeys) {
      const value = Object.hasOwn(x, name) ? x[name] : s.items?.properties.get(name)?.default;
      if (value !== undefined) key[name] = value;
    }
    return key;
  };
  const ids = list.map((x) => (x === null ? "unspecified" : identity(s.listMapKeys.map((name) => keyOf(x)[name] ?? null))));
  return repeatedIndices(ids).map((i) => fieldError.duplicate(path.index(i), keyOf(list[i])));
}

function validateArray(path: FieldPath, s: SchemaNode, list: readonly unknown[]): FieldError[] {
  const errs: FieldError[] = [];
  if (s.listType === "set" && list.length > 1) {
    for (const i of repeatedIndices(list.map(identity))) errs.push(fieldError.duplicate(path.index(i), list[i]));
  } else if (s.listType === "map") {
    errs.push(...validateListMap(path, s, list));
  }
  if (s.items) list.forEach((item, i) => errs.push(...validateValue(path.index(i), s.items!, item)));
  return errs;
}

function validateObject(path: FieldPath, s: SchemaNode, obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const values = additionalSchema(s);
  if (values) for (const [k, v] of Object.entries(obj)) errs.push(...validateValue(path.key(k), values, v));
  for (const [k, v] of Object.entries(obj)) {
    const prop = s.properties.get(k);
    if (prop) errs.push(...validateValue(path.child(k), prop, v));
  }
  return errs;
}

function validateValue(path: FieldPath, s: SchemaNode, x: unknown): FieldError[] {
  if (isPlainObject(x)) return validateObject(path, s, x);
  if (Array.isArray(x)) return validateArray(path, s, x);
  return [];
}

/** ValidateListSetsAndMaps from the object's root. */
export function validateListSetsAndMaps(schema: SchemaNode, obj: unknown): FieldError[] {
  return isPlainObject(obj) ? validateObject(FieldPath.root(), schema, obj) : [];
}
