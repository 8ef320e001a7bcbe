// Strategic merge patch (`application/strategic-merge-patch+json`): the server half of Kubernetes'
// k8s.io/apimachinery/pkg/util/strategicpatch (StrategicMergeMapPatch, i.e. mergeMap with parallel
// lists merged and unmatched nulls ignored), driven by a kind's merge `Shape` instead of Go struct tags.
//
// Like JSON merge patch, maps merge and `null` deletes; in addition a list whose strategy is `merge`
// merges item by item (by its merge key for objects, as a set for scalars), and these directives apply:
// `$patch: replace|delete` on a map, `$patch: delete|replace` on a list item, `$retainKeys`,
// `$deleteFromPrimitiveList/<list>` and `$setElementOrder/<list>`. Errors are the Status the Kubernetes
// apiserver answers (handlers/patch.go `interpretStrategicMergePatchError`): its named format errors are
// 400, lists of lists a bare 422, and every other failure a 500 without a reason carrying Go's text.
import { type StatusError, failure } from "../errors.js";
import { DecodeError, decodeJson } from "../serializer/json.js";
import { cloneJson } from "../values/clone.js";
import { goSliceStable } from "../values/go-sort.js";
import { type Shape, listPatchStrategy, memberShape } from "./shape.js";

type JsonMap = Record<string, unknown>;

const directiveMarker = "$patch";
const retainKeysDirective = "$retainKeys";
const deleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList";
const setElementOrderPrefix = "$setElementOrder";

const badRequest = (message: string) => failure(400, "BadRequest", message);
const badPrimitiveList = () => badRequest("invalid patch format of primitive list");
const badRetainKeys = () => badRequest("invalid patch format of retainKeys");
const badSetElementOrder = () => badRequest("invalid patch format of setElementOrder list");
/** mergepatch.ErrNoListOfLists: NewGenericServerResponse(422) keeps only its generic text. */
const listOfLists = () => failure(422, "Invalid", "the server rejected our request due to an error in our request", {});
/** Any other error of the patch library is no API status: the apiserver answers 500 with its text. */
const unexpected = (message: string): StatusError => failure(500, "", message);

const isMap = (v: unknown): v is JsonMap => typeof v === "object" && v !== null && !Array.isArray(v);
const has = (m: JsonMap, key: string) => Object.hasOwn(m, key);

/**
 * Applies a strategic merge patch to `original` (not modified) for objects of `shape`; throws a
 * StatusError as Kubernetes would answer. A `null` patch changes nothing, as in Go.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, shape: Shape): unknown {
  if (patch === null) return original;
  if (!isMap(patch)) {
    throw badRequest(`json: cannot unmarshal ${jsonKind(patch)} into Go value of type map[string]interface {}`);
  }
  // The algorithm edits both documents in place, as the Go one does; it works on copies.
  return mergeMap(isMap(original) ? cloneJson(original) : {}, cloneJson(patch), shape);
}

/** Parses a strategic merge patch body; malformed or too deep JSON is a 400 with encoding/json's message. */
export function parseStrategicMergePatch(text: string): unknown {
  try {
    return decodeJson(text);
  } catch (e) {
    if (e instanceof DecodeError) throw badRequest(e.message);
    throw e;
  }
}

function mergeMap(original: JsonMap, patch: JsonMap, shape: Shape): JsonMap {
  if (has(patch, directiveMarker)) return mapDirective(patch[directiveMarker], patch);
  applyRetainKeys(original, patch);
  mergeOrderedLists(original, patch, shape);
  for (const [patchKey, patchValue] of Object.entries(patch)) {
    const deleteList = patchKey.startsWith(deleteFromPrimitiveListPrefix);
    const key = deleteList ? extractKey(patchKey, deleteFromPrimitiveListPrefix) : patchKey;
    if (patchValue === null) {
      delete original[key];
      continue;
    }
    if (!has(original, key) || goType(original[key]) !== goType(patchValue)) {
      // A deletion list for a list the object does not have (or not as a list) has nothing to do.
      if (!deleteList) setPatchValue(original, key, patchValue);
      continue;
    }
    const current = original[key];
    const field = memberShape(shape, key);
    if (isMap(current)) original[key] = mergeMap(current, patchValue as JsonMap, field);
    else if (Array.isArray(current)) original[key] = mergeListField(current, patchValue as unknown[], field, deleteList);
    else original[key] = patchValue;
  }
  return original;
}

