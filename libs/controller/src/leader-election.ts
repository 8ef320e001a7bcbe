// Leader election on a Lease object, after client-go's tools/leaderelection (LeaseLock): replicas of a
// controller compete for one Lease; the holder renews it every retryPeriod, the others take it once it
// has expired or was released. Every write carries the resourceVersion that was read, so of two
// candidates racing for the same free lease the apiserver accepts exactly one (the other gets Conflict).
//
// Safety comes from the timings: a leader that cannot renew steps down `renewDeadline` after its last
// successful renew, while the others wait `leaseDuration` (> renewDeadline) after it before taking over,
// so the old leader has stopped acting before a new one starts.
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { type ApiClient, type KubeObject, type ResourceRef, isAlreadyExists, isConflict, isNotFound } from "@orch/client";
import { rfc3339Micro } from "@orch/machinery";
import { type Clock, type TimerHandle, realClock } from "./clock.js";
import { type Logger, silentLogger } from "@orch/log";

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** `coordination.<apiDomain>/v1` leases; the domain comes from the naming profile (`orch.io`, `k8s.io`). */
export const leaseResource = (apiDomain = "orch.io"): ResourceRef => ({
  group: `coordination.${apiDomain}`,
  version: "v1",
  plural: "leases",
  namespaced: true,
});

/** The part of ApiClient leader election uses. */
export type LeaseClient = Pick<ApiClient, "get" | "create" | "update">;

export interface LeaderElectionOptions {
  client: LeaseClient;
  /** The Lease: `namespace/name`; one per controller app. */
  namespace: string;
  name: string;
  /** Default `leaseResource("orch.io")`. */
  ref?: ResourceRef;
  /** Unique per replica; default hostname, pid and a random suffix (a restarted process is a new candidate). */
  identity?: string;
  /** How long a lease stays valid after its last renew; default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it steps down; default 10 s. */
  renewDeadlineMs?: number;
  /** Between attempts to acquire or renew; default 2 s. */
  retryPeriodMs?: number;
  /** Clear the holder when stopping as leader, so another replica takes over at once; default true. */
  releaseOnStop?: boolean;
  /**
   * Called on becoming leader. `signal` aborts when leadership ends (stop or loss). A returned promise
   * must settle soon after: the lease is released only once the work it guards has stopped.
   */
  onStartedLeading?: (signal: AbortSignal) => void | Promise<void>;
  /** Called once leadership has ended (after the work's promise settled), whether lost or given up. */
  onStoppedLeading?: (reason: "lost" | "stopped") => void;
  /** Called when another candidate (or this one) is seen to hold the lease. */
  onNewLeader?: (identity: string) => void;
  clock?: Clock;
  log?: Logger;
  /** For tests: jitter source (0..1) for the acquire retry period. */
  random?: () => number;
}

/** client-go's JitterFactor: candidates retry between 1x and 2.2x the retry period, so they do not move in lock step. */
const JITTER_FACTOR = 1.2;

/** Host, process and a random part: unique per process, and it says which process leads. */
export function defaultIdentity(): string {
  return `${hostname()}_${process.pid}_${randomBytes(4).toString("hex")}`;
}

type Attempt = "acquired" | "held" | "failed";

export class LeaderElector {
  readonly identity: string;
  private readonly client: LeaseClient;
  private readonly ref: ResourceRef;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;

  private leading = false;
  private stopped = false;
  private runPromise: Promise<void> | undefined;
  private readonly stopWaiters = new Set<() => void>();

  /** The last lease read or written, and when (local clock) its content was first seen. */
  private observed: Lease | undefined;
  private observedTime = 0;
  private reportedLeader: string | undefined;
  /** When the last successful acquire/renew was sent: the lease counts from then. */
  private lastRenew = 0;

  constructor(private readonly options: LeaderElectionOptions) {
    this.client = options.client;
    this.ref = options.ref ?? leaseResource();
    this.identity = options.identity ?? defaultIdentity();
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.clock = options.clock ?? realClock;
    this.log = options.log ?? silentLogger;
    this.random = options.random ?? Math.random;
    if (!(this.leaseDurationMs > this.renewDeadlineMs)) throw new Error("leaseDuration must be greater than renewDeadline");
    if (!(this.renewDeadlineMs > JITTER_FACTOR * this.retryPeriodMs))
      throw new Error(`renewDeadline must be greater than retryPeriod*${JITTER_FACTOR}`);
    if (!(this.retryPeriodMs > 0)) throw new Error("retryPeriod must be greater than zero");
    if (!this.identity) throw new Error("leader election needs an identity");
  }

