// CEL values with Kubernetes' semantics where the engine's own differ: lists remember their
// x-kubernetes-list-type (set and map lists compare without regard to order and concatenate as
// Kubernetes defines, k8s.io/apiserver/pkg/cel/common/values.go), objects of a schema compare field by
// field, and the fields an x-kubernetes-preserve-unknown-fields object keeps beyond its schema take
// part in equality without being selectable.
import { Optional } from "@marcbachmann/cel-js";
import { timestampNanos } from "./timestamps.js";

/** How a list value behaves in == and +: by its schema's x-kubernetes-list-type. */
export type ListKind = { readonly type: "set" } | { readonly type: "map"; readonly keys: readonly string[] };

const listKinds = new WeakMap<readonly unknown[], ListKind>();

/** Marks `list` as a set or map list (atomic lists are left unmarked). */
export function withListKind<T extends unknown[]>(list: T, kind: ListKind | undefined): T {
  if (kind) listKinds.set(list, kind);
  return list;
}

export const listKindOf = (list: readonly unknown[]): ListKind | undefined => listKinds.get(list);

/**
 * A null item of a list or map whose item schema is not nullable: reading it is Kubernetes' error
 * (kubernetes-semantics.ts), as its lazy conversion fails there.
 */
export const INVALID_NULL: unique symbol = Symbol("null for a schema with nullable=false");
export const INVALID_NULL_MESSAGE = "invalid data, got null for schema with nullable=false";

/**
 * An x-kubernetes-int-or-string value that is neither: the engine, which knows no such type, refuses it
 * when a rule reads it ("Unsupported type: InvalidIntOrString"), which compile.ts words as Kubernetes.
 */
export class InvalidIntOrString {}
export const INVALID_INT_OR_STRING_MESSAGE = "invalid data, expected XIntOrString value to be either a string or integer";

/** Base of the classes that carry objects of a schema type; unknown preserved fields ride along. */
export class RuleObject {
  [field: string]: unknown;
}

const unknownFields = new WeakMap<RuleObject, Record<string, unknown>>();

export function withUnknownFields(o: RuleObject, raw: Record<string, unknown>): RuleObject {
  if (Object.keys(raw).length > 0) unknownFields.set(o, raw);
  return o;
}

/** Whether `==` on these operands needs Kubernetes' structural equality rather than the engine's. */
export const isStructured = (v: unknown): boolean => Array.isArray(v) || v instanceof Map || v instanceof RuleObject || isPlainMap(v);

/** The engine builds map literals as plain objects; data maps are Maps. */
function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

function mapEntries(v: unknown): Map<unknown, unknown> | undefined {
  if (v instanceof Map) return v;
  return isPlainMap(v) ? new Map(Object.entries(v)) : undefined;
}

interface Comparable<T> {
  compareTo(other: T): bigint;
}
interface WithEquals<T> {
  equals(other: T): boolean;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null && !Array.isArray(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    const rb = b as Record<string, unknown>;
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(rb, k) && jsonEqual((a as Record<string, unknown>)[k], rb[k]));
  }
  return false;
}

/** A set element as a key: sets hold scalars (Kubernetes refuses non-scalar set elements). */
function setKey(v: unknown): unknown {
  if (typeof v === "object" && v !== null && !(v instanceof Date) && !(v instanceof Uint8Array)) {
    throw new Error("listSet operations are only supported on lists of scalar values");
  }
  return typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v;
}

function fieldOf(element: unknown, key: string): unknown {
  if (element instanceof Map) return element.get(key);
  if (element instanceof RuleObject) return element[key];
  return undefined;
}

function sameMapKey(a: unknown, b: unknown, keys: readonly string[]): boolean {
  return keys.every((k) => celEquals(fieldOf(a, k) ?? null, fieldOf(b, k) ?? null));
}

function listEquals(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  const kind = listKindOf(a);
  if (kind?.type === "set") {
    const keys = a.map(setKey);
    const others = b.map(setKey);
    return others.every((o) => keys.some((k) => celEquals(k, o))) && keys.every((k) => others.some((o) => celEquals(k, o)));
  }
  if (kind?.type === "map") {
    const matched = new Set<unknown>();
    for (const element of b) {
      const mine = a.find((x) => sameMapKey(x, element, kind.keys));
      if (mine === undefined || !celEquals(mine, element)) return false;
      matched.add(mine);
    }
    return matched.size === a.length;
  }
  return a.every((x, i) => celEquals(x, b[i]));
}

function objectEquals(a: RuleObject, b: RuleObject): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || !ka.every((k) => Object.hasOwn(b, k) && celEquals(a[k], b[k]))) return false;
  return jsonEqual(unknownFields.get(a) ?? {}, unknownFields.get(b) ?? {});
}

/** CEL equality as Kubernetes evaluates it (heterogeneous numbers compare by value). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === "bigint" || typeof a === "number") && (typeof b === "bigint" || typeof b === "number")) {
    // biome-ignore lint/suspicious/noDoubleEquals: int and double compare by numeric value in CEL.
    return a == b;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && listEquals(a, b);
  const ma = mapEntries(a);
  if (ma) {
    const mb = mapEntries(b);
    if (!mb || ma.size !== mb.size) return false;
    for (const [k, v] of ma) if (!mb.has(k) || !celEquals(v, mb.get(k))) return false;
    return true;
  }
  if (a instanceof RuleObject) return b instanceof RuleObject && a.constructor === b.constructor && objectEquals(a, b);
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof Date) return b instanceof Date && timestampNanos(a) === timestampNanos(b);
  if (a instanceof Optional) {
    if (!(b instanceof Optional) || a.hasValue() !== b.hasValue()) return false;
    return !a.hasValue() || celEquals(a.value(), b.value());
  }
  if (a.constructor !== b.constructor) return false;
  if (typeof (a as Partial<Comparable<unknown>>).compareTo === "function") return (a as Comparable<unknown>).compareTo(b) === 0n;
  if (typeof (a as Partial<WithEquals<unknown>>).equals === "function") return (a as WithEquals<unknown>).equals(b);
  // The engine's duration: seconds and nanoseconds.
  const da = a as { seconds?: unknown; nanos?: unknown };
  const db = b as { seconds?: unknown; nanos?: unknown };
  if (da.seconds !== undefined) return da.seconds === db.seconds && da.nanos === db.nanos;
  return false;
}

/**
 * `a + b` for lists: a set list keeps its elements and appends those of `b` it lacks; a map list
 * replaces elements with the same keys in place and appends the rest. The result keeps `a`'s kind.
 */
export function concatLists(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const kind = listKindOf(a);
  if (!kind) return [...a, ...b];
  const out = [...a];
  if (kind.type === "set") {
    const keys = out.map(setKey);
    for (const element of b) {
      const key = setKey(element);
      if (!keys.some((k) => celEquals(k, key))) {
        keys.push(key);
        out.push(element);
      }
    }
  } else {
    for (const element of b) {
      const at = out.findIndex((x) => sameMapKey(x, element, kind.keys));
      if (at >= 0) out[at] = element;
      else out.push(element);
    }
  }
  return withListKind(out, kind);
}