/** A value the object does not have yet (or of another type) is taken from the patch, cleaned. */
function setPatchValue(original: JsonMap, key: string, value: unknown) {
  discardNulls(value);
  const [cleaned, keep] = removeDirectives(value);
  if (keep) original[key] = cleaned;
  else delete original[key];
}

/** `$patch` on a map: `replace` takes the patch as the whole value, `delete` empties it. */
function mapDirective(directive: unknown, patch: JsonMap): JsonMap {
  if (directive === "replace") {
    delete patch[directiveMarker];
    return patch;
  }
  if (directive === "delete") return {};
  throw unexpected(`unknown patch type: ${goString(directive)} in map: ${goValue(patch)}`);
}

/** `$retainKeys`: the object keeps only the listed fields, and the patch may set no others. */
function applyRetainKeys(original: JsonMap, patch: JsonMap) {
  if (!has(patch, retainKeysDirective)) return;
  const listed = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(listed)) throw badRetainKeys();
  const retained = new Set(listed);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || key.startsWith(deleteFromPrimitiveListPrefix) || key.startsWith(setElementOrderPrefix)) continue;
    if (!retained.has(key)) throw badRetainKeys();
  }
  for (const key of Object.keys(original)) if (!retained.has(key)) delete original[key];
}

/**
 * `$setElementOrder/<list>`: merges the list it names (when the patch has it) and orders the result —
 * the directive's order first, then the patch's, then the live object's (mergePatchIntoOriginal).
 */
function mergeOrderedLists(original: JsonMap, patch: JsonMap, shape: Shape) {
  for (const directive of Object.keys(patch)) {
    if (!directive.startsWith(setElementOrderPrefix)) continue;
    const order = patch[directive];
    delete patch[directive];
    if (!Array.isArray(order)) throw unexpected(badArgType("[]interface {}", order));
    const key = extractKey(directive, setElementOrderPrefix);
    const foundOriginal = has(original, key);
    const foundPatch = has(patch, key);
    const originalList = original[key];
    const patchList = patch[key];
    if (foundOriginal && !Array.isArray(originalList)) throw unexpected(badArgType("[]interface {}", originalList));
    if (foundPatch && !Array.isArray(patchList)) throw unexpected(badArgType("[]interface {}", patchList));
    const field = memberShape(shape, key);
    if (field.kind !== "list" && field.kind !== "untyped") {
      throw unexpected(`expected slice or array type, but got: ${goKindName(shape)}`);
    }
    const { mergeKey = "" } = field.kind === "list" ? listPatchStrategy(field) : {};
    const originalItems = (originalList as unknown[] | undefined) ?? [];
    const patchItems = (patchList as unknown[] | undefined) ?? [];
    validateAgainstOrder(patchItems, order, mergeKey);

    let merged: unknown[];
    if (foundOriginal && foundPatch) merged = mergeListField(originalItems, patchItems, field, false);
    else if (foundOriginal) merged = originalItems;
    else if (foundPatch) merged = removeDirectives(patchItems)[0] as unknown[];
    else continue;

    const [inOrder, serverOnly] = mergeKey ? partitionMaps(merged, order, mergeKey) : partitionScalars(merged, order);
    const kind = elementKind(originalItems, patchItems);
    original[key] = normalizeElementOrder(inOrder, serverOnly, order, originalItems, mergeKey, kind);
    delete patch[key];
  }
}

