// Informer: a local cache of one resource kept in step with the server by list + a stream of events,
// with event handlers, indexes and an optional resync. Where the events come from is a source:
// NATS JetStream (nats-source.ts, the default when NATS is configured) or HTTP watch (http-source.ts).
// Both give the same guarantees: after the initial list, every later revision of the resource is
// applied once, in order; when that cannot be guaranteed, the informer lists again.
import {
  type FieldSelector,
  type LabelSelector,
  fieldSelectorIsEverything,
  fieldSelectorMatches,
  labelSelectorIsEverything,
  labelSelectorMatches,
  parseFieldSelector,
  parseLabelSelector,
} from "@orch/machinery";
import type { ApiClient } from "../client.js";
import { isNotFound } from "../errors.js";
import { type KubeObject, keyOf } from "../types.js";
import { Cache, type IndexFunc } from "./cache.js";
import { type Logger, createLogger } from "@orch/log";

/** Where informers without an onError report, made when first needed. */
let informerLog: Logger | undefined;
import { HttpWatchSource } from "./http-source.js";
import type { EventSource, InformerOptions, InformerSink } from "./source.js";
import { NatsEventSource } from "./nats-source.js";

export interface EventHandlers<T> {
  onAdd?(obj: T): void | Promise<void>;
  /** Also called by resync with `old === obj`. */
  onUpdate?(old: T, obj: T): void | Promise<void>;
  /** The last state known (for a delete seen as a relist difference, the last cached state). */
  onDelete?(obj: T): void | Promise<void>;
}

export interface InformerStats {
  /** Lists done (the initial one included): more than one means the informer relisted. */
  lists: number;
  /** The revision of the latest list. */
  listRevision: number;
  /** Watch or NATS events applied to the cache. */
  events: number;
  resyncs: number;
}

export class Informer<T extends KubeObject> {
  private readonly cache = new Cache<T>();
  private readonly handlers = new Set<EventHandlers<T>>();
  private readonly abort = new AbortController();
  private readonly source: EventSource<T>;
  private readonly labels: LabelSelector | undefined;
  private readonly fields: FieldSelector | undefined;
  private running: Promise<void> | undefined;
  private synced = false;
  private readonly syncWaiters: Array<() => void> = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  /** Serializes cache writes and handler calls (events, relists, resyncs). */
  private chain: Promise<void> = Promise.resolve();
  private current = 0;
  private readonly counters: InformerStats = { lists: 0, listRevision: 0, events: 0, resyncs: 0 };

  constructor(
    private readonly client: ApiClient,
    private readonly options: InformerOptions,
  ) {
    // NATS events are not filtered by the server beyond the subject (group, resource, namespace):
    // selectors are applied here, with Kubernetes' semantics (an object leaving the selection is a delete).
    const labels = options.labelSelector ? parseLabelSelector(options.labelSelector) : undefined;
    const fields = options.fieldSelector ? parseFieldSelector(options.fieldSelector) : undefined;
    this.labels = labels && !labelSelectorIsEverything(labels) ? labels : undefined;
    this.fields = fields && !fieldSelectorIsEverything(fields) ? fields : undefined;
    this.source = options.nats ? new NatsEventSource<T>(options, options.nats) : new HttpWatchSource<T>(client, options);
  }

  /** Handlers are called one at a time, in event order; a returned promise is awaited before the next event. */
  addEventHandler(handlers: EventHandlers<T>): () => void {
    let removed = false;
    if (!this.running) this.handlers.add(handlers);
    else {
      // A handler added once running first hears every cached object as an add, then the events after
      // them: joining between two events or lists (inside the serialized section) keeps that order.
      void this.exclusive(async () => {
        if (removed) return;
        this.handlers.add(handlers);
        for (const obj of this.cache.list()) await this.call(() => handlers.onAdd?.(obj));
      });
    }
    return () => {
      removed = true;
      this.handlers.delete(handlers);
    };
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    this.cache.addIndex(name, fn);
  }

