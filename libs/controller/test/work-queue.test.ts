import { describe, expect, it } from "vitest";
import { FakeClock, settle } from "../src/clock.js";
import {
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  defaultControllerRateLimiter,
} from "../src/queue/rate-limiter.js";
import { WorkQueue } from "../src/queue/work-queue.js";

const newQueue = (clock = new FakeClock()) => new WorkQueue<string>({ clock, rateLimiter: new ExponentialBackoffRateLimiter(10, 1000) });

/** Keys the queue hands out without blocking, in order (each is marked done). */
async function drainNow(q: WorkQueue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) {
    const key = (await q.get())!;
    out.push(key);
    q.done(key);
  }
  return out;
}

describe("WorkQueue: dirty and processing sets", () => {
  it("hands keys out in FIFO order and deduplicates keys that are waiting", async () => {
    const q = newQueue();
    for (const k of ["a", "b", "a", "c", "b", "a"]) q.add(k);
    expect(q.length).toBe(3);
    expect(await drainNow(q)).toEqual(["a", "b", "c"]);
  });

  it("does not hand out a key that is being processed; a re-add runs once after done", async () => {
    const q = newQueue();
    q.add("a");
    const first = await q.get();
    expect(first).toBe("a");
    q.add("a");
    q.add("a");
    q.add("b");
    // "a" is held by a worker: only "b" is ready.
    expect(q.length).toBe(1);
    expect(await q.get()).toBe("b");
    q.done("b");
    expect(q.length).toBe(0);
    q.done("a");
    expect(q.length).toBe(1);
    expect(await q.get()).toBe("a");
    q.done("a");
    expect(q.length).toBe(0);
  });

  it("a key not re-added while processing is gone after done", async () => {
    const q = newQueue();
    q.add("a");
    q.done((await q.get())!);
    expect(q.length).toBe(0);
    expect(q.processingCount).toBe(0);
  });

  it("wakes a blocked worker when a key is added", async () => {
    const q = newQueue();
    const pending = q.get();
    let got: string | undefined;
    void pending.then((k) => (got = k));
    await settle();
    expect(got).toBeUndefined();
    q.add("x");
    expect(await pending).toBe("x");
    expect(q.processingCount).toBe(1);
  });

  it("never gives one key to two workers at once, and processes every add (concurrency)", async () => {
    const q = newQueue();
    const keys = Array.from({ length: 8 }, (_, i) => `ns/k${i}`);
    const active = new Set<string>();
    let overlaps = 0;
    let maxActive = 0;
    const processedAfterLastAdd = new Map<string, number>();
    const lastAdd = new Map<string, number>();
    let tick = 0;

    // Pseudo-random but reproducible.
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

    const worker = async () => {
      for (;;) {
        const key = await q.get();
        if (key === undefined) return;
        if (active.has(key)) overlaps++;
        active.add(key);
        maxActive = Math.max(maxActive, active.size);
        const started = tick;
        for (let i = Math.floor(rand() * 4); i > 0; i--) await settle();
        processedAfterLastAdd.set(key, started);
        active.delete(key);
        q.done(key);
      }
    };
    const workers = Array.from({ length: 5 }, worker);
    for (let round = 0; round < 300; round++) {
      const key = keys[Math.floor(rand() * keys.length)]!;
      lastAdd.set(key, ++tick);
      q.add(key);
      if (rand() < 0.5) await settle();
    }
    await q.shutDownWithDrain();
    await Promise.all(workers);

    expect(overlaps).toBe(0);
    expect(maxActive).toBeGreaterThan(1);
    // Level-triggered guarantee: every key was processed at least once after (or while) its last add.
    for (const [key, added] of lastAdd) expect(processedAfterLastAdd.get(key), key).toBeGreaterThanOrEqual(added);
  });
});

