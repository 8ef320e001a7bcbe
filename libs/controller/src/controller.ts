// The reconciler contract and the loop that drives it, after controller-runtime
// (pkg/reconcile/reconcile.go, pkg/internal/controller/controller.go): informer events become keys in a
// work queue; workers hand each key to the reconciler, which reads the current state itself and makes
// the world match it. The outcome decides what happens to the key:
//   returns nothing           → done; its backoff is forgotten
//   returns { requeueAfter }  → run again after that long (a poll, e.g. a certificate near expiry)
//   throws                    → retried with the queue's per-key exponential backoff
//   throws TerminalError      → logged, not retried (retrying cannot help; a new event will bring it back)
import { type Informer, type KubeObject, keyOf } from "@orch/client";
import { type Logger, createLogger } from "@orch/log";
import type { ControllerEvent, Predicate } from "./predicates.js";
import { WorkQueue } from "./queue/work-queue.js";

export type Result = { requeueAfter?: number } | void;

export interface ReconcileContext {
  /** Aborted when the controller stops: a long reconcile should give up at its next step. */
  signal: AbortSignal;
}

export interface Reconciler {
  /** `key` is `namespace/name` (or `name` for cluster-scoped objects). Must be idempotent. */
  reconcile(key: string, context: ReconcileContext): Promise<Result>;
}

/** A failure retrying cannot fix (invalid input): the key is dropped until the next event for it. */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

/** What the runner needs of an informer (an `Informer` from @orch/client, or a fake in tests). */
export type InformerLike<T extends KubeObject = KubeObject> = Pick<Informer<T>, "addEventHandler" | "start" | "waitForSync">;

export interface SourceSpec<T extends KubeObject = KubeObject> {
  informer: InformerLike<T>;
  /**
   * The keys an event enqueues; default the object's own key. Watching owned objects means mapping them
   * to their owner (see `ownerKeys`).
   */
  toKeys?: (obj: T) => string[];
  /** Which events count; default the controller's `filter`, else all. */
  filter?: Predicate<T>;
  /**
   * How long after an event its keys are queued, for objects that carry their own deadline (an Event's
   * time to live): nothing is read until it may be due. Default, and for 0 or less, at once.
   */
  delay?: (obj: T) => number;
}

export type Source<T extends KubeObject = KubeObject> = InformerLike<T> | SourceSpec<T>;

export interface ControllerOptions {
  /** Names the queue and the log lines. */
  name: string;
  reconciler: Reconciler | Reconciler["reconcile"];
  /** Keys reconciled at once (never the same key twice); default 1. */
  workers?: number;
  /** Informers whose events enqueue keys. They are started if not yet running, and not stopped here: they may be shared. */
  sources: Source<any>[];
  /** A queue of the caller's (custom rate limits, a fake clock); default a new one. */
  queue?: WorkQueue<string>;
  /** Default event filter for sources without their own, e.g. `generationChanged` to skip the controller's own status writes. */
  filter?: Predicate<any>;
  /** Stops the controller when aborted. */
  signal?: AbortSignal;
  log?: Logger;
  /** Fail `ready` if the sources have not listed within this long; default: wait as long as it takes. */
  syncTimeoutMs?: number;
}

export interface StopOptions {
  /**
   * Also reconcile the keys still queued before stopping. Default false: a stop (shutdown, lost
   * leadership) must end the controller's writes promptly, and nothing is lost by dropping the queue —
   * whoever runs next lists every object again (level-triggered).
   */
  drain?: boolean;
}

export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  /** Resolves when every source has synced and the workers have started. */
  readonly ready: Promise<void>;
  /** Resolves when the controller has stopped (workers returned). */
  readonly done: Promise<void>;
  /** Stops taking events; lets reconciles in progress finish; resolves when the workers have returned. */
  stop(options?: StopOptions): Promise<void>;
}

