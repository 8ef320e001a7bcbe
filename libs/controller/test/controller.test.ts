import { describe, expect, it } from "vitest";
import {
  ExponentialBackoffRateLimiter,
  FakeClock,
  type Result,
  TerminalError,
  WorkQueue,
  generationChanged,
  ownerKeys,
  runController,
  settle,
  silentLogger,
} from "../src/index.js";
import { FakeInformer, type Obj, obj } from "./fakes.js";

const queueWith = (clock: FakeClock) => new WorkQueue<string>({ clock, rateLimiter: new ExponentialBackoffRateLimiter(10, 200) });

/** A reconciler that records calls; `behave` decides each call's outcome. */
function recorder(behave: (key: string, n: number) => Result | Promise<Result> = () => undefined) {
  const calls: string[] = [];
  const count = new Map<string, number>();
  return {
    calls,
    reconcile: async (key: string): Promise<Result> => {
      calls.push(key);
      const n = (count.get(key) ?? 0) + 1;
      count.set(key, n);
      return behave(key, n);
    },
  };
}

describe("runController", () => {
  it("starts the sources, waits for their sync, then reconciles the keys their events enqueue", async () => {
    const informer = new FakeInformer<Obj>();
    const r = recorder();
    const c = runController({ name: "t", sources: [informer], reconciler: r, log: silentLogger });
    expect(informer.started).toBe(1);
    informer.add(obj("a"));
    informer.add(obj("b", { namespace: "" }));
    await settle();
    // The cache is not complete before the sync: no reconcile yet.
    expect(r.calls).toEqual([]);
    informer.sync();
    await c.ready;
    await settle();
    expect(r.calls).toEqual(["ns/a", "b"]);
    informer.update(obj("a", { rv: "1" }), obj("a", { rv: "2" }));
    informer.delete(obj("c"));
    await settle();
    expect(r.calls).toEqual(["ns/a", "b", "ns/a", "ns/c"]);
    await c.stop();
  });

  it("accepts a Reconciler object as well as a function", async () => {
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const seen: string[] = [];
    const reconciler = {
      prefix: "seen:",
      async reconcile(key: string) {
        seen.push(this.prefix + key);
      },
    };
    const c = runController({ name: "t", sources: [informer], reconciler, log: silentLogger });
    await c.ready;
    informer.add(obj("x"));
    await settle();
    expect(seen).toEqual(["seen:ns/x"]);
    await c.stop();
  });

  it("collapses a burst of events for one key into one reconcile while it waits", async () => {
    const informer = new FakeInformer<Obj>();
    const r = recorder();
    const c = runController({ name: "t", sources: [informer], reconciler: r, log: silentLogger });
    for (let i = 0; i < 20; i++) informer.update(obj("a", { rv: String(i) }), obj("a", { rv: String(i + 1) }));
    informer.sync();
    await c.ready;
    await settle();
    expect(r.calls).toEqual(["ns/a"]);
    await c.stop();
  });

  it("never reconciles one key on two workers at once, and reconciles again after events during a reconcile", async () => {
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const active = new Set<string>();
    let overlap = false;
    let max = 0;
    const calls: string[] = [];
    const c = runController({
      name: "t",
      workers: 4,
      sources: [informer],
      log: silentLogger,
      reconciler: async (key) => {
        if (active.has(key)) overlap = true;
        active.add(key);
        max = Math.max(max, active.size);
        calls.push(key);
        await settle();
        await settle();
        active.delete(key);
      },
    });
    await c.ready;
    for (let round = 0; round < 30; round++) {
      for (const name of ["a", "b", "c"]) informer.add(obj(name));
      await settle();
    }
    await c.stop({ drain: true });
    expect(overlap).toBe(false);
    expect(max).toBeGreaterThan(1);
    expect(calls.filter((k) => k === "ns/a").length).toBeGreaterThan(1);
  });

  it("queues a source's keys after the delay it gives the object, and at once when that is none", async () => {
    const clock = new FakeClock();
    const queue = queueWith(clock);
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const r = recorder(() => undefined);
    const delays: Record<string, number> = { late: 500, due: 0, overdue: -20 };
    const c = runController({
      name: "t",
      sources: [{ informer, delay: (o) => delays[o.metadata.name!]! }],
      reconciler: r,
      queue,
      log: silentLogger,
    });
    await c.ready;
    for (const name of ["late", "due", "overdue"]) informer.add(obj(name));
    await settle();
    expect([...r.calls].sort()).toEqual(["ns/due", "ns/overdue"]);
    await clock.advanceAsync(499);
    expect(r.calls).toHaveLength(2);
    await clock.advanceAsync(1);
    expect(r.calls.at(-1)).toBe("ns/late");
    await c.stop();
  });

  it("requeues after the time a reconcile asks for, without counting it as a failure", async () => {
    const clock = new FakeClock();
    const queue = queueWith(clock);
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const r = recorder((_key, n) => (n < 3 ? { requeueAfter: 1000 } : undefined));
    const c = runController({ name: "t", sources: [informer], reconciler: r, queue, log: silentLogger });
    await c.ready;
    informer.add(obj("a"));
    await settle();
    expect(r.calls).toHaveLength(1);
    await clock.advanceAsync(999);
    expect(r.calls).toHaveLength(1);
    await clock.advanceAsync(1);
    expect(r.calls).toHaveLength(2);
    expect(queue.numRequeues("ns/a")).toBe(0);
    await clock.advanceAsync(1000);
    expect(r.calls).toHaveLength(3);
    await clock.advanceAsync(10_000);
    expect(r.calls).toHaveLength(3);
    await c.stop();
  });

  it("retries a failing key with growing backoff and forgets the failures once it succeeds", async () => {
    const clock = new FakeClock();
    const queue = queueWith(clock);
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const times: number[] = [];
    const errors: string[] = [];
    const c = runController({
      name: "t",
      sources: [informer],
      queue,
      log: { ...silentLogger, error: (m) => errors.push(m), child: () => silentLogger },
      reconciler: async () => {
        times.push(clock.now());
        if (times.length <= 5) throw new Error("not yet");
      },
    });
    await c.ready;
    informer.add(obj("a"));
    for (let i = 0; i < 100; i++) await clock.advanceAsync(10);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps).toEqual([10, 20, 40, 80, 160]);
    expect(queue.numRequeues("ns/a")).toBe(0);
    expect(errors).toHaveLength(5);
    expect(errors[0]).toContain("reconcile ns/a failed (retry 1)");
    await c.stop();
  });

  it("does not retry a TerminalError", async () => {
    const clock = new FakeClock();
    const queue = queueWith(clock);
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const r = recorder(() => {
      throw new TerminalError("bad spec");
    });
    const c = runController({ name: "t", sources: [informer], reconciler: r, queue, log: silentLogger });
    await c.ready;
    informer.add(obj("a"));
    await clock.advanceAsync(10_000);
    expect(r.calls).toEqual(["ns/a"]);
    expect(queue.delayedCount).toBe(0);
    await c.stop();
  });

  it("skips the updates its filter rejects (its own status writes), keeps adds and deletes", async () => {
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const r = recorder();
    const c = runController({ name: "t", sources: [informer], reconciler: r, filter: generationChanged, log: silentLogger });
    await c.ready;
    const v1 = obj("a", { generation: 1, rv: "1" });
    const v2 = { ...obj("a", { generation: 1, rv: "2" }), status: { ready: true } };
    const v3 = obj("a", { generation: 2, rv: "3" });
    informer.update(v1, v2);
    await settle();
    expect(r.calls).toEqual([]);
    informer.update(v2, v3);
    await settle();
    informer.delete(v3);
    await settle();
    expect(r.calls).toEqual(["ns/a", "ns/a"]);
    await c.stop();
  });

  it("maps owned objects to their controller's key, with a filter of the source's own", async () => {
    const owners = new FakeInformer<Obj>();
    const owned = new FakeInformer<Obj>();
    owners.sync();
    owned.sync();
    const r = recorder();
    const c = runController({
      name: "t",
      sources: [owners, { informer: owned, toKeys: ownerKeys("ReplicaSet"), filter: (e) => e.type !== "delete" }],
      reconciler: r,
      log: silentLogger,
    });
    await c.ready;
    const pod = (name: string, owner?: { kind: string; name: string; controller?: boolean }) =>
      ({ ...obj(name), metadata: { name, namespace: "ns", ownerReferences: owner ? [owner] : [] } }) as Obj;
    owned.add(pod("p1", { kind: "ReplicaSet", name: "rs1", controller: true }));
    owned.add(pod("p2", { kind: "ReplicaSet", name: "rs2" })); // not the controller: ignored
    owned.add(pod("p3")); // no owner
    owned.delete(pod("p4", { kind: "ReplicaSet", name: "rs4", controller: true })); // filtered out
    await settle();
    expect(r.calls).toEqual(["ns/rs1"]);
    await c.stop();
  });

  it("stop: the reconcile in progress finishes, queued keys are dropped, later events are ignored", async () => {
    const informer = new FakeInformer<Obj>();
    informer.sync();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const calls: string[] = [];
    let sawAbort = false;
    const c = runController({
      name: "t",
      sources: [informer],
      log: silentLogger,
      reconciler: async (key, { signal }) => {
        calls.push(key);
        await gate;
        sawAbort = signal.aborted;
      },
    });
    await c.ready;
    informer.add(obj("a"));
    informer.add(obj("b"));
    await settle();
    expect(calls).toEqual(["ns/a"]);
    let stopped = false;
    const stopping = c.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    informer.add(obj("c"));
    release();
    await stopping;
    await c.done;
    expect(calls).toEqual(["ns/a"]);
    expect(sawAbort).toBe(true);
    expect(informer.handlers.size).toBe(0);
  });

  it("stop with drain reconciles what is queued first", async () => {
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const r = recorder(async () => {
      await settle();
    });
    const c = runController({ name: "t", sources: [informer], reconciler: r, log: silentLogger });
    await c.ready;
    for (const n of ["a", "b", "c"]) informer.add(obj(n));
    await c.stop({ drain: true });
    expect(r.calls).toEqual(["ns/a", "ns/b", "ns/c"]);
  });

  it("a stop before the sources synced starts no worker", async () => {
    const informer = new FakeInformer<Obj>();
    const r = recorder();
    const c = runController({ name: "t", sources: [informer], reconciler: r, log: silentLogger });
    informer.add(obj("a"));
    await c.stop();
    informer.sync();
    await settle();
    expect(r.calls).toEqual([]);
  });

  it("stops when its signal aborts", async () => {
    const informer = new FakeInformer<Obj>();
    informer.sync();
    const abort = new AbortController();
    const c = runController({ name: "t", sources: [informer], reconciler: recorder(), signal: abort.signal, log: silentLogger });
    await c.ready;
    abort.abort();
    await c.done;
    expect(c.queue.isShuttingDown).toBe(true);
  });

  it("ready rejects when the sources do not sync in time", async () => {
    const informer = {
      addEventHandler: () => () => undefined,
      start: () => undefined,
      waitForSync: (ms?: number) => new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`not synced in ${ms}`)), ms)),
    };
    const c = runController({ name: "t", sources: [informer], reconciler: recorder(), syncTimeoutMs: 10, log: silentLogger });
    await expect(c.ready).rejects.toThrow("not synced in 10");
    await c.stop();
  });
});
