// The core of API Priority and Fairness, in spirit (k8s.io/apiserver pkg/util/flowcontrol): one budget of
// seats shared by priority levels, and inside each level one queue per flow (a user), served fairly.
//
// Seats. Each level has `guaranteedSeats` nobody else may take; the rest of the budget is a pool any level
// may borrow from while it is free. A level starts a request when it is below its guarantee, or when a seat
// is free beyond every other level's unused guarantee. So the seats in use never exceed the total, and a
// level's guarantee is always there for it at once (Kubernetes reaches a similar state by re-dividing
// lendable seats every few seconds; this does it on every start and finish, and never takes a seat back).
//
// Fairness. When a seat frees, the level below its guarantee goes first, then the level using the fewest
// seats for its shares; inside a level, the flow with the fewest requests executing, oldest waiter first.
// A flooding user therefore holds at most the seats nobody else is waiting for: another user's request
// waits for the next seat that frees, never behind the flood's queue (Kubernetes' fair queuing measures
// seat-seconds with virtual time; counting executing requests is the same idea without estimates).
//
// Bounds. A flow may have `flowQueueLimit` requests waiting and a level `levelQueueLimit`; beyond, or after
// `queueWaitMs` in the queue, a request is rejected (the filter answers 429).

export interface LevelSpec {
  name: string;
  /** The level's weight when seats of the pool are handed out (Kubernetes' nominalConcurrencyShares). */
  shares: number;
  /** Seats only this level may use. */
  guaranteedSeats: number;
}

export interface BudgetOptions {
  totalSeats: number;
  levels: readonly LevelSpec[];
  /** Requests one flow may have waiting in one level. */
  flowQueueLimit: number;
  /** Requests all flows may have waiting in one level. */
  levelQueueLimit: number;
  /** How long a request may wait for a seat. */
  queueWaitMs: number;
}

export type RejectionReason = "queue-full" | "wait-timeout" | "cancelled";

/** Why a request got no seat. */
export class Rejected extends Error {
  constructor(readonly reason: RejectionReason) {
    super(`request rejected: ${reason}`);
  }
}

/** A seat held by one executing request; `release` when it finishes (idempotent). */
export interface Seat {
  release(): void;
}

interface Waiter {
  /** Arrival order: among equals, the oldest waiter goes first. */
  seq: number;
  start(seat: Seat): void;
  reject(reason: RejectionReason): void;
}

class Flow {
  executing = 0;
  readonly waiting: Waiter[] = [];
  constructor(readonly key: string) {}
}

class Level {
  executing = 0;
  waitingCount = 0;
  readonly flows = new Map<string, Flow>();
  constructor(readonly spec: LevelSpec) {}

  flow(key: string): Flow {
    let flow = this.flows.get(key);
    if (!flow) this.flows.set(key, (flow = new Flow(key)));
    return flow;
  }

  /** Forgets a flow with nothing executing or waiting, so that the map holds active users only. */
  forgetIfIdle(flow: Flow): void {
    if (flow.executing === 0 && flow.waiting.length === 0) this.flows.delete(flow.key);
  }

  get unusedGuarantee(): number {
    return Math.max(0, this.spec.guaranteedSeats - this.executing);
  }
}

export interface LevelUsage {
  executing: number;
  waiting: number;
  flows: number;
}

export class ConcurrencyBudget {
  private readonly levels = new Map<string, Level>();
  private executing = 0;
  private seq = 0;

  constructor(private readonly options: BudgetOptions) {
    const guaranteed = options.levels.reduce((sum, l) => sum + l.guaranteedSeats, 0);
    if (options.levels.some((l) => !(l.shares > 0))) throw new Error("every priority level needs shares above 0");
    if (guaranteed > options.totalSeats) throw new Error(`guaranteed seats (${guaranteed}) exceed the total (${options.totalSeats})`);
    for (const spec of options.levels) this.levels.set(spec.name, new Level(spec));
  }

