// The core of flow control without a server: seats, per-user queues, fairness, rejections, the watch
// counter, and how requests are classified. The real apiserver's answers are in flow-control.test.ts.
import { namingProfile } from "@orch/api";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConcurrencyBudget, Rejected, type Seat } from "../src/flow-control/concurrency-budget.js";
import { PRIORITY_LEVELS, budgetOptions, classify, flowControlDefaults } from "../src/flow-control/priority-levels.js";
import { WatchCounter } from "../src/flow-control/watch-limit.js";
import { configFromEnv } from "../src/config.js";
import type { ResourceRequest } from "../src/http/request-info.js";

const oneLevel = (totalSeats: number, o: { flowQueueLimit?: number; levelQueueLimit?: number; queueWaitMs?: number } = {}) =>
  new ConcurrencyBudget({
    totalSeats,
    levels: [{ name: "l", shares: 1, guaranteedSeats: 0 }],
    flowQueueLimit: o.flowQueueLimit ?? 100,
    levelQueueLimit: o.levelQueueLimit ?? 1000,
    queueWaitMs: o.queueWaitMs ?? 60_000,
  });

/** A queued request whose outcome the test can read without awaiting it. */
function queued(budget: ConcurrencyBudget, flow: string, signal?: AbortSignal, level = "l") {
  const outcome: { seat?: Seat; rejected?: string } = {};
  const done = budget.wait(level, flow, signal).then(
    (seat) => void (outcome.seat = seat),
    (e: unknown) => void (outcome.rejected = e instanceof Rejected ? e.reason : String(e)),
  );
  return Object.assign(outcome, { done });
}

/** Lets settled promises run their callbacks. */
const settle = () => new Promise<void>((r) => setImmediate(r));

