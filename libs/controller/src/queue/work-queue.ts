// The controller work queue, after client-go's util/workqueue (queue.go, delaying_queue.go,
// rate_limiting_queue.go). It holds keys, not objects: a reconciler reads the current state itself,
// so ten events for one object while it waits are one reconcile (level-triggered).
//
// Invariants, as client-go's dirty + processing sets:
// - a key is in `queue` at most once (`dirty` says it is waiting to be processed);
// - a key handed to a worker is in `processing` until `done`; adding it meanwhile only marks it dirty,
//   and `done` puts it back in the queue, so no two workers ever hold the same key.
import { type Clock, type TimerHandle, realClock } from "../clock.js";
import { type RateLimiter, defaultControllerRateLimiter } from "./rate-limiter.js";

export interface WorkQueueOptions<K extends string> {
  /** Shown in errors and logs. */
  name?: string;
  /** For `addRateLimited`; default: client-go's per-key exponential backoff plus an overall token bucket. */
  rateLimiter?: RateLimiter<K>;
  clock?: Clock;
}

interface Waiting<K> {
  key: K;
  at: number;
  seq: number;
}

export class WorkQueue<K extends string = string> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;

  /** FIFO of keys ready to be handed out. */
  private queue: K[] = [];
  private head = 0;
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  /** Workers blocked in `get`, oldest first. */
  private readonly getters: Array<(key: K | undefined) => void> = [];

  /** Delayed keys: a min-heap by ready time, and each key's earliest ready time (so re-adds coalesce). */
  private readonly heap: Waiting<K>[] = [];
  private readonly waiting = new Map<K, Waiting<K>>();
  private seq = 0;
  private timer: { handle: TimerHandle; at: number } | undefined;

  private shuttingDown = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = options.name ?? "queue";
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>({ clock: this.clock });
  }

  /** Keys waiting to be handed out (not the ones being processed or delayed). */
  get length(): number {
    return this.queue.length - this.head;
  }

  /** Keys held by workers right now. */
  get processingCount(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay (`addAfter`, `addRateLimited`) to pass. */
  get delayedCount(): number {
    return this.waiting.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Marks the key for processing. A key already waiting is not added twice; one being processed runs again after `done`. */
  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.dispatch();
  }

  /**
   * The next key, once one is ready; `undefined` when the queue is shut down and has nothing left to
   * hand out (the worker should then return). Every key received must be given back with `done`.
   */
  get(): Promise<K | undefined> {
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** The worker has finished with the key; if it was added meanwhile, it goes back in the queue. */
  done(key: K): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.dispatch();
    }
    // Only while shutting down does anyone wait for the workers to go idle.
    if (this.processing.size === 0 && this.shuttingDown) this.notifyIdle();
  }

  /** Adds the key once `delayMs` has passed. A key already delayed keeps the earlier of the two times. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (!(delayMs > 0)) return this.add(key);
    const at = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing && existing.at <= at) return;
    // The old heap entry becomes stale: it is skipped when it surfaces, as it no longer matches `waiting`.
    const entry: Waiting<K> = { key, at, seq: this.seq++ };
    this.waiting.set(key, entry);
    this.push(entry);
    this.arm();
  }

  /** Adds the key after the rate limiter's delay for it: its own backoff, or the overall limit if longer. */
  addRateLimited(key: K): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** The key succeeded: its backoff starts from the beginning next time. Does not remove it from the queue. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  /** Failures the rate limiter has recorded for the key since it was last forgotten. */
  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * Stops taking new keys (adds are ignored, delayed keys are dropped). Workers still receive what is
   * already queued, then `get` returns `undefined`; keys being processed may finish.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    this.timer = undefined;
    this.heap.length = 0;
    this.waiting.clear();
    // Getters only wait when the queue is empty, so all of them are told there is nothing more.
    for (const resolve of this.getters.splice(0)) resolve(undefined);
    if (this.processing.size === 0 && this.length === 0) this.notifyIdle();
  }

  /** `shutDown`, then resolves once every queued key has been handed out and every worker has called `done`. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    while (this.processing.size > 0 || this.length > 0) {
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  private take(): K | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++] as K;
    // Compact now and then instead of shift(), which is O(n) per call.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  private dispatch(): void {
    while (this.getters.length > 0 && this.length > 0) {
      const resolve = this.getters.shift()!;
      resolve(this.take());
    }
  }

  private notifyIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  // Delayed keys ---------------------------------------------------------------------------------

  /** One timer, for the earliest delayed key; re-armed whenever an earlier one arrives or it fires. */
  private arm(): void {
    const first = this.peekLive();
    if (!first) {
      if (this.timer) this.clock.clearTimeout(this.timer.handle);
      this.timer = undefined;
      return;
    }
    if (this.timer && this.timer.at <= first.at) return;
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    const at = first.at;
    this.timer = { at, handle: this.clock.setTimeout(() => this.fire(), at - this.clock.now()) };
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    for (let first = this.peekLive(); first && first.at <= now; first = this.peekLive()) {
      this.pop();
      this.waiting.delete(first.key);
      this.add(first.key);
    }
    this.arm();
  }

  /** The earliest entry still current, dropping stale ones on the way. */
  private peekLive(): Waiting<K> | undefined {
    for (;;) {
      const top = this.heap[0];
      if (!top || this.waiting.get(top.key) === top) return top;
      this.pop();
    }
  }

  private before(a: Waiting<K>, b: Waiting<K>): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(entry: Waiting<K>): void {
    const h = this.heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (h.length === 0 || !last) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
