// Walks JSON values by their merge shape, as structured-merge-diff's typed package does: the field
// set of a value (tofieldset.go), the comparison of two values (compare.go), the merge of an applied
// configuration into a live object (merge.go) and the removal of owned fields (remove.go).
// Atomic lists and maps, scalars and untyped values are leaves: owned, compared and replaced whole.
import type { ListShape, Shape } from "@orch/machinery";
import { type Path, type PathElement, type KeyField, fieldElement, keyElement, pathText, serializeElement, valueElement } from "./path.js";
import { FieldSet, elementShape } from "./set.js";

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A value that does not fit its shape (a list-map item without its keys, duplicate applied items). */
export class ShapeError extends Error {
  constructor(path: Path, detail: string) {
    super(path.length > 0 ? `${pathText(path)}: ${detail}` : detail);
  }
}

/** Whether the value at this shape is a single leaf (nothing below it is tracked). */
function isLeaf(shape: Shape): boolean {
  switch (shape.kind) {
    case "object":
    case "map":
      return shape.mapType === "atomic";
    case "list":
      return shape.listType === "atomic";
    default:
      return true;
  }
}

/** The schema default of a key member an item omits (a port's `protocol`), if the shape knows one. */
function keyDefault(item: Shape, name: string): Json {
  if (item.kind !== "object" || !item.defaultOf) return undefined;
  return item.defaultOf(name);
}

/** listItemToPathElement: how an item of a granular list is identified. */
export function itemElement(list: ListShape, item: Json, index: number, path: Path): PathElement {
  if (list.listType === "map" && list.listMapKeys && list.listMapKeys.length > 0) {
    if (item === null) throw new ShapeError(path, `element ${index}: associative list with keys may not have a null element`);
    if (!isObject(item)) throw new ShapeError(path, `element ${index}: associative list with keys may not have non-map elements`);
    const fields: KeyField[] = [];
    for (const name of list.listMapKeys) {
      const value = Object.hasOwn(item, name) ? item[name] : keyDefault(list.item, name);
      if (value === undefined) {
        throw new ShapeError(
          path,
          `element ${index}: associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`,
        );
      }
      fields.push([name, value]);
    }
    return keyElement(fields);
  }
  if (list.listType === "set" || list.listType === "map") {
    if (isObject(item) || Array.isArray(item)) {
      throw new ShapeError(path, `element ${index}: associative list without keys has an element that's a map or list type`);
    }
    return valueElement(item);
  }
  return { index };
}

// ---- field sets ---------------------------------------------------------------------------------

/** The set of fields a value sets (TypedValue.ToFieldSet). */
export function fieldsOf(value: Json, shape: Shape): FieldSet {
  const set = new FieldSet();
  collectFields(value, shape, [], set);
  return set;
}

function collectFields(value: Json, shape: Shape, path: PathElement[], set: FieldSet): void {
  if (isLeaf(shape)) {
    set.insert(path);
    return;
  }
  if (shape.kind === "list") {
    if (!Array.isArray(value)) return;
    const seen = new Set<string>();
    const duplicates = new Set<string>();
    const elements = value.map((item, i) => itemElement(shape, item, i, path));
    for (const pe of elements) {
      const id = serializeElement(pe);
      if (seen.has(id) && !duplicates.has(id)) {
        duplicates.add(id);
        set.insert([...path, pe]);
      }
      seen.add(id);
    }
    elements.forEach((pe, i) => {
      if (duplicates.has(serializeElement(pe))) return;
      const at = [...path, pe];
      collectFields(value[i], shape.item, at, set);
      set.insert(at);
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, member] of Object.entries(value)) {
    const at = [...path, fieldElement(key)];
    const declared = shape.kind === "object" && shape.field(key) !== undefined;
    collectFields(member, elementShape(shape, fieldElement(key)), at, set);
    if (member === null || (isObject(member) && Object.keys(member).length === 0) || !declared) set.insert(at);
  }
}

// ---- comparison ---------------------------------------------------------------------------------

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changed from `before` to `after` (TypedValue.Compare). */
export function compare(before: Json, after: Json, shape: Shape): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareAt(before, after, shape, [], c);
  return c;
}

const emptyContainer = (v: Json) =>
  v === undefined || v === null || (Array.isArray(v) ? v.length === 0 : isObject(v) ? Object.keys(v).length === 0 : true);

