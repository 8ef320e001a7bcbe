export {
  type Path,
  type PathElement,
  type KeyField,
  compareElements,
  deserializeElement,
  elementText,
  pathText,
  serializeElement,
} from "./path.js";
export { FieldSet, type FieldsV1, FieldsV1Error } from "./set.js";
export { type Comparison, ShapeError, compare, fieldsOf, identical, itemElement, merge, removeItems } from "./typed.js";
export { type Conflict, Conflicts, type IgnoreFilter, type ManagedSets, type VersionedSet, apply, update } from "./updater.js";
export * from "./managed-fields.js";
