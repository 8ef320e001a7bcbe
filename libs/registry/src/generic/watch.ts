// One fan-out point for every watcher in the process. The storage tells the hub about each commit
// once; the hub keeps a window of recent changes (so a watcher starting a little in the past costs no
// database read) and hands each change to the watchers of its resource.
import type { Change, Storage } from "@orch/storage";
import { CompactedError } from "@orch/storage";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchEvent {
  type: WatchEventType;
  /** The object as JSON text. */
  object: string;
  revision: number;
}

/** Decides what one watcher sees of a change: an event, or nothing. */
export type ChangeFilter = (change: Change) => WatchEvent | undefined;

export interface WatchOptions {
  resource: string;
  /** Deliver changes with revision > this. */
  after: number;
  filter: ChangeFilter;
  /** Events queued beyond this close the watcher (a slow client must not hold memory). */
  maxQueue?: number;
}

const DEFAULT_MAX_QUEUE = 10_000;
const REPLAY_BATCH = 1_000;

export class Watcher implements AsyncIterable<WatchEvent> {
  private queue: WatchEvent[] = [];
  private wake: (() => void) | undefined;
  private listener: (() => void) | undefined;
  private closed = false;
  /** While replaying history, live changes wait here. */
  private pending: Change[] | undefined = [];
  /** Why the watcher ended early, if it did (e.g. overflow). */
  endReason: string | undefined;
  /** The newest revision delivered: history read from the log and live changes may overlap. */
  private deliveredThrough = 0;

  constructor(
    private readonly options: WatchOptions,
    private readonly detach: (w: Watcher) => void,
  ) {}

  get resource(): string {
    return this.options.resource;
  }

  /** Called by the hub for each live change of this watcher's resource. */
  offer(change: Change): void {
    if (this.closed) return;
    if (this.pending) this.pending.push(change);
    else this.deliver(change);
  }

  /** Replayed history is done: flush what arrived meanwhile, skipping what the replay covered. */
  goLive(replayedThrough: number): void {
    const pending = this.pending ?? [];
    this.pending = undefined;
    for (const change of pending) if (change.revision > replayedThrough) this.deliver(change);
  }

  deliver(change: Change): void {
    // A start revision in the future: nothing up to it is delivered. A change delivered already (read
    // from the log ahead of the hub, which hears another apiserver's commits a moment later) is not again.
    if (change.revision <= this.options.after || change.revision <= this.deliveredThrough) return;
    this.deliveredThrough = change.revision;
    const event = this.options.filter(change);
    if (event) this.push(event);
  }

  /** Puts events ahead of everything queued (the initial state of a watch). */
  prepend(events: WatchEvent[]): void {
    this.queue.unshift(...events);
    if (events.length > 0) this.notify();
  }

  push(event: WatchEvent): void {
    if (this.closed) return;
    if (this.queue.length >= (this.options.maxQueue ?? DEFAULT_MAX_QUEUE)) {
      this.endReason = "watcher fell too far behind";
      this.close();
      return;
    }
    this.queue.push(event);
    this.notify();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.detach(this);
    this.notify();
  }

  private notify(): void {
    this.wake?.();
    this.listener?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Everything queued now (a consumer that falls behind takes larger batches, so pays less per event). */
  takeQueued(): WatchEvent[] {
    const batch = this.queue;
    this.queue = [];
    return batch;
  }

  /**
   * Calls `listener` synchronously whenever events are queued and when the watcher closes: the HTTP
   * watch writes them to its socket at once, without a promise per event.
   */
  onQueued(listener: () => void): void {
    this.listener = listener;
  }

  /** Everything queued, waiting for at least one event; empty once closed and drained. */
  async nextBatch(): Promise<WatchEvent[]> {
    while (this.queue.length === 0 && !this.closed) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    return this.takeQueued();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    for (;;) {
      const batch = await this.nextBatch();
      if (batch.length === 0) return;
      yield* batch;
    }
  }
}

export class WatchHub {
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly window: Change[] = [];
  private lastRevision = 0;
  private readonly unsubscribe: () => void;

  private constructor(
    private readonly storage: Storage,
    private readonly windowSize: number,
  ) {
    this.unsubscribe = storage.onCommit((change) => this.publish(change));
  }

  static async create(storage: Storage, windowSize = 10_000): Promise<WatchHub> {
    // Subscribed before the revision is read: a commit in between (another apiserver's) is not missed.
    const hub = new WatchHub(storage, windowSize);
    hub.lastRevision = Math.max(hub.lastRevision, await storage.currentRevision());
    return hub;
  }

  /** The newest revision the hub has seen committed. */
  get revision(): number {
    return this.lastRevision;
  }

  private publish(change: Change): void {
    this.lastRevision = Math.max(this.lastRevision, change.revision);
    this.window.push(change);
    // Trim in chunks: shifting the array on every commit would cost O(window) per write.
    if (this.window.length > this.windowSize * 1.25) this.window.splice(0, this.window.length - this.windowSize);
    const set = this.watchers.get(change.resource);
    if (set) for (const w of set) w.offer(change);
  }

  /**
   * Starts a watcher that sees every change after `options.after`, in order, with no gap between
   * history and live changes. Throws CompactedError when that history is gone.
   */
  async watch(options: WatchOptions): Promise<Watcher> {
    const watcher = new Watcher(options, (w) => this.watchers.get(w.resource)?.delete(w));
    let set = this.watchers.get(options.resource);
    if (!set) this.watchers.set(options.resource, (set = new Set()));
    set.add(watcher);
    const through = this.lastRevision;
    try {
      await this.replay(watcher, options, through);
    } catch (e) {
      watcher.close();
      throw e;
    }
    watcher.goLive(through);
    return watcher;
  }

  private async replay(watcher: Watcher, options: WatchOptions, through: number): Promise<void> {
    if (options.after >= through) return;
    // The in-memory window may still hold changes the storage has compacted: the storage decides.
    const compacted = await this.storage.compactedRevision();
    if (options.after < compacted) throw new CompactedError(options.after, compacted);
    const first = this.window[0];
    if (first && first.revision <= options.after + 1) {
      for (const change of this.window) {
        if (change.revision > through) break;
        if (change.revision > options.after && change.resource === options.resource) watcher.deliver(change);
      }
      return;
    }
    let after = options.after;
    while (after < through) {
      const batch = await this.storage.changes(after, REPLAY_BATCH, options.resource);
      for (const change of batch) {
        if (change.revision > through) return;
        watcher.deliver(change);
      }
      if (batch.length < REPLAY_BATCH) return;
      after = batch[batch.length - 1]!.revision;
    }
  }

  close(): void {
    this.unsubscribe();
    for (const set of this.watchers.values()) for (const w of [...set]) w.close();
  }
}

export { CompactedError };