function compareAt(lhs: Json, rhs: Json, shape: Shape, path: PathElement[], c: Comparison): void {
  const leaf =
    isLeaf(shape) ||
    (emptyContainer(lhs) && emptyContainer(rhs)) ||
    (shape.kind === "list" ? !listOrAbsent(lhs) || !listOrAbsent(rhs) : !mapOrAbsent(lhs) || !mapOrAbsent(rhs));
  if (leaf) {
    if (lhs === undefined) c.added.insert(path);
    else if (rhs === undefined) c.removed.insert(path);
    else if (!jsonEqual(lhs, rhs)) c.modified.insert(path);
    return;
  }
  if (shape.kind === "list") compareLists(shape, asList(lhs), asList(rhs), path, c);
  else {
    const l = asMap(lhs);
    const r = asMap(rhs);
    for (const key of new Set([...Object.keys(l), ...Object.keys(r)])) {
      const lv = own(l, key);
      const rv = own(r, key);
      // An update changes a few fields of a large object (a pod's status): the equal members are
      // passed over by a walk that builds no paths and looks up no shapes.
      if (identical(lv, rv)) continue;
      const pe = fieldElement(key);
      // A member only the new side has (every member of a create) is added whole.
      if (lv === undefined) addedAt(rv, elementShape(shape, pe), [...path, pe], c.added);
      else compareAt(lv, rv, elementShape(shape, pe), [...path, pe], c);
    }
  }
  if (lhs === undefined) c.added.insert(path);
  else if (rhs === undefined) c.removed.insert(path);
}

/**
 * compareAt(undefined, value): every path of `value` (at `path`, never empty) is added, as compareAt
 * would insert them, but each at its own level as the walk reaches it instead of from the root: a
 * create's comparison is all this. (Not for what was removed: compareAt counts a member whose value is
 * `undefined` as added even below a removed one.)
 */
function addedAt(value: Json, shape: Shape, path: PathElement[], added: FieldSet): void {
  addWhole(value, shape, path, added.levelOf(path));
}

/** `value` at `path`, whose last element is a member of `parent`, with everything below it. */
function addWhole(value: Json, shape: Shape, path: PathElement[], parent: FieldSet): void {
  const pe = path[path.length - 1]!;
  const id = serializeElement(pe);
  const leaf = isLeaf(shape) || emptyContainer(value) || (shape.kind === "list" ? !listOrAbsent(value) : !mapOrAbsent(value));
  if (!leaf) {
    const level = parent.child(pe, id);
    if (shape.kind === "list") {
      // A duplicated item is added as a whole, with nothing below it (as compareLists does).
      for (const [iid, { pe: ipe, items }] of itemsById(shape, asList(value), path)) {
        if (items.length === 1) addWhole(items[0], shape.item, [...path, ipe], level);
        else level.addMember(ipe, iid);
      }
    } else {
      const map = asMap(value);
      for (const key of Object.keys(map)) {
        const fpe = fieldElement(key);
        addWhole(map[key], elementShape(shape, fpe), [...path, fpe], level);
      }
    }
  }
  parent.addMember(pe, id);
}

const listOrAbsent = (v: Json) => v === undefined || v === null || Array.isArray(v);
const mapOrAbsent = (v: Json) => v === undefined || v === null || isObject(v);
const asList = (v: Json): Json[] => (Array.isArray(v) ? v : []);
const asMap = (v: Json): JsonObject => (isObject(v) ? v : {});
const own = (o: JsonObject, key: string): Json => (Object.hasOwn(o, key) ? o[key] : undefined);

/** A granular list's items by their element's serialized id, in order of first appearance; duplicates share one entry. */
function itemsById(shape: ListShape, items: Json[], path: PathElement[]): Map<string, { pe: PathElement; items: Json[] }> {
  const byId = new Map<string, { pe: PathElement; items: Json[] }>();
  items.forEach((item, i) => {
    const pe = itemElement(shape, item, i, path);
    const id = serializeElement(pe);
    const found = byId.get(id);
    if (found) found.items.push(item);
    else byId.set(id, { pe, items: [item] });
  });
  return byId;
}

function compareLists(shape: ListShape, lhs: Json[], rhs: Json[], path: PathElement[], c: Comparison): void {
  const left = itemsById(shape, lhs, path);
  const right = itemsById(shape, rhs, path);
  // The old side's items in their order, then the items only the new side has.
  const order = [...left, ...[...right].filter(([id]) => !left.has(id))];
  for (const [id, { pe }] of order) {
    const l = left.get(id)?.items ?? [];
    const r = right.get(id)?.items ?? [];
    const at = [...path, pe];
    if (l.length <= 1 && r.length <= 1) compareAt(l[0], r[0], shape.item, at, c);
    else if (l.length >= 2 && r.length >= 2) {
      if (!jsonEqual(l, r)) c.modified.insert(at);
    } else if (l.length >= 2) {
      if (r.length !== 0) compareAt(undefined, r[0], shape.item, at, c);
      c.removed.insert(at);
    } else {
      if (l.length !== 0) compareAt(l[0], undefined, shape.item, at, c);
      c.added.insert(at);
    }
  }
}

/**
 * Equal, with no `undefined` anywhere in either (compare counts an undefined member as added): when
 * true, compare(a, b) finds no path added, modified or removed.
 */
export function identical(a: Json, b: Json): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return a === b && a !== undefined;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!identical(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !identical((a as JsonObject)[key], (b as JsonObject)[key])) return false;
  }
  return true;
}

