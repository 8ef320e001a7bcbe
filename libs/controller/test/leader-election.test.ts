// Leader election against an in-memory lease store with the apiserver's optimistic concurrency, on a
// fake clock: the timing rules (renew, step-down deadline, expiry, release) checked step by step.
import { describe, expect, it } from "vitest";
import {
  FakeClock,
  LeaderElector,
  type LeaderElectionOptions,
  type Lease,
  type LeaseClient,
  leaseResource,
  silentLogger,
} from "../src/index.js";
import { FakeStore, apiError } from "./fakes.js";

const ref = leaseResource();
type Mode = "ok" | "fail" | "hang";

/** One candidate's view of the store, with its own network: working, failing, or hanging. */
function connection(store: FakeStore) {
  const state = { mode: "ok" as Mode };
  const gate = async (): Promise<void> => {
    if (state.mode === "fail") throw apiError(503, "ServiceUnavailable");
    if (state.mode === "hang") await new Promise(() => undefined);
  };
  const client: LeaseClient = {
    get: async (r, name, o) => (await gate(), store.get(r, name, o)),
    create: async (r, obj, o) => (await gate(), store.create(r, obj, o)),
    update: async (r, obj, o) => (await gate(), store.update(r, obj, o)),
  };
  return { client, state };
}

function candidate(store: FakeStore, clock: FakeClock, identity: string, extra: Partial<LeaderElectionOptions> = {}) {
  const { client, state } = connection(store);
  const events: string[] = [];
  let leadingSignal: AbortSignal | undefined;
  const elector = new LeaderElector({
    client,
    namespace: "default",
    name: "ctl",
    identity,
    clock,
    log: silentLogger,
    random: () => 0,
    onStartedLeading: (signal) => {
      leadingSignal = signal;
      events.push(`start@${clock.now() - t0}`);
    },
    onStoppedLeading: (reason) => events.push(`stop:${reason}@${clock.now() - t0}`),
    ...extra,
  });
  const t0 = clock.now();
  const running = elector.run();
  return { elector, state, events, running, signal: () => leadingSignal };
}

const lease = (store: FakeStore): Lease => structuredClone(store.objects.get("leases/default/ctl") as Lease);

/** Advances in small steps, checking after each that at most one candidate thinks it leads. */
async function run(clock: FakeClock, ms: number, electors: LeaderElector[], step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    await clock.advanceAsync(step);
    expect(electors.filter((e) => e.isLeader()).length).toBeLessThanOrEqual(1);
  }
}