/** The patch list's items (deletions aside) must appear in the `$setElementOrder` list, in its order. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string) {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? splitDeletions(patchList)[0] : patchList;
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    if (isMap(items[p]) && has(items[p] as JsonMap, directiveMarker)) {
      p++;
      continue;
    }
    if (mergeKeyEqual(items[p], order[o], mergeKey)) p++;
    o++;
  }
  if (p < items.length && o >= order.length) {
    throw unexpected(`the order in patch list:\n${goValue(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goValue(order)}`);
  }
}

function mergeKeyEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return same(left, right);
  if (!isMap(left)) throw unexpected(badArgType("map[string]interface {}", left));
  if (!isMap(right)) throw unexpected(badArgType("map[string]interface {}", right));
  if (!has(left, mergeKey)) throw unexpected(noMergeKey(left, mergeKey));
  if (!has(right, mergeKey)) throw unexpected(noMergeKey(right, mergeKey));
  return same(left[mergeKey], right[mergeKey]);
}

/** A list field: merged when its strategy is `merge` (or for a deletion list), otherwise replaced. */
function mergeListField(original: unknown[], patch: unknown[], field: Shape, deleteList: boolean): unknown[] {
  const strategy: { merge: boolean; mergeKey?: string } = field.kind === "list" ? listPatchStrategy(field) : { merge: false };
  if (!strategy.merge && !deleteList) return patch;
  const item = field.kind === "list" ? field.item : field;
  return mergeList(original, patch, item, strategy.mergeKey ?? "", deleteList);
}

function mergeList(original: unknown[], patch: unknown[], item: Shape, mergeKey: string, deleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  let live = original;
  let patchItems = patch;
  let merged: unknown[];
  if (kind !== "map") {
    if (deleteList) {
      const doomed = new Set(patch);
      return original.filter((v) => !doomed.has(v));
    }
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (!mergeKey) throw unexpected(`cannot merge lists without merge key for ${goKindName(item)}`);
    [live, patchItems] = applyItemDirectives(original, patch, mergeKey);
    merged = mergeItems(live, patchItems, mergeKey, item);
  }
  const [fromPatch, serverOnly] = mergeKey ? partitionMaps(merged, patchItems, mergeKey) : partitionScalars(merged, patchItems);
  return normalizeElementOrder(fromPatch, serverOnly, patchItems, live, mergeKey, kind);
}

/**
 * Items carrying `$patch`: `delete` removes the live items with that key, `replace` makes the rest of the
 * patch list the whole list. Returns the live list and the patch list without these items.
 */
function applyItemDirectives(original: unknown[], patch: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const doomed = new Set<unknown>();
  const plain: unknown[] = [];
  let replace = false;
  for (const v of patch) {
    const item = v as JsonMap;
    if (!has(item, directiveMarker)) {
      plain.push(v);
      continue;
    }
    const directive = item[directiveMarker];
    if (directive === "delete") {
      if (!has(item, mergeKey)) throw unexpected(noMergeKey(item, mergeKey));
      doomed.add(keyOf(item, mergeKey));
    } else if (directive === "replace") {
      replace = true;
    } else if (directive === "merge") {
      throw unexpected("merging lists cannot yet be specified in the patch");
    } else {
      throw unexpected(`unknown patch type: ${goString(directive)} in map: ${goValue(item)}`);
    }
  }
  if (replace) return [plain, []];
  return [doomed.size === 0 ? original : deleteMatching(original, mergeKey, doomed), plain];
}

function deleteMatching(list: unknown[], mergeKey: string, doomed: Set<unknown>): unknown[] {
  return list.filter((v, i) => {
    if (!isMap(v)) throw unexpected(`value for key ${i} is not a map`);
    return !(has(v, mergeKey) && doomed.has(keyOf(v, mergeKey)));
  });
}

/** Patch items merge into the live item with the same key, or are appended. */
function mergeItems(live: unknown[], patch: unknown[], mergeKey: string, item: Shape): unknown[] {
  const result = [...live];
  const positions = keyPositions(result, mergeKey);
  for (const v of patch) {
    const patchItem = v as JsonMap;
    if (!has(patchItem, mergeKey)) throw unexpected(noMergeKey(patchItem, mergeKey));
    const key = keyOf(patchItem, mergeKey);
    const at = positions.get(key);
    if (at !== undefined) result[at] = mergeMap(result[at] as JsonMap, patchItem, item);
    else positions.set(key, result.push(v) - 1);
  }
  return result;
}

/**
 * Where each merge key value first occurs in a list of maps: Go looks items up by scanning the list, which
 * makes merging two long lists quadratic. Values compare as Go's `==` on decoded scalars (`same`).
 */
