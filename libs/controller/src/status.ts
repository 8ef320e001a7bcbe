// Controllers write only a subresource (`/status`, or `/approval` for certificate requests), so a
// status write can never undo a user's spec change. The write is optimistic: it carries the
// resourceVersion of the object the controller read, and on Conflict (someone wrote in between) the
// object is read again and the same mutation re-applied — client-go's RetryOnConflict.
import { type ApiClient, type KubeObject, type ResourceRef, isConflict, isNotFound } from "@orch/client";
import { cloneJson, jsonEqual } from "@orch/machinery";

export interface WriteStatusOptions {
  /** `status` (default) or `approval`. */
  subresource?: string;
  /** Writes tried before the last Conflict is thrown; default 5. */
  attempts?: number;
}

/** The part of ApiClient a status write uses. */
export type StatusClient = Pick<ApiClient, "get" | "updateSubresource">;

/**
 * Applies `mutate` to a copy of `obj` (typically from the informer cache, which must not be changed in
 * place) and writes the result through the subresource. Nothing is written when the mutation changes
 * nothing, so a reconciler that already converged causes no event. Returns the object as stored.
 */
export async function writeStatus<T extends KubeObject>(
  client: StatusClient,
  ref: ResourceRef,
  obj: T,
  mutate: (obj: T) => T | void | Promise<T | void>,
  options: WriteStatusOptions = {},
): Promise<T> {
  const subresource = options.subresource ?? "status";
  const attempts = Math.max(1, options.attempts ?? 5);
  const name = obj.metadata?.name;
  if (!name) throw new TypeError("writeStatus: the object has no metadata.name");
  const namespace = obj.metadata?.namespace;
  // The first try uses the caller's copy (no extra read); only a conflict costs a GET.
  let current = obj;
  for (let attempt = 1; ; attempt++) {
    const copy = cloneJson(current);
    const desired = (await mutate(copy)) ?? copy;
    if (jsonEqual(desired, current)) return current;
    try {
      return await client.updateSubresource<T>(ref, desired, subresource, { namespace });
    } catch (e) {
      if (!isConflict(e) || attempt >= attempts) throw e;
      // Jittered: two writers that collided should not collide again in lock step.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));
      current = await client.get<T>(ref, name, { namespace });
    }
  }
}

/**
 * The object as the API has it now, or undefined when it is gone. For decisions a cached copy must not
 * drive on its own (issuing or approving a certificate): the cache holds what the event bus said, the
 * API what authentication, RBAC and validation let through.
 */
export async function readFromApi<T extends KubeObject>(client: Pick<ApiClient, "get">, ref: ResourceRef, obj: T): Promise<T | undefined> {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError("readFromApi: the object has no metadata.name");
  try {
    return await client.get<T>(ref, name, { namespace: obj.metadata?.namespace });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
