// Which informer events are worth a reconcile. A controller writes status; that write comes back as an
// update event, and reconciling it again would only find nothing to do (or, with a careless
// reconciler, loop). controller-runtime's predicates (pkg/predicate) are the model.
import type { KubeObject } from "@orch/client";
import { jsonEqual } from "@orch/machinery";

export type ControllerEvent<T extends KubeObject = KubeObject> =
  | { type: "add"; object: T }
  | { type: "update"; old: T; object: T }
  | { type: "delete"; object: T };

/** True: enqueue the event's keys. */
export type Predicate<T extends KubeObject = KubeObject> = (event: ControllerEvent<T>) => boolean;

const generationOf = (obj: KubeObject): number | undefined => (obj.metadata as { generation?: number } | undefined)?.generation;

/** The informer's periodic resync re-delivers the cached object as an update of itself. */
const isResync = (old: KubeObject, obj: KubeObject): boolean =>
  old === obj || (old.metadata?.resourceVersion !== undefined && old.metadata.resourceVersion === obj.metadata?.resourceVersion);

/**
 * Updates pass only when `metadata.generation` changed, i.e. the spec (or the kind's equivalent) did:
 * status writes never bump it. Also passes resyncs (a safety net must reach the reconciler), updates
 * that start a deletion (finalizers must run) and objects without a generation.
 */
export const generationChanged: Predicate = (event) => {
  if (event.type !== "update") return true;
  const { old, object } = event;
  if (isResync(old, object)) return true;
  if (!old.metadata?.deletionTimestamp && object.metadata?.deletionTimestamp) return true;
  const before = generationOf(old);
  const after = generationOf(object);
  return before === undefined || after === undefined || before !== after;
};

/** The object without what a status write changes: `status`, and the metadata the server maintains. */
function withoutStatus(obj: KubeObject): unknown {
  const { status: _status, metadata, ...rest } = obj as KubeObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (metadata ?? {}) as Record<string, unknown>;
  return { ...rest, metadata: meta };
}

/**
 * Updates pass unless only `status` (and the server-maintained resourceVersion/managedFields) changed.
 * For kinds whose generation does not track everything the controller reads (labels, annotations,
 * finalizers, or kinds without a generation at all). Resyncs pass.
 */
export const ignoreStatusOnlyChanges: Predicate = (event) => {
  if (event.type !== "update") return true;
  if (isResync(event.old, event.object)) return true;
  return !jsonEqual(withoutStatus(event.old), withoutStatus(event.object));
};

/** Passes when every predicate passes. */
export const allOf =
  <T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> =>
  (event) =>
    predicates.every((p) => p(event));

/** Passes when any predicate passes. */
export const anyOf =
  <T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> =>
  (event) =>
    predicates.some((p) => p(event));