function take(budget: ConcurrencyBudget, flow: string, n: number, level = "l"): Seat[] {
  const seats: Seat[] = [];
  for (let i = 0; i < n; i++) {
    const seat = budget.tryAcquire(level, flow);
    if (!seat) throw new Error(`no seat for request ${i + 1} of ${flow}`);
    seats.push(seat);
  }
  return seats;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("ConcurrencyBudget", () => {
  it("hands out the total and no more; a released seat is free again, and releasing twice frees one", () => {
    const budget = oneLevel(3);
    const seats = take(budget, "alice", 3);
    expect(budget.tryAcquire("l", "bob")).toBeUndefined();
    seats[0]!.release();
    seats[0]!.release();
    expect(budget.tryAcquire("l", "bob")).toBeDefined();
    expect(budget.tryAcquire("l", "bob")).toBeUndefined();
  });

  it("gives a freed seat to the user with the fewest executing, not to the flood's older queue", async () => {
    const budget = oneLevel(4);
    const flood = take(budget, "alice", 4);
    const aliceQueue = Array.from({ length: 10 }, () => queued(budget, "alice"));
    const bob = [queued(budget, "bob"), queued(budget, "bob"), queued(budget, "bob")];

    flood[0]!.release();
    await settle();
    expect(bob.map((b) => b.seat !== undefined)).toEqual([true, false, false]);
    expect(aliceQueue.some((a) => a.seat)).toBe(false);

    // Alice 2 executing, Bob 1: Bob again, up to his half of the seats.
    flood[1]!.release();
    await settle();
    expect(bob.map((b) => b.seat !== undefined)).toEqual([true, true, false]);
    expect(aliceQueue.some((a) => a.seat)).toBe(false);

    // Alice 1, Bob 2: now Alice's oldest waiter.
    flood[2]!.release();
    await settle();
    expect(aliceQueue.map((a) => a.seat !== undefined).indexOf(true)).toBe(0);
    expect(aliceQueue.filter((a) => a.seat)).toHaveLength(1);
    expect(budget.usage().l).toEqual({ executing: 4, waiting: 10, flows: 2 });
  });

  it("rejects a request when its user's queue is full, while another user still queues", async () => {
    const budget = oneLevel(1, { flowQueueLimit: 2 });
    take(budget, "alice", 1);
    const waiting = [queued(budget, "alice"), queued(budget, "alice")];
    const third = queued(budget, "alice");
    const bob = queued(budget, "bob");
    await settle();
    expect(third.rejected).toBe("queue-full");
    expect(waiting.every((w) => !w.rejected) && !bob.rejected).toBe(true);
    expect(budget.usage().l).toEqual({ executing: 1, waiting: 3, flows: 2 });
  });

  it("rejects beyond the level's queue limit, whoever is asking", async () => {
    const budget = oneLevel(1, { flowQueueLimit: 5, levelQueueLimit: 2 });
    take(budget, "alice", 1);
    const [a, b, c] = [queued(budget, "alice"), queued(budget, "bob"), queued(budget, "carol")];
    await settle();
    expect([a.rejected, b.rejected, c.rejected]).toEqual([undefined, undefined, "queue-full"]);
  });

  it("rejects a request that waited longer than the queue wait, and forgets it", async () => {
    vi.useFakeTimers();
    const budget = oneLevel(1, { queueWaitMs: 15_000 });
    const [held] = take(budget, "alice", 1);
    const waiting = queued(budget, "bob");
    await vi.advanceTimersByTimeAsync(14_999);
    expect(waiting.rejected).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(waiting.rejected).toBe("wait-timeout");
    expect(budget.usage().l).toEqual({ executing: 1, waiting: 0, flows: 1 });
    held!.release();
    expect(budget.usage().l).toEqual({ executing: 0, waiting: 0, flows: 0 });
  });

  it("drops a waiting request whose client left", async () => {
    const budget = oneLevel(1);
    const [held] = take(budget, "alice", 1);
    const leaving = new AbortController();
    const waiting = queued(budget, "bob", leaving.signal);
    const next = queued(budget, "carol");
    leaving.abort();
    await settle();
    expect(waiting.rejected).toBe("cancelled");
    held!.release();
    await settle();
    expect(next.seat).toBeDefined();
  });

  it("keeps each level's guaranteed seats for it while another level borrows the rest", async () => {
    const budget = new ConcurrencyBudget({
      totalSeats: 4,
      levels: [
        { name: "system", shares: 1, guaranteedSeats: 1 },
        { name: "users", shares: 1, guaranteedSeats: 1 },
      ],
      flowQueueLimit: 100,
      levelQueueLimit: 100,
      queueWaitMs: 60_000,
    });
    // Users: their 1 seat and the pool of 2, not the system level's guaranteed seat.
    const users = take(budget, "alice", 3, "users");
    expect(budget.tryAcquire("users", "bob")).toBeUndefined();
    const system = take(budget, "controller", 1, "system");
    // The system level is at its guarantee and the pool is taken: it waits like anybody.
    const waiting = queued(budget, "controller", undefined, "system");
    const usersWaiting = queued(budget, "bob", undefined, "users");
    users[0]!.release();
    await settle();
    // A pool seat goes to the level using fewer seats for its shares: system has 1, users 2.
    expect(waiting.seat).toBeDefined();
    expect(usersWaiting.seat).toBeUndefined();
    system[0]!.release();
    await settle();
    expect(usersWaiting.seat).toBeDefined();
  });

  it("refuses guarantees larger than the total", () => {
    expect(
      () =>
        new ConcurrencyBudget({
          totalSeats: 1,
          levels: [{ name: "a", shares: 1, guaranteedSeats: 2 }],
          flowQueueLimit: 1,
          levelQueueLimit: 1,
          queueWaitMs: 1,
        }),
    ).toThrow(/exceed the total/);
  });
});

describe("priority levels", () => {
  it("divide Kubernetes' default 600 seats by its shares, guaranteeing the part a level may not lend", () => {
    const options = budgetOptions(flowControlDefaults, 15_000);
    expect(options.totalSeats).toBe(600);
    expect(Object.fromEntries(options.levels.map((l) => [l.name, l.guaranteedSeats]))).toEqual({
      "leader-election": 35,
      "workload-high": 70,
      "workload-low": 35,
      "global-default": 35,
    });
    expect(options.flowQueueLimit).toBe(50);
  });

  it("never guarantee more than the total, however small", () => {
    for (const total of [1, 2, 3, 7, 11, 170]) {
      const options = budgetOptions({ ...flowControlDefaults, maxRequestsInflight: total, maxMutatingRequestsInflight: 0 }, 1);
      expect(options.levels.reduce((sum, l) => sum + l.guaranteedSeats, 0)).toBeLessThanOrEqual(total);
      expect(() => new ConcurrencyBudget(options)).not.toThrow();
    }
  });

  const profile = namingProfile("orch");
  const lease: ResourceRequest = {
    group: profile.group("coordination"),
    version: "v1",
    namespace: "default",
    resource: "leases",
    name: "csr-signer",
    subresource: "",
    verb: "update",
  };
  const pods: ResourceRequest = { ...lease, group: "", resource: "pods", name: "", verb: "list" };

  it("classify system:masters as exempt, orch's controllers, service accounts and everyone else", () => {
    const level = (username: string, groups: string[], info: ResourceRequest) => classify({ username, groups }, info, profile).level;
    expect(level("admin", ["system:masters", "system:authenticated"], pods)).toBe(PRIORITY_LEVELS.exempt);
    expect(level("system:orch:csr-signer", ["system:authenticated"], lease)).toBe(PRIORITY_LEVELS.leaderElection);
    expect(level("system:orch:csr-signer", ["system:authenticated"], { ...lease, verb: "list" })).toBe(PRIORITY_LEVELS.workloadHigh);
    expect(level("system:orch:csr-signer", ["system:authenticated"], pods)).toBe(PRIORITY_LEVELS.workloadHigh);
    expect(level("system:serviceaccount:default:app", ["system:serviceaccounts"], lease)).toBe(PRIORITY_LEVELS.workloadLow);
    expect(level("alice", ["system:authenticated"], pods)).toBe(PRIORITY_LEVELS.globalDefault);
  });
});

describe("WatchCounter", () => {
  it("limits watches per user and in all; an exempt user is counted but never refused", () => {
    const watches = new WatchCounter({ total: 3, perUser: 2 });
    const alice = [watches.tryOpen("alice"), watches.tryOpen("alice")];
    expect(watches.tryOpen("alice")).toBeUndefined();
    const bob = watches.tryOpen("bob");
    expect(bob).toBeDefined();
    expect(watches.tryOpen("carol")).toBeUndefined();
    const admin = watches.tryOpen("admin", true);
    expect(admin).toBeDefined();
    expect(watches.count()).toBe(4);

    alice[0]!();
    alice[0]!();
    admin!();
    expect(watches.count("alice")).toBe(1);
    expect(watches.tryOpen("carol")).toBeDefined();
    expect(watches.tryOpen("dave")).toBeUndefined();
  });
});

describe("settings", () => {
  it("come from Kubernetes' flag names and orch's own, with Kubernetes' defaults", () => {
    expect(configFromEnv({}).flowControl).toEqual(flowControlDefaults);
    expect(
      configFromEnv({
        ORCH_MAX_REQUESTS_INFLIGHT: "10",
        ORCH_MAX_MUTATING_REQUESTS_INFLIGHT: "0",
        ORCH_FLOW_QUEUE_LENGTH_LIMIT: "0",
        ORCH_MAX_WATCHES: "7",
        ORCH_MAX_WATCHES_PER_USER: "3",
      }).flowControl,
    ).toEqual({ maxRequestsInflight: 10, maxMutatingRequestsInflight: 0, queueLengthLimit: 0, maxWatches: 7, maxWatchesPerUser: 3 });
    expect(() => configFromEnv({ ORCH_MAX_REQUESTS_INFLIGHT: "0", ORCH_MAX_MUTATING_REQUESTS_INFLIGHT: "0" })).toThrow(
      /add up to something positive/,
    );
    expect(() => configFromEnv({ ORCH_MAX_WATCHES_PER_USER: "-1" })).toThrow(/ORCH_MAX_WATCHES_PER_USER must be a non-negative integer/);
  });
});