export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

// ---- merge --------------------------------------------------------------------------------------

/**
 * The applied configuration `rhs` merged into `lhs` (TypedValue.Merge): the configuration wins at every
 * leaf; structs and maps merge member by member; granular lists merge item by item, in an order that
 * keeps the configuration's order for its items and the live order for the rest.
 */
export function merge(lhs: Json, rhs: Json, shape: Shape): Json {
  return mergeAt(lhs, rhs, shape, []);
}

function mergeAt(lhs: Json, rhs: Json, shape: Shape, path: PathElement[]): Json {
  const leaf =
    isLeaf(shape) ||
    (emptyContainer(lhs) && emptyContainer(rhs)) ||
    (shape.kind === "list" ? !listOrAbsent(lhs) || !listOrAbsent(rhs) : !mapOrAbsent(lhs) || !mapOrAbsent(rhs));
  if (leaf) return rhs !== undefined ? rhs : lhs;
  if (shape.kind === "list") {
    const out = mergeLists(shape, asList(lhs), asList(rhs), path);
    return out.length > 0 ? out : undefined;
  }
  const l = asMap(lhs);
  const r = asMap(rhs);
  const out: JsonObject = {};
  for (const key of new Set([...Object.keys(l), ...Object.keys(r)])) {
    const pe = fieldElement(key);
    const merged = mergeAt(own(l, key), own(r, key), elementShape(shape, pe), [...path, pe]);
    if (merged !== undefined) out[key] = merged;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** mergingWalker.visitListItems, item order included. */
function mergeLists(shape: ListShape, lhs: Json[], rhs: Json[], path: PathElement[]): Json[] {
  const index = (items: Json[], allowDuplicates: boolean) => {
    const pes: PathElement[] = [];
    const observed = new Map<string, Json>();
    items.forEach((item, i) => {
      const pe = itemElement(shape, item, i, path);
      const id = serializeElement(pe);
      if (observed.has(id)) {
        if (!allowDuplicates) throw new ShapeError([...path, pe], "duplicate entries for key");
        return;
      }
      observed.set(id, item);
      pes.push(pe);
    });
    return { pes, observed };
  };
  const right = index(rhs, false);
  const left = index(lhs, true);
  const ids = (pes: PathElement[]) => pes.map(serializeElement);
  const lIds = ids(left.pes);
  const rIds = ids(right.pes);
  const shared = rIds.filter((id) => left.observed.has(id));
  let sharedAt = 0;
  let next = shared[sharedAt++];
  const merged = new Set<string>();
  const out: Json[] = [];
  const push = (pe: PathElement, l: Json, r: Json) => {
    const v = mergeAt(l, r, shape.item, [...path, pe]);
    if (v !== undefined) out.push(v);
  };
  let li = 0;
  let ri = 0;
  while (li < lIds.length || ri < rIds.length) {
    if (li < lIds.length && ri < rIds.length) {
      const id = lIds[li]!;
      if (id === rIds[ri]) {
        merged.add(id);
        push(left.pes[li]!, left.observed.get(id), right.observed.get(id));
        li++;
        ri++;
        next = shared[sharedAt++];
        continue;
      }
      if (right.observed.has(id) && next !== undefined && next !== id) {
        li++;
        continue;
      }
    }
    if (li < lIds.length) {
      const id = lIds[li]!;
      if (!right.observed.has(id)) {
        push(left.pes[li]!, left.observed.get(id), undefined);
        li++;
        continue;
      }
      if (merged.has(id)) {
        li++;
        continue;
      }
    }
    if (ri < rIds.length) {
      const id = rIds[ri]!;
      merged.add(id);
      push(right.pes[ri]!, left.observed.get(id), right.observed.get(id));
      ri++;
      if (next === id) next = shared[sharedAt++];
    }
  }
  return out;
}

// ---- removal ------------------------------------------------------------------------------------

/** The value without the fields in `set` (TypedValue.RemoveItems); undefined when nothing is left. */
export function removeItems(value: Json, set: FieldSet, shape: Shape): Json {
  if (set.empty() || isLeaf(shape)) return value;
  if (shape.kind === "list") {
    if (!Array.isArray(value) || value.length === 0) return value;
    const kept: Json[] = [];
    value.forEach((item, i) => {
      const pe = itemElement(shape, item, i, []);
      if (set.hasMember(pe)) return;
      const below = set.withPrefix(pe);
      kept.push(below.empty() ? item : removeItems(item, below, shape.item));
    });
    return kept.length > 0 ? kept : undefined;
  }
  if (!isObject(value) || Object.keys(value).length === 0) return value;
  const out: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    const pe = fieldElement(key);
    if (set.hasMember(pe)) continue;
    const below = set.withPrefix(pe);
    const kept = below.empty() ? member : removeItems(member, below, elementShape(shape, pe));
    if (kept !== undefined) out[key] = kept;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