/** Maps an owned object to its controlling owner of `kind`, as `namespace/name` (owners share the namespace). */
export function ownerKeys(kind: string): (obj: KubeObject) => string[] {
  return (obj) => {
    const refs = (obj.metadata as { ownerReferences?: Array<{ kind?: string; name?: string; controller?: boolean }> } | undefined)
      ?.ownerReferences;
    const owner = refs?.find((r) => r.controller === true && r.kind === kind && r.name);
    if (!owner) return [];
    const namespace = obj.metadata?.namespace;
    return [namespace ? `${namespace}/${owner.name}` : owner.name!];
  };
}

const specOf = (source: Source<any>): SourceSpec<any> => ("informer" in source ? source : { informer: source });

export function runController(options: ControllerOptions): Controller {
  const { name } = options;
  const log = options.log ?? createLogger(name);
  const queue = options.queue ?? new WorkQueue<string>({ name });
  const reconcile = typeof options.reconciler === "function" ? options.reconciler : options.reconciler.reconcile.bind(options.reconciler);
  const workers = Math.max(1, options.workers ?? 1);
  const abort = new AbortController();
  const context: ReconcileContext = { signal: abort.signal };
  let stopped = false;
  let drain = false;

  // Handlers are registered before the informers start (or, for running ones, replay the cache as adds),
  // so no object is missed between "started" and "listening".
  const unsubscribe: Array<() => void> = [];
  for (const source of options.sources.map(specOf)) {
    const filter: Predicate<any> | undefined = source.filter ?? options.filter;
    const toKeys = source.toKeys ?? ((obj: KubeObject) => [keyOf(obj)]);
    const enqueue = (event: ControllerEvent<any>): void => {
      if (stopped || (filter && !filter(event))) return;
      const wait = source.delay?.(event.object) ?? 0;
      for (const key of toKeys(event.object)) {
        if (!key) continue;
        if (wait > 0) queue.addAfter(key, wait);
        else queue.add(key);
      }
    };
    unsubscribe.push(
      source.informer.addEventHandler({
        onAdd: (object) => enqueue({ type: "add", object }),
        onUpdate: (old, object) => enqueue({ type: "update", old, object }),
        onDelete: (object) => enqueue({ type: "delete", object }),
      }),
    );
  }

  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      // After a stop without drain, what is still queued is handed back unprocessed.
      if (stopped && !drain) {
        queue.done(key);
        continue;
      }
      try {
        const result = await reconcile(key, context);
        queue.forget(key);
        const after = result?.requeueAfter;
        if (after !== undefined && after > 0) queue.addAfter(key, after);
      } catch (e) {
        if (e instanceof TerminalError) {
          queue.forget(key);
          log.error(`reconcile ${key} failed for good`, e);
        } else {
          queue.addRateLimited(key);
          log.error(`reconcile ${key} failed (retry ${queue.numRequeues(key)})`, e);
        }
      } finally {
        queue.done(key);
      }
    }
  };

  let running: Promise<void>[] = [];
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  const ready = (async () => {
    const informers = options.sources.map((s) => specOf(s).informer);
    for (const informer of informers) informer.start();
    const synced = Promise.all(informers.map((i) => i.waitForSync(options.syncTimeoutMs)));
    // A stop before the sync ends the wait: there is nothing to start then.
    await Promise.race([synced, stopRequested]);
    if (stopped) return;
    running = Array.from({ length: workers }, worker);
    log.info(`started ${workers} worker${workers === 1 ? "" : "s"}`);
  })();
  // `ready` rejecting is reported to whoever awaits it; the controller itself stays stoppable.
  ready.catch(() => undefined);

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let stopping: Promise<void> | undefined;
  const stop = (stopOptions: StopOptions = {}): Promise<void> => {
    stopping ??= (async () => {
      stopped = true;
      requestStop();
      drain = stopOptions.drain === true;
      for (const off of unsubscribe) off();
      // Draining means finishing the work, so reconcilers are told to give up only when not draining.
      if (!drain) abort.abort();
      queue.shutDown();
      await ready.catch(() => undefined);
      await Promise.all(running);
      abort.abort();
      resolveDone();
    })();
    return stopping;
  };
  if (options.signal?.aborted) void stop();
  else options.signal?.addEventListener("abort", () => void stop(), { once: true });

  return { name, queue, ready, done, stop };
}