function keyPositions(list: unknown[], mergeKey: string): Map<unknown, number> {
  const positions = new Map<unknown, number>();
  list.forEach((v, i) => {
    if (!isMap(v)) throw unexpected(`value for key ${i} is not a map`);
    if (!has(v, mergeKey)) return;
    const key = keyOf(v, mergeKey);
    if (!positions.has(key)) positions.set(key, i);
  });
  return positions;
}

const keyOf = (item: JsonMap, mergeKey: string) => item[mergeKey] ?? null;

function partitionScalars(list: unknown[], by: unknown[]): [unknown[], unknown[]] {
  const present = new Set(by);
  return [list.filter((v) => present.has(v)), list.filter((v) => !present.has(v))];
}

function partitionMaps(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  const wanted = keyPositions(by, mergeKey);
  for (const v of list) {
    if (!isMap(v)) throw unexpected(badArgType("map[string]interface {}", v));
    if (!has(v, mergeKey)) throw unexpected(noMergeKey(v, mergeKey));
    (wanted.has(keyOf(v, mergeKey)) ? inBy : rest).push(v);
  }
  return [inBy, rest];
}

type ElementKind = "map" | "scalar";

/** All elements of the lists must have one type (sliceElementType); lists of lists are refused. */
function elementKind(...lists: unknown[][]): ElementKind {
  let first: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const type = goType(v);
      if (first === undefined) {
        first = type;
        if (type === "slice") throw listOfLists();
      } else if (type !== first) {
        throw unexpected(`list element types are not identical: ${goValue(lists)}`);
      }
    }
  }
  if (first === undefined) throw unexpected("no elements in any of the given slices");
  return first === "map" ? "map" : "scalar";
}

/**
 * Orders a merged list: the patch's items in `patchOrder`, the live-only items in `serverOrder`, then
 * the live-only items slotted in before the first patch item that follows them in the live list.
 */
function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: ElementKind,
): unknown[] {
  const patched = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const kept = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const position = indexer(serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length && j < patched.length) {
    const li = position(kept[i]);
    const ri = position(patched[j]);
    if (li >= 0 && ri >= 0 && li < ri) out.push(kept[i++]);
    else out.push(patched[j++]);
  }
  return [...out, ...kept.slice(i), ...patched.slice(j)];
}

/** normalizeSliceOrder: a stable sort by position in `order`; `$patch: delete` items go last. */
function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  let toSort = items;
  let deletions: unknown[] = [];
  if (kind === "map") {
    for (const list of [items, order]) {
      for (const v of list) {
        if (!isMap(v)) throw unexpected(badArgType("map[string]interface {}", v));
        if (!has(v, mergeKey)) throw unexpected(noMergeKey(v, mergeKey));
      }
    }
    [toSort, deletions] = splitDeletions(items);
  }
  const position = indexer(order, mergeKey, kind);
  const ranked = toSort.map((v) => ({ v, at: position(v) }));
  if (ranked.every((r) => r.at >= 0)) {
    ranked.sort((a, b) => a.at - b.at);
  } else {
    // Go's comparator calls an item it cannot place "less", which is no ordering: the result is whatever
    // Go's own stable sort makes of it, so that sort is what runs.
    goSliceStable(ranked, (a, b) => !(a.at >= 0 && b.at >= 0) || a.at < b.at);
  }
  return [...ranked.map((r) => r.v), ...deletions];
}

/** The position of an item in `list`: by merge key value for objects, by value for scalars. */
function indexer(list: unknown[], mergeKey: string, kind: ElementKind): (item: unknown) => number {
  const identity = (v: unknown) => (kind === "map" ? (isMap(v) ? (v[mergeKey] ?? null) : null) : v);
  const positions = new Map<unknown, number>();
  list.forEach((v, i) => {
    const id = identity(v);
    if (!positions.has(id)) positions.set(id, i);
  });
  return (item) => positions.get(identity(item)) ?? -1;
}

function splitDeletions(list: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const deletions: unknown[] = [];
  for (const v of list) {
    if (!isMap(v)) throw unexpected(badArgType("map[string]interface {}", v));
    (v[directiveMarker] === "delete" ? deletions : keep).push(v);
  }
  return [keep, deletions];
}

