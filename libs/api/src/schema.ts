// Building blocks for kind schemas. Each schema is a valibot schema: types are inferred from it, it
// decodes a request body (defaults, pruning), and its metadata carries the list semantics that
// strategic merge and server-side apply need. Wire-level type errors are decode errors (400), as a
// Go struct decode would report them; semantic rules live in each kind's strategy (422).
import { QuantityError, canonicalQuantity } from "@orch/machinery";
import * as v from "valibot";

export type AnySchema = v.GenericSchema;

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

export const int32 = () => int(-2147483648, 2147483647);
export const int64 = () => int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
export const float = () => v.number();
export const str = () => v.string();
export const bool = () => v.boolean();

/** RFC 3339 timestamp with second precision, e.g. `2026-01-02T03:04:05Z`. */
export const time = () => v.string();
/** RFC 3339 timestamp with microseconds (MicroTime). */
export const microTime = () => v.string();
/**
 * A resource quantity such as `500m` or `1Gi`. As Go's Quantity.UnmarshalJSON, a malformed one is a
 * decode error (400, "quantities must match the regular expression ..."), and a good one is kept in
 * Kubernetes' canonical form (`0.5` → `500m`, `1.5Gi` → `1536Mi`).
 */
export const quantity = () =>
  v.pipe(
    v.union([v.string(), v.number()]),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        return canonicalQuantity(dataset.value);
      } catch (e) {
        addIssue({ message: e instanceof QuantityError ? e.message : String(e) });
        return NEVER;
      }
    }),
  );
/** Integer or string (e.g. `25%`), serialized as whichever it holds. */
export const intOrString = () => v.union([int32(), v.string()]);
/** base64-encoded bytes in JSON. */
export const bytes = () => v.string();
/** Arbitrary JSON kept as-is (RawExtension, JSON). */
export const rawJson = () => v.unknown();
/** An object whose unknown fields are kept (x-preserve-unknown-fields). */
export const preserved = <E extends v.ObjectEntries>(entries: E) => v.looseObject(entries);

export const stringMap = () => v.record(v.string(), v.string());
export const mapOf = <S extends AnySchema>(value: S) => v.record(v.string(), value);

export type ListType = "atomic" | "set" | "map";
// A type alias (not an interface) so it fits valibot's metadata record.
export type ListSemantics = {
  listType: ListType;
  listMapKeys?: readonly string[];
  /** The strategic-merge-patch strategy Kubernetes declares for this field, when it differs from listType. */
  patchStrategy?: "merge" | "replace" | "retainKeys" | "merge,retainKeys";
  patchMergeKey?: string;
};

/** A list replaced as a whole on merge. */
export const atomicList = <S extends AnySchema>(item: S) =>
  v.pipe(v.array(item), v.metadata({ listType: "atomic" } satisfies ListSemantics));

/** A list of scalars without duplicates, merged as a set. */
export const setList = <S extends AnySchema>(item: S) =>
  v.pipe(v.array(item), v.metadata({ listType: "set", patchStrategy: "merge" } satisfies ListSemantics));

/** A list of objects merged by the value of `keys` (the first key is the strategic-merge key). */
export const mapList = <S extends AnySchema>(item: S, keys: readonly [string, ...string[]]) =>
  v.pipe(
    v.array(item),
    v.metadata({
      listType: "map",
      listMapKeys: keys,
      patchStrategy: "merge",
      patchMergeKey: keys[0],
    } satisfies ListSemantics),
  );

/** Reads the list semantics attached to a schema, if any. */
export function listSemantics(schema: AnySchema): ListSemantics | undefined {
  const pipe = (schema as { pipe?: readonly { kind: string; type: string; metadata?: unknown }[] }).pipe;
  const meta = pipe?.find((a) => a.kind === "metadata" && a.type === "metadata");
  return meta?.metadata as ListSemantics | undefined;
}

export const opt = v.optional;