  /** A seat at once if the level has one free and nobody waiting in it; otherwise undefined (then `wait`). */
  tryAcquire(levelName: string, flowKey: string): Seat | undefined {
    const level = this.level(levelName);
    if (level.waitingCount > 0 || !this.canStart(level)) return undefined;
    return this.start(level, level.flow(flowKey));
  }

  /**
   * Queues the request in its flow until a seat is its turn. Rejects with `queue-full` at once, with
   * `wait-timeout` after `queueWaitMs`, with `cancelled` when `signal` aborts (the client left).
   */
  wait(levelName: string, flowKey: string, signal?: AbortSignal): Promise<Seat> {
    const level = this.level(levelName);
    const flow = level.flow(flowKey);
    const { flowQueueLimit, levelQueueLimit, queueWaitMs } = this.options;
    if (flow.waiting.length >= flowQueueLimit || level.waitingCount >= levelQueueLimit) {
      level.forgetIfIdle(flow);
      return Promise.reject(new Rejected("queue-full"));
    }
    if (signal?.aborted) {
      level.forgetIfIdle(flow);
      return Promise.reject(new Rejected("cancelled"));
    }
    return new Promise<Seat>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        flow.waiting.splice(flow.waiting.indexOf(waiter), 1);
        level.waitingCount--;
      };
      const waiter: Waiter = {
        seq: this.seq++,
        start: (seat) => {
          leave();
          resolve(seat);
        },
        reject: (reason) => {
          leave();
          level.forgetIfIdle(flow);
          reject(new Rejected(reason));
        },
      };
      const onAbort = () => waiter.reject("cancelled");
      const timer = setTimeout(() => waiter.reject("wait-timeout"), queueWaitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      flow.waiting.push(waiter);
      level.waitingCount++;
      // Normally a no-op (a caller waits because `tryAcquire` found no seat); never leaves a waiter behind a free seat.
      this.dispatch();
    });
  }

  /** What each level is doing now (for tests and metrics). */
  usage(): Record<string, LevelUsage> {
    const out: Record<string, LevelUsage> = {};
    for (const [name, l] of this.levels) out[name] = { executing: l.executing, waiting: l.waitingCount, flows: l.flows.size };
    return out;
  }

  private level(name: string): Level {
    const level = this.levels.get(name);
    if (!level) throw new Error(`no priority level ${JSON.stringify(name)}`);
    return level;
  }

  /** Below its guarantee, or a seat free beyond every level's unused guarantee (its own is 0 then). */
  private canStart(level: Level): boolean {
    if (level.executing < level.spec.guaranteedSeats) return true;
    let reserved = 0;
    for (const l of this.levels.values()) reserved += l.unusedGuarantee;
    return this.executing + reserved < this.options.totalSeats;
  }

  private start(level: Level, flow: Flow): Seat {
    level.executing++;
    flow.executing++;
    this.executing++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        level.executing--;
        flow.executing--;
        this.executing--;
        level.forgetIfIdle(flow);
        this.dispatch();
      },
    };
  }

  /** Starts waiting requests while seats allow, in the order the header comment describes. */
  private dispatch(): void {
    for (;;) {
      const level = this.nextLevel();
      if (!level) return;
      const flow = nextFlow(level);
      const waiter = flow.waiting[0]!;
      waiter.start(this.start(level, flow));
    }
  }

  private nextLevel(): Level | undefined {
    let best: Level | undefined;
    for (const l of this.levels.values()) {
      if (l.waitingCount === 0 || !this.canStart(l)) continue;
      if (l.executing < l.spec.guaranteedSeats) return l;
      if (!best || l.executing / l.spec.shares < best.executing / best.spec.shares) best = l;
    }
    return best;
  }
}

/** The flow with the fewest requests executing; among those, the one whose first waiter came first. */
function nextFlow(level: Level): Flow {
  let best: Flow | undefined;
  for (const f of level.flows.values()) {
    const head = f.waiting[0];
    if (!head) continue;
    if (!best || f.executing < best.executing || (f.executing === best.executing && head.seq < best.waiting[0]!.seq)) best = f;
  }
  return best!;
}