describe("WorkQueue: delayed adds", () => {
  it("adds a key once its delay has passed, earliest first", async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.addAfter("late", 300);
    q.addAfter("early", 100);
    q.addAfter("middle", 200);
    expect(q.length).toBe(0);
    expect(q.delayedCount).toBe(3);
    clock.advance(99);
    expect(q.length).toBe(0);
    clock.advance(1);
    expect(await drainNow(q)).toEqual(["early"]);
    clock.advance(250);
    expect(await drainNow(q)).toEqual(["middle", "late"]);
    expect(q.delayedCount).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it("keeps FIFO order among keys due at the same time", async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    for (const k of ["c", "a", "b"]) q.addAfter(k, 50);
    clock.advance(50);
    expect(await drainNow(q)).toEqual(["c", "a", "b"]);
  });

  it("coalesces a key added with two delays to the earlier one", async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.addAfter("a", 500);
    q.addAfter("a", 100);
    q.addAfter("a", 900);
    expect(q.delayedCount).toBe(1);
    clock.advance(100);
    expect(await drainNow(q)).toEqual(["a"]);
    clock.advance(1000);
    // The later times were not kept as separate entries.
    expect(q.length).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it("a zero or negative delay is a plain add", () => {
    const q = newQueue();
    q.addAfter("a", 0);
    q.addAfter("b", -5);
    expect(q.length).toBe(2);
  });

  it("a delayed key that comes due while it is processing runs again after done", async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.add("a");
    const key = (await q.get())!;
    q.addAfter("a", 10);
    clock.advance(10);
    expect(q.length).toBe(0);
    q.done(key);
    expect(await drainNow(q)).toEqual(["a"]);
  });

  it("handles many delays in random order (heap order)", async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    const delays = Array.from({ length: 200 }, (_, i) => ((i * 7919) % 1000) + 1);
    delays.forEach((d, i) => q.addAfter(`k${i}`, d));
    const order: number[] = [];
    for (let t = 0; t < 1001; t++) {
      clock.advance(1);
      for (const k of await drainNow(q)) order.push(delays[Number(k.slice(1))]!);
    }
    expect(order).toHaveLength(200);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});

describe("WorkQueue: rate-limited adds", () => {
  it("backs a failing key off exponentially up to the cap", async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    const delays: number[] = [];
    for (let i = 0; i < 9; i++) {
      const before = clock.now();
      q.addRateLimited("a");
      // Find when it becomes ready.
      let waited = 0;
      while (q.length === 0) {
        clock.advance(1);
        waited++;
      }
      delays.push(clock.now() - before);
      expect(waited).toBe(delays.at(-1));
      q.done((await q.get())!);
    }
    expect(delays).toEqual([10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    expect(q.numRequeues("a")).toBe(9);
  });

  it("forget resets a key's backoff; other keys have their own", () => {
    const clock = new FakeClock();
    const limiter = new ExponentialBackoffRateLimiter<string>(10, 1000);
    const q = new WorkQueue<string>({ clock, rateLimiter: limiter });
    q.addRateLimited("a");
    q.addRateLimited("a");
    q.addRateLimited("a");
    expect(q.numRequeues("a")).toBe(3);
    expect(limiter.when("b")).toBe(10);
    q.forget("a");
    expect(q.numRequeues("a")).toBe(0);
    expect(limiter.when("a")).toBe(10);
  });

  it("the exponential limiter does not overflow on long failure streaks", () => {
    const l = new ExponentialBackoffRateLimiter<string>(5, 60_000);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = l.when("k");
    expect(last).toBe(60_000);
  });

  it("the token bucket allows a burst, then spaces retries at the overall rate, and refills over time", () => {
    const clock = new FakeClock();
    const bucket = new TokenBucketRateLimiter<string>(10, 3, clock);
    expect([bucket.when("a"), bucket.when("b"), bucket.when("c")]).toEqual([0, 0, 0]);
    // Bucket empty: each further reservation waits one more 1/qps behind the previous.
    expect(bucket.when("d")).toBeCloseTo(100);
    expect(bucket.when("e")).toBeCloseTo(200);
    clock.advance(1000);
    // Refilled to the burst, no further.
    expect([bucket.when("f"), bucket.when("g"), bucket.when("h")]).toEqual([0, 0, 0]);
    expect(bucket.when("i")).toBeCloseTo(100);
  });

  it("the default limiter takes the longer of per-key backoff and the overall bucket", () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>({ baseDelayMs: 5, maxDelayMs: 1000, qps: 10, burst: 2, clock });
    expect(limiter.when("a")).toBe(5);
    expect(limiter.when("a")).toBe(10);
    // The bucket is empty now: a fresh key waits for the overall rate, not its own 5 ms.
    expect(limiter.when("b")).toBeCloseTo(100);
    limiter.forget("a");
    expect(limiter.numRequeues("a")).toBe(0);
    expect(limiter.numRequeues("b")).toBe(1);
  });

  it("MaxOf records the failure in every limiter", () => {
    const a = new ExponentialBackoffRateLimiter<string>(1, 100);
    const b = new ExponentialBackoffRateLimiter<string>(3, 100);
    const m = new MaxOfRateLimiter(a, b);
    expect(m.when("k")).toBe(3);
    expect(m.when("k")).toBe(6);
    expect(a.numRequeues("k")).toBe(2);
    expect(b.numRequeues("k")).toBe(2);
  });
});

describe("WorkQueue: shutdown", () => {
  it("releases blocked workers with undefined", async () => {
    const q = newQueue();
    const a = q.get();
    const b = q.get();
    q.shutDown();
    expect(await a).toBeUndefined();
    expect(await b).toBeUndefined();
    expect(await q.get()).toBeUndefined();
  });

  it("lets workers drain what is already queued, then ignores adds", async () => {
    const q = newQueue();
    q.add("a");
    q.add("b");
    q.shutDown();
    q.add("c");
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    expect(await q.get()).toBeUndefined();
  });

  it("drops delayed keys and their timer", () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    q.addAfter("a", 100);
    q.addRateLimited("b");
    q.shutDown();
    expect(q.delayedCount).toBe(0);
    expect(clock.pending).toBe(0);
    q.addAfter("c", 5);
    expect(clock.pending).toBe(0);
    clock.advance(1000);
    expect(q.length).toBe(0);
  });

  it("shutDownWithDrain waits for keys being processed and the re-adds they left", async () => {
    const q = newQueue();
    q.add("a");
    const key = (await q.get())!;
    q.add("a"); // dirty while processing: must still run once before the drain completes
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await settle();
    expect(drained).toBe(false);
    q.done(key);
    await settle();
    expect(drained).toBe(false);
    expect(await q.get()).toBe("a");
    q.done("a");
    await drain;
    expect(drained).toBe(true);
    expect(await q.get()).toBeUndefined();
  });

  it("shutDownWithDrain resolves at once when idle", async () => {
    const q = newQueue();
    await q.shutDownWithDrain();
    expect(q.isShuttingDown).toBe(true);
  });

  it("done for a key that is not being processed is harmless", () => {
    const q = newQueue();
    q.done("nope");
    q.add("a");
    q.done("a");
    expect(q.length).toBe(1);
  });
});