/**
 * Each value once. Go's quadratic in-place version leaves another order, but the merged list is then
 * sorted by position in the patch and live lists, which holds every value: the order here never shows.
 */
function deduplicateScalars(s: unknown[]): unknown[] {
  return [...new Set(s.map((v) => v ?? null))];
}

/** `<prefix>/<field>` → `<field>`; anything else is a malformed directive (400). */
function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf("/");
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw prefix === deleteFromPrimitiveListPrefix ? badPrimitiveList() : badSetElementOrder();
  }
  return key.slice(slash + 1);
}

/** Drops maps carrying `$patch` (and their keys or list slots) from a value the object did not have. */
function removeDirectives(value: unknown): [unknown, boolean] {
  if (isMap(value)) {
    if (has(value, directiveMarker)) return [null, false];
    for (const [k, v] of Object.entries(value)) {
      const [cleaned, keep] = removeDirectives(v);
      if (keep) value[k] = cleaned;
      else delete value[k];
    }
    return [value, true];
  }
  if (Array.isArray(value)) {
    return [
      value.flatMap((v) => {
        const [cleaned, keep] = removeDirectives(v);
        return keep ? [cleaned] : [];
      }),
      true,
    ];
  }
  return [value, true];
}

function discardNulls(value: unknown) {
  if (isMap(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v === null) delete value[k];
      else discardNulls(v);
    }
  } else if (Array.isArray(value)) {
    for (const v of value) discardNulls(v);
  }
}

/** Go's `==` on decoded JSON scalars (a missing map entry reads as nil). */
const same = (a: unknown, b: unknown) => (a ?? null) === (b ?? null);

// Go's view of decoded JSON, for type comparisons and error texts: integers decode as int64 (the
// apiserver preserves them), other numbers as float64.
function goType(v: unknown): "nil" | "map" | "slice" | "string" | "bool" | "int64" | "float64" {
  if (v === null || v === undefined) return "nil";
  if (Array.isArray(v)) return "slice";
  if (typeof v === "object") return "map";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  return Number.isInteger(v) ? "int64" : "float64";
}

const goTypeNames = { map: "map[string]interface {}", slice: "[]interface {}", nil: "%!s(<nil>)" } as const;
const reflectType = (v: unknown) => {
  const t = goType(v);
  return t === "map" || t === "slice" || t === "nil" ? goTypeNames[t] : t;
};

const badArgType = (expected: string, actual: unknown) => `expected a ${expected}, but received a ${reflectType(actual)}`;
const noMergeKey = (m: JsonMap, key: string) => `map: ${goValue(m)} does not contain declared merge key: ${key}`;

/** The Go kind of a shape's values, as `reflect.Kind.String()` names it. */
function goKindName(shape: Shape): string {
  switch (shape.kind) {
    case "object":
      return "struct";
    case "map":
      return "map";
    case "list":
      return "slice";
    case "untyped":
      return "interface";
    default:
      return "string";
  }
}

/** fmt's `%v`: maps with sorted keys as `map[k:v]`, slices as `[a b]`, nil as `<nil>`. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (Array.isArray(v)) return `[${v.map(goValue).join(" ")}]`;
  if (typeof v === "object") {
    const m = v as JsonMap;
    return `map[${Object.keys(m)
      .sort()
      .map((k) => `${k}:${goValue(m[k])}`)
      .join(" ")}]`;
  }
  if (typeof v === "number" && !Number.isInteger(v)) return goFloat(v);
  return String(v);
}

/** `%v` of a float64: shortest digits, exponent form outside [1e-4, 1e6). */
function goFloat(f: number): string {
  const [mantissa, exponent] = f.toExponential().split("e") as [string, string];
  const exp = Number(exponent);
  if (exp >= -4 && exp < 6) return String(f);
  return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

/** fmt's `%s` of any value: strings as is, anything else flagged as Go prints it. */
function goString(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "%!s(<nil>)";
  return `%!s(${reflectType(v)}=${goValue(v)})`;
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (typeof v === "boolean") return "bool";
  return typeof v;
}
