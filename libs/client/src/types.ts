import type { ObjectMeta } from "@orch/api";
// The few shapes every caller shares: how a resource is addressed, and the part of an object the
// client and the informer read (metadata). Kinds' full types come from @orch/api or the caller.

/** Addresses a resource. `group` is "" for the core group (`/api/v1`). */
export interface ResourceRef {
  group: string;
  version: string;
  /** The resource's plural name as in the URL, e.g. `deployments`. */
  plural: string;
  namespaced: boolean;
}

/** The metadata fields the client and the informer use; objects may carry more. */
/** Object metadata: the same type the apiserver's schemas infer (never written twice). */
export type { ObjectMeta } from "@orch/api";

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** The informer's cache key: `namespace/name`, or `name` for cluster-scoped objects (as client-go). */
export function keyOf(obj: KubeObject): string {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? "";
  return namespace ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  return slash < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** An object's resourceVersion as the global revision it was written at (0 when absent). */
export function revisionOf(obj: KubeObject | undefined): number {
  const rv = obj?.metadata?.resourceVersion;
  const n = rv ? Number(rv) : 0;
  return Number.isSafeInteger(n) ? n : 0;
}