  /** Whether this candidate holds the lease and has not stepped down. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen on the lease (possibly this candidate), if any. */
  get leader(): string | undefined {
    return this.observed?.spec?.holderIdentity || undefined;
  }

  /**
   * Campaigns until elected, then leads until leadership is lost or `stop` is called. Resolves when it
   * is over; a candidate runs once (after a loss, start a new process or elector, as client-go's users do).
   */
  run(): Promise<void> {
    this.runPromise ??= this.campaign();
    return this.runPromise;
  }

  /** Stops campaigning or leading; as leader, waits for the guarded work to end, then releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.stopWaiters]) wake();
    await this.runPromise;
  }

  private async campaign(): Promise<void> {
    let announced = false;
    let acquired = false;
    while (!this.stopped) {
      // Bounded, so a hung request neither stalls the campaign nor keeps `stop` waiting. (Should a write
      // cut off here land after all, the next round finds this identity on the lease and renews it.)
      const attempt = this.beforeDeadline(this.tryAcquireOrRenew(), this.clock.now() + this.renewDeadlineMs);
      acquired = (await attempt) === "acquired";
      if (acquired) break;
      if (!announced && this.leader && this.leader !== this.identity) {
        this.log.info(`waiting for leadership of lease ${this.leaseKey()} (held by ${this.leader})`);
        announced = true;
      }
      await this.sleep(this.retryPeriodMs * (1 + this.random() * JITTER_FACTOR));
    }
    if (this.stopped) {
      // Stopped while the winning write was in flight: give the lease straight back.
      if (acquired && this.options.releaseOnStop !== false) await this.release();
      return;
    }

    this.leading = true;
    this.log.info(`became leader (${this.identity}) of lease ${this.leaseKey()}`);
    const leadership = new AbortController();
    const work = Promise.resolve()
      .then(() => this.options.onStartedLeading?.(leadership.signal))
      .catch((e) => this.log.error("leading failed", e));

    const outcome = await this.renewLoop();
    // Stop acting first (synchronously, before anything else can run), then tidy up.
    this.leading = false;
    leadership.abort();
    if (outcome === "lost") this.log.error(`lost leadership of lease ${this.leaseKey()}`);
    await work;
    if (outcome === "stopped" && this.options.releaseOnStop !== false) await this.release();
    this.options.onStoppedLeading?.(outcome);
  }

  /** Renews every retryPeriod; returns when stopped, or when renewing has failed for renewDeadline. */
  private async renewLoop(): Promise<"lost" | "stopped"> {
    for (;;) {
      await this.sleep(this.retryPeriodMs);
      if (this.stopped) return "stopped";
      const deadline = this.lastRenew + this.renewDeadlineMs;
      const attempt = await this.beforeDeadline(this.tryAcquireOrRenew(true), deadline);
      if (this.stopped) return "stopped";
      if (attempt === "acquired") continue;
      // Someone else holds it (it expired under us): step down at once rather than wait for the deadline.
      if (attempt === "held") return "lost";
      if (this.clock.now() >= deadline) return "lost";
    }
  }

