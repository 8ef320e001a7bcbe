// How long a key waits before it is retried, as client-go's workqueue rate limiters
// (util/workqueue/default_rate_limiters.go): per-key exponential backoff, an overall token bucket, and
// the maximum of several. `when` is called once per rate-limited add and counts as a failure.
import { type Clock, realClock } from "../clock.js";

export interface RateLimiter<K extends string = string> {
  /** How long (ms) the key should wait before it is processed again; records one more failure. */
  when(key: K): number;
  /** The key succeeded: forget its failures, so the next failure starts from the base delay again. */
  forget(key: K): void;
  /** Failures recorded for the key since it was last forgotten. */
  numRequeues(key: K): number;
}

/** `base * 2^failures`, capped at `max`: a key that keeps failing backs off, others are not slowed. */
export class ExponentialBackoffRateLimiter<K extends string = string> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1000_000,
  ) {
    if (!(baseMs > 0) || !(maxMs >= baseMs)) throw new Error(`backoff needs 0 < base (${baseMs}) <= max (${maxMs})`);
  }

  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity long before it matters; min() keeps the cap exact.
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * An overall token bucket (`qps` tokens a second, up to `burst` saved): bounds the retry rate of the
 * whole controller, so a mass failure (the apiserver restarting) does not turn into a retry storm.
 * Each call reserves a token; when none is left the caller is told how long until its token exists.
 */
export class TokenBucketRateLimiter<K extends string = string> implements RateLimiter<K> {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error(`token bucket needs qps > 0 (${qps}) and burst >= 1 (${burst})`);
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: K): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    // Reservations may drive the bucket below zero: later callers then wait behind earlier ones.
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_key: K): void {}

  numRequeues(_key: K): number {
    return 0;
  }
}

/** The longest wait any of the limiters asks for; every limiter records the failure. */
export class MaxOfRateLimiter<K extends string = string> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(key: K): number {
    let wait = 0;
    for (const l of this.limiters) wait = Math.max(wait, l.when(key));
    return wait;
  }

  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: K): number {
    let n = 0;
    for (const l of this.limiters) n = Math.max(n, l.numRequeues(key));
    return n;
  }
}

export interface DefaultRateLimiterOptions {
  /** First retry delay of a failing key (ms); default 5. */
  baseDelayMs?: number;
  /** Longest retry delay of a failing key (ms); default 1000 s, as client-go. */
  maxDelayMs?: number;
  /** Overall retry rate (per second); default 10. */
  qps?: number;
  /** Retries allowed at once before the overall rate applies; default 100. */
  burst?: number;
  clock?: Clock;
}

/** client-go's DefaultControllerRateLimiter: per-key 5 ms..1000 s backoff, overall 10 qps with a burst of 100. */
export function defaultControllerRateLimiter<K extends string = string>(options: DefaultRateLimiterOptions = {}): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ExponentialBackoffRateLimiter<K>(options.baseDelayMs ?? 5, options.maxDelayMs ?? 1000_000),
    new TokenBucketRateLimiter<K>(options.qps ?? 10, options.burst ?? 100, options.clock ?? realClock),
  );
}
