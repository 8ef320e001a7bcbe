// A replica controller counts pods in its informer cache, which lags its own writes: right after
// creating two pods the cache may still show none, and counting again then would create two more.
// Kubernetes' ControllerExpectations count the creations and deletions still to be seen; here the
// writes themselves say when they are seen — a created pod at revision R is in the cache once the cache
// reflects revision R; a deleted pod, once the cache no longer holds it (or holds it as deleting).
import type { Pod } from "@orch/api";
import { keyOf } from "@orch/client";

/** The part of the pod informer expectations read. */
export interface PodCacheView {
  readonly revision: number;
  getByKey(key: string): Pod | undefined;
}

interface Pending {
  /** The cache must reflect at least this revision (the latest of our creations). */
  revision: number;
  /** Pod key → uid of pods we deleted. */
  deleted: Map<string, string | undefined>;
  /** A write whose event never comes (the pod was created and removed between two lists) must not block forever. */
  expiresAt: number;
}

/** Kubernetes' ExpectationsTimeout. */
const EXPECTATIONS_TTL_MS = 5 * 60_000;

export class PodExpectations {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly cache: PodCacheView,
    private readonly now: () => number = Date.now,
  ) {}

  private entry(controllerKey: string): Pending {
    let entry = this.pending.get(controllerKey);
    if (!entry) this.pending.set(controllerKey, (entry = { revision: 0, deleted: new Map(), expiresAt: 0 }));
    entry.expiresAt = this.now() + EXPECTATIONS_TTL_MS;
    return entry;
  }

  created(controllerKey: string, pod: Pod): void {
    const entry = this.entry(controllerKey);
    entry.revision = Math.max(entry.revision, Number(pod.metadata.resourceVersion ?? 0) || 0);
  }

  deleted(controllerKey: string, pod: Pod): void {
    this.entry(controllerKey).deleted.set(keyOf(pod), pod.metadata.uid);
  }

  /** True when the cache shows every write made for the controller (or they are too old to wait for). */
  satisfied(controllerKey: string): boolean {
    const entry = this.pending.get(controllerKey);
    if (!entry) return true;
    const seen =
      this.cache.revision >= entry.revision &&
      [...entry.deleted].every(([key, uid]) => {
        const cached = this.cache.getByKey(key);
        return !cached || cached.metadata.uid !== uid || Boolean(cached.metadata.deletionTimestamp);
      });
    if (seen || this.now() > entry.expiresAt) this.pending.delete(controllerKey);
    return seen || !this.pending.has(controllerKey);
  }

  /** The controller is gone: nothing more to wait for. */
  forget(controllerKey: string): void {
    this.pending.delete(controllerKey);
  }
}