  /**
   * One round: read the lease; create it if missing; take it if free or expired; renew it if ours. A write
   * with a stale resourceVersion fails (Conflict), so two candidates can never both succeed.
   */
  private async tryAcquireOrRenew(renewing = false): Promise<Attempt> {
    const start = this.clock.now();
    const now = rfc3339Micro(new Date(start));
    const durationSeconds = Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
    const { namespace, name } = this.options;
    let current: Lease;
    try {
      current = await this.client.get<Lease>(this.ref, name, { namespace });
    } catch (e) {
      if (!isNotFound(e)) return this.failed("reading", e);
      try {
        const created = await this.client.create<Lease>(
          this.ref,
          {
            apiVersion: `${this.ref.group}/${this.ref.version}`,
            kind: "Lease",
            metadata: { name, namespace },
            spec: {
              holderIdentity: this.identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
          { namespace },
        );
        return this.succeeded(created, start);
      } catch (err) {
        // AlreadyExists: another candidate created it first; it won this round.
        return isAlreadyExists(err) ? "failed" : this.failed("creating", err);
      }
    }

    this.observe(current, start);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    if (holder && holder !== this.identity && !this.expired(spec, start)) return "held";
    // A leader that finds another holder, even an expired one, has been replaced: it must not take back.
    if (renewing && holder !== this.identity) return "held";

    const ours = holder === this.identity;
    const desired: Lease = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: ours ? (spec.acquireTime ?? now) : now,
        renewTime: now,
        leaseTransitions: ours ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      // `current` carries its resourceVersion: this write succeeds only if nobody wrote since the read.
      return this.succeeded(await this.client.update<Lease>(this.ref, desired, { namespace }), start);
    } catch (e) {
      return isConflict(e) ? "failed" : this.failed(ours ? "renewing" : "acquiring", e);
    }
  }

  /**
   * A held lease expires `leaseDurationSeconds` after its renewTime, or, judged by this process's own
   * clock (client-go's rule, immune to clock skew), that long after its content last changed here.
   */
  private expired(spec: LeaseSpec, now: number): boolean {
    const durationMs = (spec.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
    const renewed = Date.parse(spec.renewTime ?? "");
    if (Number.isFinite(renewed) && renewed + durationMs < now) return true;
    return this.observedTime + durationMs < now;
  }

  private observe(lease: Lease, now: number): void {
    if (lease.metadata?.resourceVersion !== this.observed?.metadata?.resourceVersion || !this.observed) {
      this.observed = lease;
      this.observedTime = now;
    }
    const holder = lease.spec?.holderIdentity;
    if (holder && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      if (holder !== this.identity) this.log.info(`leader is ${holder}`);
      this.options.onNewLeader?.(holder);
    }
  }

  private succeeded(lease: Lease, start: number): Attempt {
    this.observe(lease, start);
    this.lastRenew = start;
    return "acquired";
  }

  private failed(what: string, e: unknown): Attempt {
    this.log.error(`${what} lease ${this.leaseKey()} failed`, e);
    return "failed";
  }

  /** Gives up leadership on the server: holder cleared, so candidates need not wait for expiry. */
  private async release(): Promise<void> {
    const { namespace, name } = this.options;
    const deadline = this.clock.now() + this.renewDeadlineMs;
    for (let attempt = 0; attempt < 3; attempt++) {
      const released = this.beforeDeadline(
        (async (): Promise<Attempt> => {
          const current = await this.client.get<Lease>(this.ref, name, { namespace });
          if (current.spec?.holderIdentity !== this.identity) return "held";
          const now = rfc3339Micro(new Date(this.clock.now()));
          await this.client.update<Lease>(
            this.ref,
            { ...current, spec: { ...current.spec, holderIdentity: "", leaseDurationSeconds: 1, acquireTime: now, renewTime: now } },
            { namespace },
          );
          this.log.info(`released lease ${this.leaseKey()}`);
          return "acquired";
        })().catch((e): Attempt => (isConflict(e) ? "failed" : this.failed("releasing", e))),
        deadline,
        false,
      );
      const outcome = await released;
      if (outcome !== "failed" || this.clock.now() >= deadline) return;
    }
  }

  /** The attempt's outcome, or "failed" once the deadline (or a stop, if `stoppable`) comes first. */
  private beforeDeadline(attempt: Promise<Attempt>, deadline: number, stoppable = true): Promise<Attempt> {
    return new Promise<Attempt>((resolve) => {
      let timer: TimerHandle | undefined;
      const finish = (outcome: Attempt): void => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        this.stopWaiters.delete(onStop);
        resolve(outcome);
      };
      const onStop = (): void => finish("failed");
      timer = this.clock.setTimeout(() => finish("failed"), deadline - this.clock.now());
      if (stoppable) this.stopWaiters.add(onStop);
      attempt.then(finish, () => finish("failed"));
    });
  }

  /** Waits on the injected clock; a stop ends the wait early. */
  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        this.clock.clearTimeout(timer);
        this.stopWaiters.delete(wake);
        resolve();
      };
      const timer = this.clock.setTimeout(wake, ms);
      this.stopWaiters.add(wake);
    });
  }

  private leaseKey(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }
}
