// List-and-follow inside the process that owns the storage: what the apiserver's own indexes and
// controllers are built on. At start it lists each resource at some revision R, then hands over every
// commit of the resources it follows, in revision order, skipping what a list already covered: each
// state of each object reaches the handlers once, with no gap and no duplicate — the guarantee the
// client's informer gives over NATS or HTTP.
//
// Delivery is synchronous, from the commit itself: an index a handler keeps (RBAC bindings, served
// CRDs, namespace phases) is current by the time the write that changed it is answered. There is no
// cache: consumers keep what they need of each object. The watch hub and the event relay read the
// commit log itself (`Storage.onCommit`, `Storage.changes`): they need every change and history, not state.
import { type Logger, createLogger } from "@orch/log";
import type { Change, ObjectKey, Storage } from "./storage.js";

/** Called synchronously; objects are shared by every handler of every informer and must not be changed. */
export interface StorageEventHandlers<T> {
  onAdd?(obj: T, key: ObjectKey): void;
  /**
   * `previous()` is the state before the change, parsed when a handler first asks for it (a second parse
   * of each update: the endpoints controller needs it only in namespaces with Services that select pods).
   */
  onUpdate?(previous: () => T, obj: T, key: ObjectKey): void;
  /** With the object's last state. */
  onDelete?(obj: T, key: ObjectKey): void;
}

export interface StorageInformerOptions {
  /** Storage resources (`<group>/<plural>`) listed at start and followed; a function is read at start. */
  resources: readonly string[] | (() => readonly string[]);
  /**
   * Also follow commits of these resources without listing them first: for a consumer of every kind,
   * whose kinds (custom resources) may appear after it started. Default: only the listed ones.
   */
  follows?: (resource: string) => boolean;
  /**
   * Which objects reach the handlers, decided from the key before the object is parsed: a consumer of a
   * few objects of a large resource (each namespace's `default` ServiceAccount among 100,000) neither
   * parses nor holds the others. Read at each list and commit; default: every object.
   */
  keep?: (key: ObjectKey) => boolean;
  /** Where failing handlers are reported (default a logger named `storage-informer`). */
  log?: Logger;
}

/**
 * The last commit's objects, parsed once for all the informers that hear it: a pod's status write
 * reaches the garbage collector's and the endpoints controller's, and parsing the pod and its previous
 * state for each was a tenth of the write. Storage hands a commit to every listener before the next
 * one, so one slot is enough; it is not kept on the change, which the watch hub holds for a while.
 * The committed object itself comes with a change this process committed: then only the previous
 * state, when asked for, is parsed.
 */
let lastParsed: { change: Change; obj: unknown; previous?: unknown } | undefined;

function parsedCommit(change: Change): { obj: unknown; previous?: unknown } {
  if (lastParsed?.change !== change) lastParsed = { change, obj: change.object ?? JSON.parse(change.value) };
  return lastParsed;
}

/** The state before `change` (a MODIFIED one, with its previous value). */
function previousOf(change: Change): unknown {
  const parsed = parsedCommit(change);
  parsed.previous ??= JSON.parse(change.prevValue!);
  return parsed.previous;
}

export class StorageInformer<T = unknown> {
  private readonly handlers: StorageEventHandlers<T>[] = [];
  /** The revision each listed resource was read at; commits at or below it are in the list. */
  private readonly listedAt = new Map<string, number>();
  /** Commits that arrived while listing, delivered once the lists are. */
  private buffered: Change[] | undefined;
  private unsubscribe: (() => void) | undefined;
  private started: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(
    private readonly storage: Storage,
    private readonly options: StorageInformerOptions,
  ) {
    this.log = options.log ?? createLogger("storage-informer");
  }

  /** Handlers must be in place before `start`: without a cache there is nothing to replay to a late one. */
  addEventHandler(handlers: StorageEventHandlers<T>): () => void {
    if (this.started) throw new Error("storage informer: add handlers before start()");
    this.handlers.push(handlers);
    return () => {
      const i = this.handlers.indexOf(handlers);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  /** Lists, then follows; `waitForSync` resolves once every list has been delivered. */
  start(): void {
    this.started ??= this.listAndFollow();
    this.started.catch(() => undefined);
  }

  waitForSync(timeoutMs?: number): Promise<void> {
    this.start();
    if (timeoutMs === undefined) return this.started!;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`storage informer not synced within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.started!, timeout]).finally(() => clearTimeout(timer));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.handlers.length = 0;
  }

  private async listAndFollow(): Promise<void> {
    const resources = typeof this.options.resources === "function" ? this.options.resources() : this.options.resources;
    const listed = new Set(resources);
    const follows = this.options.follows;
    this.buffered = [];
    // Subscribed before listing, so a commit during the lists is either in a list or in the buffer.
    this.unsubscribe = this.storage.onCommit((change) => {
      if (!listed.has(change.resource) && !follows?.(change.resource)) return;
      if (this.buffered) this.buffered.push(change);
      else this.deliver(change);
    });
    for (const resource of listed) {
      // An object whose encryption key is gone is left out: the consumer keeps working on the rest.
      const { items, revision } = await this.storage.list({
        resource,
        ...(this.options.keep ? { filter: this.options.keep } : {}),
        onUnreadable: (e) => this.log.error(`left out of the list: ${e.message}`),
      });
      this.listedAt.set(resource, revision);
      for (const item of items) this.dispatch("ADDED", JSON.parse(item.value) as T, undefined, item);
    }
    const buffered = this.buffered;
    this.buffered = undefined;
    for (const change of buffered) this.deliver(change);
  }

  private deliver(change: Change): void {
    if (change.revision <= (this.listedAt.get(change.resource) ?? 0)) return;
    if (this.options.keep && !this.options.keep(change)) return;
    const previous = change.type === "MODIFIED" && change.prevValue !== undefined ? () => previousOf(change) as T : undefined;
    this.dispatch(change.type, parsedCommit(change).obj as T, previous, change);
  }

  // Called once per listed object at start (100,000 and more): it allocates nothing but the parsed object.
  private dispatch(type: Change["type"], obj: T, previous: (() => T) | undefined, key: ObjectKey): void {
    for (const h of this.handlers) {
      // One failing handler must not keep the change from the others.
      try {
        if (type === "DELETED") h.onDelete?.(obj, key);
        else if (type === "ADDED") h.onAdd?.(obj, key);
        else if (previous) h.onUpdate?.(previous, obj, key);
      } catch (e) {
        this.log.error(`handler failed on ${type} ${key.resource} ${key.namespace}/${key.name}`, e);
      }
    }
  }
}
