// Controller references (metav1.NewControllerRef, GetControllerOf) and claiming: a controller owns the
// objects its selector matches — it adopts matching orphans and releases owned objects that stopped
// matching (pkg/controller/controller_ref_manager.go). Adoption and release are optimistic writes:
// a stale cache costs a Conflict and a retry, never a wrong owner.
import type { ObjectMeta } from "@orch/api";
import { type ApiClient, type KubeObject, type ResourceRef, isNotFound } from "@orch/client";

export type OwnerRef = NonNullable<ObjectMeta["ownerReferences"]>[number];

/** An object as the controllers see it: metadata is always there (the server fills it). */
export type Owned = KubeObject & { metadata: NonNullable<KubeObject["metadata"]> };

export function controllerRefOf(obj: Owned): OwnerRef | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

export function newControllerRef(owner: Owned, apiVersion: string, kind: string): OwnerRef {
  return { apiVersion, kind, name: owner.metadata.name ?? "", uid: owner.metadata.uid ?? "", controller: true, blockOwnerDeletion: true };
}

export interface ClaimOptions<T extends Owned> {
  client: Pick<ApiClient, "get" | "update">;
  /** The resource of the claimed objects. */
  ref: ResourceRef;
  owner: Owned;
  /** The owner's own resource, to check before adopting that it still exists and is not being deleted. */
  ownerResource: ResourceRef;
  /** The controller reference adoption sets. */
  controllerRef: OwnerRef;
  matches(obj: T): boolean;
}

/**
 * The objects `owner` controls among `objects` after adopting and releasing (ClaimObject). Throws the
 * first failed adoption or release after trying all (the reconcile is then retried).
 */
export async function claim<T extends Owned>(objects: readonly T[], options: ClaimOptions<T>): Promise<T[]> {
  const { owner } = options;
  const ownerUid = owner.metadata.uid;
  const ownerDeleting = Boolean(owner.metadata.deletionTimestamp);
  const claimed: T[] = [];
  const failures: unknown[] = [];
  let adoptable: Promise<void> | undefined;
  for (const obj of objects) {
    const ref = controllerRefOf(obj);
    try {
      if (ref) {
        if (ref.uid !== ownerUid) continue;
        if (options.matches(obj)) claimed.push(obj);
        else if (!ownerDeleting) await release(obj, ownerUid, options);
        continue;
      }
      if (ownerDeleting || !options.matches(obj) || obj.metadata.deletionTimestamp) continue;
      // Once per claim: the cached owner may already be gone or being deleted (RecheckDeletionTimestamp).
      adoptable ??= recheckOwner(options);
      await adoptable;
      claimed.push(await adopt(obj, options));
    } catch (e) {
      if (!isNotFound(e)) failures.push(e);
    }
  }
  if (failures.length > 0) throw failures[0];
  return claimed;
}

async function recheckOwner<T extends Owned>(options: ClaimOptions<T>): Promise<void> {
  const { owner } = options;
  const fresh = await options.client.get<Owned>(options.ownerResource, owner.metadata.name ?? "", { namespace: owner.metadata.namespace });
  if (fresh.metadata.uid !== owner.metadata.uid) {
    throw new Error(
      `original ${owner.metadata.namespace}/${owner.metadata.name} is gone: got uid ${fresh.metadata.uid}, wanted ${owner.metadata.uid}`,
    );
  }
  if (fresh.metadata.deletionTimestamp) {
    throw new Error(`${owner.metadata.namespace}/${owner.metadata.name} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  }
}

function adopt<T extends Owned>(obj: T, options: ClaimOptions<T>): Promise<T> {
  const copy = structuredClone(obj);
  copy.metadata.ownerReferences = [...(copy.metadata.ownerReferences ?? []), options.controllerRef];
  return options.client.update<T>(options.ref, copy);
}

async function release<T extends Owned>(obj: T, ownerUid: string | undefined, options: ClaimOptions<T>): Promise<void> {
  const copy = structuredClone(obj);
  const rest = (copy.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
  if (rest.length > 0) copy.metadata.ownerReferences = rest;
  else delete copy.metadata.ownerReferences;
  await options.client.update<T>(options.ref, copy);
}
