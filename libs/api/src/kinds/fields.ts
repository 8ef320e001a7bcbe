// Field helpers shared by the kind modules: list semantics that the list helpers in schema.ts do not
// cover, metav1.Time values as Go serializes them, and status conditions.
import * as v from "valibot";
import { Condition } from "../meta.js";
import { opt, time, type AnySchema, type ListSemantics } from "../schema.js";

const list = <S extends AnySchema>(item: S, semantics: ListSemantics) => v.pipe(v.array(item), v.metadata(semantics));

/** `+listType=map` with `patchStrategy=merge,retainKeys` (pod volumes, resource claims). */
export const mapListRetainKeys = <S extends AnySchema>(item: S, keys: readonly [string, ...string[]]) =>
  list(item, { listType: "map", listMapKeys: keys, patchStrategy: "merge,retainKeys", patchMergeKey: keys[0] });

/**
 * `+listType=map` without a `patchStrategy` tag: server-side apply merges it by key, but a strategic
 * merge patch replaces it whole, as Kubernetes does.
 */
export const mapListReplacedOnPatch = <S extends AnySchema>(item: S, keys: readonly [string, ...string[]]) =>
  list(item, { listType: "map", listMapKeys: keys, patchStrategy: "replace" });

/** `+listType=set` without a `patchStrategy` tag: a set for apply, replaced whole by a strategic merge patch. */
export const setListReplacedOnPatch = <S extends AnySchema>(item: S) => list(item, { listType: "set", patchStrategy: "replace" });

/** `+listType=atomic` that still declares `patchStrategy=merge` with a merge key (pod `status.hostIPs`). */
export const atomicListMergedOnPatch = <S extends AnySchema>(item: S, mergeKey: string) =>
  list(item, { listType: "atomic", patchStrategy: "merge", patchMergeKey: mergeKey });

/**
 * A non-pointer `metav1.Time`: Go marshals its zero value as `null` even with `omitempty`, so clients
 * written in Go send `"lastProbeTime": null`. It is kept as sent.
 */
export const nullableTime = () => opt(v.nullable(time()));

/** All condition fields Kubernetes uses, with Go's nullable timestamps; each kind picks its own. */
export const ConditionFields = v.object({
  ...Condition.entries,
  lastTransitionTime: nullableTime(),
  lastUpdateTime: nullableTime(),
  lastHeartbeatTime: nullableTime(),
  lastProbeTime: nullableTime(),
});
