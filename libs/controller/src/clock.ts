// Time as the queue and the leader elector see it. Injected, so tests step time by hand instead of
// sleeping: backoff, delayed requeue and lease expiry become deterministic.

/** Opaque: whatever the clock needs to cancel the timer. */
export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when told. `advance` fires due timers in time order (ties in the order they
 * were set), setting `now()` to each timer's time as it fires, as a real clock would have.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<FakeTimer>();

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as FakeTimer);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way (including ones set by them). */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const next = this.nextDue(end);
      if (!next) break;
      this.timers.delete(next);
      this.current = next.at;
      next.fn();
    }
    this.current = end;
  }

  /**
   * As `advance`, but lets promise callbacks run after each timer, so async code that a timer wakes
   * (a worker picking up a requeued key) gets to its next await before time moves on.
   */
  async advanceAsync(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      await settle();
      const next = this.nextDue(end);
      if (!next) break;
      this.timers.delete(next);
      this.current = next.at;
      next.fn();
    }
    this.current = end;
    await settle();
  }

  private nextDue(end: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.at <= end && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    return best;
  }
}

/** Lets queued promise callbacks run (a macrotask turn, so chains of microtasks finish too). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