  byIndex(name: string, value: string): T[] {
    return this.cache.byIndex(name, value);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  getByKey(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return this.cache.list();
  }

  keys(): string[] {
    return this.cache.keys();
  }

  /** The revision the cache reflects: the list's, then each applied event's (or bookmark's). */
  get revision(): number {
    return this.current;
  }

  get stats(): Readonly<InformerStats> {
    return { ...this.counters };
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the cache; rejects after `timeoutMs` if given. */
  waitForSync(timeoutMs?: number): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => reject(new Error(`informer for ${this.options.ref.plural} not synced within ${timeoutMs} ms`)), timeoutMs);
      this.syncWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  start(): void {
    if (this.running || this.abort.signal.aborted) return;
    this.running = this.source.run(this.sink()).catch((e) => {
      if (!this.abort.signal.aborted) this.report(e);
    });
    const period = this.options.resyncPeriodMs;
    if (period && period > 0) this.resyncTimer = setInterval(() => void this.resync(), period);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearInterval(this.resyncTimer);
    await this.running;
    await this.chain;
  }

  private sink(): InformerSink<T> {
    return {
      signal: this.abort.signal,
      relist: () => this.relist(),
      apply: (type, obj, revision) => this.exclusive(() => this.applyEvent(type, obj, revision)),
      progress: (revision) => {
        if (revision > this.current) this.current = revision;
      },
      error: (e) => this.report(e),
      fetch: async (identity) => {
        const { name = "", namespace } = identity.metadata ?? {};
        try {
          return await this.client.get<T>(this.options.ref, name, namespace ? { namespace } : {});
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      },
      backoff: (attempt) => this.sleep(Math.min(10_000, 200 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2)),
    };
  }

  private async relist(): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      if (this.abort.signal.aborted) throw new Error("informer stopped");
      try {
        const list = await this.client.listAll<T>(this.options.ref, {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          limit: this.options.pageSize ?? 500,
        });
        const revision = Number(list.metadata.resourceVersion ?? 0);
        await this.exclusive(() => this.replace(list.items, revision));
        return revision;
      } catch (e) {
        if (this.abort.signal.aborted) throw e;
        this.report(e);
        await this.sink().backoff(attempt);
      }
    }
  }

  /** The cache becomes the list; handlers hear the differences (client-go's Replace). */
  private async replace(items: T[], revision: number): Promise<void> {
    this.counters.lists++;
    this.counters.listRevision = revision;
    const seen = new Set<string>();
    for (const obj of items) {
      this.trim(obj);
      const key = keyOf(obj);
      seen.add(key);
      const old = this.cache.set(obj);
      if (!old) await this.notify((h) => h.onAdd?.(obj));
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) await this.notify((h) => h.onUpdate?.(old, obj));
    }
    for (const key of this.cache.keys()) {
      if (seen.has(key)) continue;
      const old = this.cache.delete(key);
      if (old) await this.notify((h) => h.onDelete?.(old));
    }
    this.current = revision;
    if (!this.synced) {
      this.synced = true;
      for (const wake of this.syncWaiters.splice(0)) wake();
    }
  }

  private async applyEvent(type: "ADDED" | "MODIFIED" | "DELETED", obj: T, revision: number): Promise<void> {
    this.counters.events++;
    if (revision > this.current) this.current = revision;
    this.trim(obj);
    const key = keyOf(obj);
    if (type === "DELETED" || !this.selected(obj)) {
      // Leaving the selection reads as a delete, as the watch API sends it.
      const old = this.cache.delete(key);
      if (old) await this.notify((h) => h.onDelete?.(type === "DELETED" ? obj : old));
      return;
    }
    const old = this.cache.set(obj);
    if (old) await this.notify((h) => h.onUpdate?.(old, obj));
    else await this.notify((h) => h.onAdd?.(obj));
  }

  /** The object as this informer keeps it (it owns the objects its sources decoded). */
  private trim(obj: T): void {
    if (this.options.withoutManagedFields && obj.metadata?.managedFields) delete obj.metadata.managedFields;
  }

  private selected(obj: T): boolean {
    if (!this.options.nats) return true; // the server filtered the watch
    if (this.labels && !labelSelectorMatches(this.labels, obj.metadata?.labels ?? {})) return false;
    if (this.fields && !fieldSelectorMatches(this.fields, (path) => fieldOf(obj, path))) return false;
    return true;
  }

  private async resync(): Promise<void> {
    if (!this.synced) return;
    await this.exclusive(async () => {
      this.counters.resyncs++;
      for (const obj of this.cache.list()) await this.notify((h) => h.onUpdate?.(obj, obj));
    });
  }

  private exclusive(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async notify(fn: (h: EventHandlers<T>) => void | Promise<void>): Promise<void> {
    for (const h of this.handlers) await this.call(() => fn(h));
  }

  /** A failing handler is reported; it must not stop the informer or the other handlers. */
  private async call(fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.report(e);
    }
  }

  private report(e: unknown): void {
    if (this.options.onError) this.options.onError(e);
    else
      (informerLog ??= createLogger("informer")).warn(`informer ${this.options.ref.plural}`, {
        error: e instanceof Error ? e.message : String(e),
      });
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.abort.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
  }
}

/** A field selector's value of a dotted path (`metadata.name`, `spec.signerName`); "" when absent. */
function fieldOf(obj: unknown, path: string): string {
  let v: unknown = obj;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return "";
    v = (v as Record<string, unknown>)[part];
  }
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : "";
}
