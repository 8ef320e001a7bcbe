// Leader election on the shared database: a PostgreSQL session-level advisory lock, held on a connection
// of its own. The server releases it the moment that session ends, so when the holder dies (SIGKILL
// closes its socket) another process takes it over at its next attempt; no lease to expire first.
import { createHash } from "node:crypto";
import type { Logger } from "@orch/log";
import pg from "pg";
import type { LeaderCallbacks, Leadership } from "../storage.js";

/** The first half of every lock key orch takes (`pg_try_advisory_lock(int, int)`): "orcl". */
const LOCK_CLASS = 0x6f72636c;

export interface AdvisoryLeadershipOptions {
  connection: pg.ClientConfig;
  /** How often a process without the lock tries again, and how often the holder checks its session. */
  retryMs: number;
  log: Logger;
  /** Called once the claim is given up. */
  onRelease?: () => void;
}

/** The lock's second key: 32 bits of the name's hash, the same in every process. */
const lockKey = (name: string): number => createHash("sha256").update(name).digest().readInt32BE(0);

export class AdvisoryLeadership implements Leadership {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private holding = false;
  private released = false;
  private attempt: Promise<void> | undefined;

  constructor(
    private readonly name: string,
    private readonly callbacks: LeaderCallbacks,
    private readonly options: AdvisoryLeadershipOptions,
  ) {
    this.tick();
    this.timer = setInterval(() => this.tick(), options.retryMs);
    this.timer.unref();
  }

  get held(): boolean {
    return this.holding;
  }

  private tick(): void {
    if (this.attempt || this.released) return;
    this.attempt = this.check()
      .catch((e) => this.drop(e as Error))
      .finally(() => (this.attempt = undefined));
  }

  /** Without the lock: try to take it. With it: make sure the session that holds it is still alive. */
  private async check(): Promise<void> {
    if (!this.client) {
      // A query that does not answer within the retry period counts as a lost session: a holder cut off
      // from the server stops before another process can have taken over.
      const client = new pg.Client({ ...this.options.connection, query_timeout: this.options.retryMs * 2, keepAlive: true });
      client.on("error", (e) => this.drop(e));
      await client.connect();
      this.client = client;
    }
    if (this.holding) {
      await this.client.query("SELECT 1");
      return;
    }
    const result = await this.client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS locked", [
      LOCK_CLASS,
      lockKey(this.name),
    ]);
    if (!result.rows[0]?.locked || this.released) return;
    this.holding = true;
    this.options.log.info(`leading: ${this.name}`);
    this.callbacks.acquired();
  }

  /** The session failed: whatever it held, the server releases; this process stops leading at once. */
  private drop(error: Error): void {
    const client = this.client;
    this.client = undefined;
    client?.end().catch(() => undefined);
    if (this.holding) {
      this.holding = false;
      this.options.log.warn(`no longer leading: ${this.name}`, { error: error.message });
      this.callbacks.lost();
    }
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.options.onRelease?.();
    clearInterval(this.timer);
    await this.attempt;
    const client = this.client;
    this.client = undefined;
    // Ending the session releases the lock for the next process.
    await client?.end().catch(() => undefined);
    if (this.holding) {
      this.holding = false;
      this.callbacks.lost();
    }
  }
}