describe("LeaderElector", () => {
  it("creates the missing lease and leads; renews it every retry period while the other waits", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    expect(a.elector.isLeader()).toBe(true);
    const first = lease(store);
    expect(first.spec).toMatchObject({ holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(first.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(first.spec?.acquireTime).toBe(first.spec?.renewTime);

    const b = candidate(store, clock, "b");
    await run(clock, 60_000, [a.elector, b.elector]);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.leader).toBe("a");
    const later = lease(store);
    expect(Date.parse(later.spec!.renewTime!) - Date.parse(first.spec!.renewTime!)).toBeGreaterThanOrEqual(58_000);
    expect(later.spec?.acquireTime).toBe(first.spec?.acquireTime);
    await a.elector.stop();
    await b.elector.stop();
  });

  it("releases the lease on stop, after the guarded work ended, so the other takes over at once", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    const b = candidate(store, clock, "b");
    await run(clock, 10_000, [a.elector, b.elector]);
    const stopping = a.elector.stop();
    await clock.advanceAsync(0);
    await stopping;
    expect(a.signal()?.aborted).toBe(true);
    expect(a.events).toEqual(["start@0", "stop:stopped@10000"]);
    expect(lease(store).spec?.holderIdentity).toBe("");
    // b retries every 2 s (jitter 0 here): it leads within one retry period, long before the 15 s expiry.
    await run(clock, 2_000, [a.elector, b.elector]);
    expect(b.elector.isLeader()).toBe(true);
    expect(lease(store).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    await b.elector.stop();
  });

  it("a leader that cannot renew steps down at the renew deadline; the other takes over only after expiry", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    const b = candidate(store, clock, "b");
    await run(clock, 4_000, [a.elector, b.elector]);
    const lastRenew = Date.parse(lease(store).spec!.renewTime!) - clock.now();
    a.state.mode = "fail";
    let steppedDown = -1;
    let tookOver = -1;
    for (let t = 0; t < 30_000; t += 100) {
      await clock.advanceAsync(100);
      expect(a.elector.isLeader() && b.elector.isLeader()).toBe(false);
      if (steppedDown < 0 && !a.elector.isLeader()) steppedDown = t + 100 + -lastRenew;
      if (tookOver < 0 && b.elector.isLeader()) tookOver = t + 100 + -lastRenew;
    }
    // Measured from a's last successful renew.
    expect(steppedDown).toBeGreaterThanOrEqual(10_000);
    expect(steppedDown).toBeLessThanOrEqual(10_000 + 2_000);
    expect(tookOver).toBeGreaterThan(15_000);
    expect(tookOver).toBeLessThanOrEqual(15_000 + 2_100);
    expect(a.events.at(-1)).toMatch(/^stop:lost/);
    await a.running;
    await b.elector.stop();
  });

  it("a leader whose requests hang still steps down at the deadline (a timer, not the request, decides)", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    a.state.mode = "hang";
    await clock.advanceAsync(9_999);
    expect(a.elector.isLeader()).toBe(true);
    await clock.advanceAsync(1);
    expect(a.elector.isLeader()).toBe(false);
    await a.running;
    expect(a.events).toEqual(["start@0", "stop:lost@10000"]);
  });

  it("a dead leader (no release, no renew) is replaced once its lease expires", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    const b = candidate(store, clock, "b");
    await clock.advanceAsync(3_000);
    // "Kill" a: its process would send nothing more, and is not sampled.
    a.state.mode = "hang";
    const renewed = Date.parse(lease(store).spec!.renewTime!);
    let at = -1;
    for (let t = 0; t < 20_000 && at < 0; t += 100) {
      await clock.advanceAsync(100);
      if (b.elector.isLeader()) at = clock.now() - renewed;
    }
    expect(at).toBeGreaterThan(15_000);
    expect(at).toBeLessThanOrEqual(17_100);
    expect(lease(store).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    await b.elector.stop();
  });

  it("a newcomer takes a lease whose renewTime is long past at once", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const old = new Date(clock.now() - 60_000).toISOString().replace("Z", "000Z");
    store.seed(ref, {
      apiVersion: "coordination.orch.io/v1",
      kind: "Lease",
      metadata: { name: "ctl", namespace: "default" },
      spec: { holderIdentity: "crashed", leaseDurationSeconds: 15, renewTime: old, acquireTime: old, leaseTransitions: 3 },
    } as Lease);
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    expect(a.elector.isLeader()).toBe(true);
    expect(lease(store).spec).toMatchObject({ holderIdentity: "a", leaseTransitions: 4 });
    await a.elector.stop();
  });

  it("two candidates racing for a free lease: exactly one wins (the other's write conflicts)", async () => {
    for (const seeded of [false, true]) {
      const store = new FakeStore();
      const clock = new FakeClock();
      if (seeded) {
        store.seed(ref, {
          apiVersion: "coordination.orch.io/v1",
          kind: "Lease",
          metadata: { name: "ctl", namespace: "default" },
          spec: { holderIdentity: "" },
        } as Lease);
      }
      const cs = ["a", "b", "c"].map((id) => candidate(store, clock, id));
      await clock.advanceAsync(0);
      expect(cs.filter((c) => c.elector.isLeader())).toHaveLength(1);
      await run(
        clock,
        20_000,
        cs.map((c) => c.elector),
      );
      expect(cs.filter((c) => c.elector.isLeader())).toHaveLength(1);
      for (const c of cs) await c.elector.stop();
    }
  });

  it("a leader that finds another holder on the lease steps down at once", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    store.touch(ref, "default", "ctl", (l: Lease) => (l.spec = { ...l.spec, holderIdentity: "usurper" }));
    await clock.advanceAsync(2_000);
    expect(a.elector.isLeader()).toBe(false);
    await a.running;
    expect(a.events).toEqual(["start@0", "stop:lost@2000"]);
    // Lost is lost: no release (the lease is someone else's).
    expect(lease(store).spec?.holderIdentity).toBe("usurper");
  });

  it("stopping a candidate that never led ends its campaign without touching the lease", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    await clock.advanceAsync(0);
    const b = candidate(store, clock, "b");
    await clock.advanceAsync(5_000);
    const before = lease(store);
    await b.elector.stop();
    expect(b.events).toEqual([]);
    expect(lease(store).spec?.holderIdentity).toBe(before.spec?.holderIdentity);
    await a.elector.stop();
  });

  it("a candidate whose requests hang keeps campaigning, and stops promptly", async () => {
    const store = new FakeStore();
    const clock = new FakeClock();
    const a = candidate(store, clock, "a");
    a.state.mode = "hang";
    await clock.advanceAsync(25_000);
    expect(a.elector.isLeader()).toBe(false);
    a.state.mode = "ok";
    await clock.advanceAsync(14_000);
    expect(a.elector.isLeader()).toBe(true);

    const b = candidate(store, clock, "b");
    b.state.mode = "hang";
    await clock.advanceAsync(1_000);
    let stopped = false;
    void b.elector.stop().then(() => (stopped = true));
    await clock.advanceAsync(0);
    expect(stopped).toBe(true);
    await a.elector.stop();
  });

  it("refuses timings that cannot be safe, and makes a hostname-based identity", () => {
    const client = {} as LeaseClient;
    const base = { client, namespace: "default", name: "x" };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow("leaseDuration");
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow("renewDeadline");
    const e1 = new LeaderElector(base);
    const e2 = new LeaderElector(base);
    expect(e1.identity).toMatch(/^.+_[0-9a-f]{8}$/);
    expect(e1.identity).not.toBe(e2.identity);
  });
});
