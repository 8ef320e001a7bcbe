import { type Logger, createLogger } from "@orch/log";
import { type SQL, and, eq, sql } from "drizzle-orm";
import { type NodePgDatabase, drizzle } from "drizzle-orm/node-postgres";
import { PgDialect } from "drizzle-orm/pg-core";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import {
  type Change,
  type ChangeType,
  CompactedError,
  type CompactionPolicy,
  type CompactionResult,
  KeyExistsError,
  KeyNotFoundError,
  type KubeObject,
  type LeaderCallbacks,
  type Leadership,
  type ListQuery,
  type ListResult,
  type ObjectKey,
  type Position,
  RevisionConflictError,
  type ServingStorage,
  type StorageStatistics,
  type StoredObject,
  type StoredValue,
  UnreadableValueError,
  type ValueTransformer,
  type ValueTransformers,
  committedChange,
  encodeForStorage,
  scanSize,
  storedJson,
  storedObject,
} from "../storage.js";
import { CommitDelivery } from "../commit-delivery.js";
import { AdvisoryLeadership } from "./advisory-lock.js";
import { counters, objects } from "./schema.js";

export interface PostgresOptions {
  /** `postgres://user@host:port/database`; the database must exist, its tables are created here. */
  url: string;
  /** Where a failing commit listener is reported (default a logger named `storage`). */
  log?: Logger;
  /** How each resource's values are stored (encryption at rest); default: plain JSON text for all. */
  transformers?: ValueTransformers;
  /** Connections kept open: reads share them, and a group commit takes one at a time. Default 8. */
  maxConnections?: number;
  /**
   * How often the log is read for commits of other processes on the same database, besides when they
   * announce them (LISTEN/NOTIFY): the safety net for a lost notification or connection. Default 1000 ms.
   */
  followIntervalMs?: number;
  /**
   * How often a process that does not hold a leadership lock (`lead`) tries to take it, and how often the
   * holder checks that its session lives. Default 1000 ms.
   */
  leaderRetryMs?: number;
}

/**
 * How long a connection may take to open: an unreachable server fails start-up, or the write waiting
 * for a connection, within this time instead of after the system's TCP timeout (minutes).
 */
const CONNECT_TIMEOUT_MS = 10_000;

/** How connections name themselves in `pg_stat_activity`, for an operator looking at the server. */
const APPLICATION_NAME = "orch-apiserver";

/** The key of the advisory lock that lets one process at a time migrate a shared database. */
const MIGRATION_LOCK = 0x6f726368; // "orch"

/** The channel on which each group commit announces `<writer id>:<last revision>` to the other processes. */
const COMMIT_CHANNEL = "orch_commits";

/** Changes read per query while catching up with other processes' commits. */
const FOLLOW_BATCH = 1000;

/** How long to wait before reconnecting the notification connection after it failed. */
const RECONNECT_DELAY_MS = 1000;

const CHANGE_COLUMNS = "revision, resource, namespace, name, type, value, value_bytes, prev_value, prev_value_bytes";

function migrationsFolder(): string {
  // As SqliteStorage's: beside the bundle when one ships them, otherwise through the package.
  const beside = join(dirname(fileURLToPath(import.meta.url)), "migrations", "postgres");
  if (existsSync(beside)) return beside;
  const pkg = createRequire(import.meta.url).resolve("@orch/storage/package.json");
  return join(dirname(pkg), "migrations", "postgres");
}

/** A transaction or the pool: whatever runs a statement. */
type Executor = Pick<NodePgDatabase, "execute">;

/** Runs a statement of the write path as a named prepared statement on the group's connection. */
type WriteStatement = <R extends Record<string, unknown>>(name: string, statement: SQL) => Promise<pg.QueryResult<R>>;

interface QueuedWrite {
  run: (exec: WriteStatement, revision: number) => Promise<Change>;
  resolve: (change: Change) => void;
  reject: (error: unknown) => void;
  restore: () => void;
}

/** A value as two nullable columns: JSON text in `text`, transformed bytes in `bytes`. */
interface ValueColumns {
  text: string | null;
  bytes: Buffer | null;
}
const toColumns = (stored: StoredValue): ValueColumns =>
  typeof stored === "string" ? { text: stored, bytes: null } : { text: null, bytes: stored };
const fromColumns = (text: string | null, bytes: Buffer | null): StoredValue | undefined => text ?? bytes ?? undefined;

/** A row as scanned, before its value is read back into JSON. */
type ScannedRow = {
  resource: string;
  namespace: string;
  name: string;
  revision: string;
  value: string | null;
  value_bytes: Buffer | null;
};
type ChangeRow = ScannedRow & {
  type: ChangeType;
  prev_value: string | null;
  prev_value_bytes: Buffer | null;
};

/**
 * The Storage contract on PostgreSQL, with the schema and semantics of SqliteStorage.
 *
 * One writer at a time per database: every group commit first locks the `revision` counter row
 * (`SELECT … FOR UPDATE`) and writes it back in the same transaction, so revisions are assigned in
 * commit order even when a second process writes to the same database (it waits for the lock). Within
 * a process writes are queued and committed in groups, as SqliteStorage does. A write that fails
 * (duplicate key, stale base) raises no SQL error — `ON CONFLICT DO NOTHING`, `WHERE revision = base` —
 * so it leaves the group's transaction usable and spends no revision.
 */
export class PostgresStorage implements ServingStorage {
  /** Writes waiting for the next group commit. */
  private queue: QueuedWrite[] = [];
  /** The group commit in flight, if any: groups never overlap, so listeners hear revisions in order. */
  private flushing: Promise<void> | undefined;
  private readonly q;
  private readonly log: Logger;
  private readonly transformerFor: ValueTransformers;
  private readonly dialect = new PgDialect();
  /** Every revision reaches the listeners once and in order, whichever process committed it. */
  private readonly delivery: CommitDelivery;
  /** Names this process in its commit announcements, so it does not read back its own commits. */
  private readonly writerId = randomBytes(8).toString("hex");
  /** The connection that LISTENs for other processes' commits, while connected. */
  private listener: pg.Client | undefined;
  private followTimer: NodeJS.Timeout | undefined;
  /** The catch-up read in flight, and whether another was asked for meanwhile. */
  private catchingUp: Promise<void> | undefined;
  private catchUpAgain = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly leaderships = new Set<AdvisoryLeadership>();

  private constructor(
    private readonly pool: pg.Pool,
    private readonly db: NodePgDatabase,
    private readonly options: PostgresOptions,
  ) {
    this.log = options.log ?? createLogger("storage");
    this.transformerFor = options.transformers ?? (() => undefined);
    this.delivery = new CommitDelivery(0, this.log, () => this.catchUp());
    const keyIs = and(
      eq(objects.resource, sql.placeholder("resource")),
      eq(objects.namespace, sql.placeholder("namespace")),
      eq(objects.name, sql.placeholder("name")),
    );
    const counter = (name: string) =>
      this.db.select({ value: counters.value }).from(counters).where(eq(counters.name, name)).prepare(`orch_counter_${name}`);
    this.q = {
      get: this.db
        .select({ revision: objects.revision, value: objects.value, valueBytes: objects.valueBytes })
        .from(objects)
        .where(keyIs)
        .prepare("orch_get"),
      revision: counter("revision"),
      compacted: counter("compacted"),
      published: counter("published"),
      epoch: counter("epoch"),
    };
  }

  /** Connects, brings the schema up to date (one process at a time) and sets up the counters. */
  static async open(options: PostgresOptions): Promise<PostgresStorage> {
    const connection = { connectionString: options.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: APPLICATION_NAME };
    const setup = new pg.Client(connection);
    await setup.connect();
    try {
      await setup.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      await migrate(drizzle(setup), { migrationsFolder: migrationsFolder() });
      await setup.query(
        "INSERT INTO counters(name, value) VALUES ('revision', 0), ('compacted', 0), ('published', 0), ('epoch', $1) ON CONFLICT DO NOTHING",
        [Math.floor(Math.random() * Number.MAX_SAFE_INTEGER)],
      );
      await setup.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    } finally {
      await setup.end();
    }
    const pool = new pg.Pool({ ...connection, max: options.maxConnections ?? 8 });
    const storage = new PostgresStorage(pool, drizzle(pool), options);
    // An idle connection the server closes (restart, admin) must not crash the process: the pool replaces it.
    pool.on("error", (e) => storage.log.warn("idle PostgreSQL connection failed", { error: e.message }));
    // One connection open before the first request: the first read costs a query, not a connection
    // set-up, during which later commits would land before it (a read from a commit listener would then
    // see a newer state than the commit it was called for).
    await pool.query("SELECT 1");
    storage.delivery.skipTo(await storage.currentRevision());
    await storage.follow(connection, options.followIntervalMs ?? 1000);
    return storage;
  }

  /**
   * Follows the commits of other processes on the same database (other apiserver replicas): each group
   * commit NOTIFYs, and every process LISTENs and then reads the log after the last revision it handed
   * over. Revisions commit in order (the counter row lock, see commitGroup), so the log read after
   * revision R never misses a lower revision that commits later: there are no gaps to wait for. A poll
   * on a timer covers a notification lost with its connection.
   */
  private async follow(connection: pg.ClientConfig, intervalMs: number): Promise<void> {
    this.followTimer = setInterval(() => this.catchUp(), intervalMs);
    this.followTimer.unref();
    await this.listen(connection);
  }

  private async listen(connection: pg.ClientConfig): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ ...connection, application_name: `${APPLICATION_NAME}-follow` });
    let failed = false;
    const retry = (e: Error) => {
      if (failed || this.closed) return;
      failed = true;
      this.listener = undefined;
      this.log.warn("lost the connection that follows other writers' commits; reconnecting", { error: e.message });
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen(connection).catch((err) => retry(err as Error)), RECONNECT_DELAY_MS).unref();
    };
    client.on("error", retry);
    client.on("end", () => retry(new Error("connection ended")));
    client.on("notification", (message) => {
      const [writer, last] = (message.payload ?? "").split(":");
      // This process's own commits are handed over as they commit.
      if (writer !== this.writerId && Number(last) > this.delivery.revision) this.catchUp();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${COMMIT_CHANNEL}`);
    } catch (e) {
      retry(e as Error);
      return;
    }
    this.listener = client;
    // Commits made while not listening are in the log.
    this.catchUp();
  }

  /** Reads the log after the last revision handed over and hands over what it finds; one read at a time. */
  private catchUp(): void {
    if (this.closed) return;
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return;
    }
    this.catchingUp = (async () => {
      for (;;) {
        const batch = await this.changes(this.delivery.revision, FOLLOW_BATCH);
        this.delivery.deliver(batch);
        if (batch.length < FOLLOW_BATCH || this.closed) return;
      }
    })()
      .catch((e) => {
        if (e instanceof CompactedError) {
          // Fallen behind compaction (a process stopped for longer than the history window): what is
          // gone cannot be handed over. Watchers of this process get a 410 when they resume from it.
          this.log.error("commits of other writers were compacted before this process read them", { error: e.message });
          return this.currentRevision().then((r) => this.delivery.skipTo(r));
        }
        if (!this.closed) this.log.warn("cannot read other writers' commits yet", { error: (e as Error).message });
      })
      .finally(() => {
        this.catchingUp = undefined;
        if (this.catchUpAgain) {
          this.catchUpAgain = false;
          this.catchUp();
        }
      });
  }

  private async counterValue(stmt: { execute(): Promise<{ value: number }[]> }): Promise<number> {
    return (await stmt.execute())[0]?.value ?? 0;
  }

  async currentRevision(): Promise<number> {
    return this.counterValue(this.q.revision);
  }
  async compactedRevision(): Promise<number> {
    return this.counterValue(this.q.compacted);
  }
  async epoch(): Promise<string> {
    return (await this.counterValue(this.q.epoch)).toString(36);
  }
  async publishedRevision(): Promise<number> {
    return this.counterValue(this.q.published);
  }
  async markPublished(revision: number): Promise<void> {
    await this.db.execute(sql`UPDATE counters SET value = greatest(value, ${revision}::bigint) WHERE name = 'published'`);
  }

  async get(key: ObjectKey): Promise<StoredObject | undefined> {
    const row = (await this.q.get.execute({ ...key }))[0];
    if (!row) return undefined;
    return storedObject(key, row.revision, fromColumns(row.value, row.valueBytes)!, this.transformerFor(key.resource));
  }

  onCommit(listener: (change: Change) => void): () => void {
    return this.delivery.add(listener);
  }

  /**
   * Queues one write and commits it with the others queued meanwhile: one transaction for the group.
   * `write` runs the statement that changes `objects` and logs the change, and tells what was there before.
   */
  private commit(
    key: ObjectKey,
    type: ChangeType,
    object: KubeObject,
    write: (exec: WriteStatement, revision: number, stored: ValueColumns, committedAt: number) => Promise<StoredValue | undefined>,
  ): Promise<Change> {
    const transformer = this.transformerFor(key.resource);
    return new Promise((resolve, reject) => {
      const before = object.metadata.resourceVersion;
      const run = async (exec: WriteStatement, revision: number): Promise<Change> => {
        const { value, stored } = encodeForStorage(key, type, object, revision, transformer);
        const prevStored = await write(exec, revision, toColumns(stored), Date.now());
        // Listeners get JSON: the previous state is read back (decrypted) only for a transformed resource.
        const prevValue = prevStored === undefined ? undefined : storedJson(key, prevStored, transformer);
        return committedChange(key, revision, type, value, prevValue, object);
      };
      // Not committed: the caller's object must not carry a revision that was never committed.
      const restore = () => (object.metadata.resourceVersion = before);
      this.queue.push({ run, resolve, reject, restore });
      if (!this.flushing && this.queue.length === 1) setImmediate(() => void this.flush());
    });
  }

  /** Commits the queued writes as one group; writes queued meanwhile go in the next group. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0) return Promise.resolve();
    this.flushing = this.commitGroup().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) void this.flush();
    });
    return this.flushing;
  }

  private async commitGroup(): Promise<void> {
    const group = this.queue;
    this.queue = [];
    const outcomes: ({ change: Change } | { error: unknown })[] = [];
    let earlier: Change[] = [];
    // The group's connection, driven directly: a commit is three round trips (begin and lock, one
    // statement per write, counter and commit) plus the server's flush to disk, and a single write
    // waits for all of them.
    let client: pg.PoolClient | undefined;
    let broken = false;
    try {
      client = await this.pool.connect();
      const connection = client;
      const exec: WriteStatement = (name, statement) => {
        const query = this.dialect.sqlToQuery(statement);
        return connection.query({ name, text: query.sql, values: query.params });
      };
      // The lock on the counter row is held until commit: writers, in this process or another, take
      // revisions one transaction after the other, so no revision becomes visible before a lower one.
      const [, locked] = (await connection.query(
        "BEGIN; SELECT value FROM counters WHERE name = 'revision' FOR UPDATE",
      )) as unknown as pg.QueryResult<{ value: string }>[];
      const first = Number(locked!.rows[0]!.value);
      // Revisions other processes committed that this one has not handed over yet: read now, under the
      // lock, so they reach the listeners before this group's, as the order of revisions requires.
      if (this.delivery.revision < first) {
        const missed = await connection.query<ChangeRow>(
          `SELECT ${CHANGE_COLUMNS} FROM changes WHERE revision > $1 AND revision <= $2 ORDER BY revision`,
          [this.delivery.revision, first],
        );
        earlier = missed.rows.map((row) => this.toChange(row));
      }
      let last = first;
      for (const write of group) {
        try {
          outcomes.push({ change: await write.run(exec, last + 1) });
          last++;
        } catch (error) {
          outcomes.push({ error });
        }
      }
      // `last` is a number counted here, never input: safe as a literal, which lets one round trip
      // carry the counter and the commit.
      // The announcement is delivered to the other processes when (and only if) the transaction commits.
      await connection.query(
        last > first
          ? `UPDATE counters SET value = ${last} WHERE name = 'revision'; NOTIFY ${COMMIT_CHANNEL}, '${this.writerId}:${last}'; COMMIT`
          : "COMMIT",
      );
    } catch (error) {
      // The commit itself failed (or a statement did, which aborts the transaction): nothing was written.
      if (client) await client.query("ROLLBACK").catch(() => (broken = true));
      // Other processes' commits read before the failure are committed all the same.
      this.delivery.deliver(earlier);
      for (const write of group) {
        write.restore();
        write.reject(error);
      }
      return;
    } finally {
      client?.release(broken);
    }
    this.delivery.deliver(earlier);
    group.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if ("error" in outcome) {
        write.restore();
        write.reject(outcome.error);
        return;
      }
      this.delivery.deliver([outcome.change]);
      outcome.change.object = undefined;
      write.resolve(outcome.change);
    });
  }

  async create(key: ObjectKey, object: KubeObject): Promise<Change> {
    return this.commit(key, "ADDED", object, async (exec, revision, value, committedAt) => {
      // One round trip: the change is logged only when the object row was inserted.
      const result = await exec(
        "orch_create",
        sql`
        WITH inserted AS (
          INSERT INTO objects (resource, namespace, name, revision, value, value_bytes)
          VALUES (${key.resource}, ${key.namespace}, ${key.name}, ${revision}::bigint, ${value.text}::text, ${value.bytes}::bytea)
          ON CONFLICT DO NOTHING RETURNING 1)
        INSERT INTO changes (revision, resource, namespace, name, type, value, value_bytes, prev_revision, committed_at)
        SELECT ${revision}::bigint, ${key.resource}, ${key.namespace}, ${key.name}, 'ADDED', ${value.text}::text, ${value.bytes}::bytea,
               0, ${committedAt}::bigint
          FROM inserted`,
      );
      if (result.rowCount !== 1) throw new KeyExistsError(key);
      return undefined;
    });
  }

  async update(key: ObjectKey, object: KubeObject, expectedRevision: number): Promise<Change> {
    return this.commit(key, "MODIFIED", object, (exec, revision, value, committedAt) =>
      this.replace(
        exec,
        "orch_update",
        key,
        expectedRevision,
        sql`UPDATE objects SET revision = ${revision}::bigint, value = ${value.text}::text, value_bytes = ${value.bytes}::bytea`,
        { revision, type: "MODIFIED", value, committedAt },
      ),
    );
  }

  async delete(key: ObjectKey, last: KubeObject, expectedRevision: number): Promise<Change> {
    return this.commit(key, "DELETED", last, (exec, revision, value, committedAt) =>
      this.replace(exec, "orch_delete", key, expectedRevision, sql`DELETE FROM objects`, { revision, type: "DELETED", value, committedAt }),
    );
  }

  /**
   * Updates or deletes the object only if its stored revision is `expectedRevision`, and logs the change
   * with the previous state, in one statement. The revision condition in the statement is what makes
   * concurrent writers from one base lose. Returns the previous stored value.
   */
  private async replace(
    exec: WriteStatement,
    statementName: string,
    key: ObjectKey,
    expectedRevision: number,
    change: SQL,
    logged: { revision: number; type: ChangeType; value: ValueColumns; committedAt: number },
  ): Promise<StoredValue> {
    const keyIs = sql`resource = ${key.resource} AND namespace = ${key.namespace} AND name = ${key.name}`;
    const result = await exec<{ revision: string; value: string | null; value_bytes: Buffer | null; changed: string }>(
      statementName,
      sql`
      WITH previous AS (SELECT revision, value, value_bytes FROM objects WHERE ${keyIs}),
      changed AS (${change} WHERE ${keyIs} AND revision = ${expectedRevision}::bigint RETURNING 1),
      logged AS (
        INSERT INTO changes (revision, resource, namespace, name, type, value, value_bytes, prev_revision, prev_value, prev_value_bytes, committed_at)
        SELECT ${logged.revision}::bigint, ${key.resource}, ${key.namespace}, ${key.name}, ${logged.type},
               ${logged.value.text}::text, ${logged.value.bytes}::bytea, p.revision, p.value, p.value_bytes, ${logged.committedAt}::bigint
          FROM previous p, changed)
      SELECT p.revision, p.value, p.value_bytes, (SELECT count(*) FROM changed) AS changed FROM previous p`,
    );
    const previous = result.rows[0];
    if (!previous) throw new KeyNotFoundError(key);
    if (Number(previous.changed) !== 1) throw new RevisionConflictError(key, expectedRevision);
    return fromColumns(previous.value, previous.value_bytes)!;
  }

  /** A read-only transaction on one snapshot: a list's pages and checks all see the same commits. */
  private snapshot<T>(read: (tx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction(read, { isolationLevel: "repeatable read", accessMode: "read only" });
  }

  /** The revision and compaction counters, in one round trip. */
  private async revisionsIn(tx: Executor): Promise<{ current: number; compacted: number }> {
    const result = await tx.execute<{ name: string; value: string }>(
      sql`SELECT name, value FROM counters WHERE name IN ('revision', 'compacted')`,
    );
    const value = (name: string) => Number(result.rows.find((r) => r.name === name)?.value ?? 0);
    return { current: value("revision"), compacted: value("compacted") };
  }

  private async counterIn(tx: Executor, name: string): Promise<number> {
    const result = await tx.execute<{ value: string }>(sql`SELECT value FROM counters WHERE name = ${name}`);
    return Number(result.rows[0]?.value ?? 0);
  }

  async changes(after: number, limit: number, resource?: string): Promise<Change[]> {
    // One snapshot, so a compaction by another connection cannot slip between the check and the read.
    const rows = await this.snapshot(async (tx) => {
      const compacted = await this.counterIn(tx, "compacted");
      if (after < compacted) throw new CompactedError(after, compacted);
      const forResource = resource === undefined ? sql`` : sql`AND resource = ${resource}`;
      const result = await tx.execute<ChangeRow>(sql`
        SELECT ${sql.raw(CHANGE_COLUMNS)} FROM changes
         WHERE revision > ${after}::bigint ${forResource} ORDER BY revision LIMIT ${limit}`);
      return result.rows;
    });
    return rows.map((row) => this.toChange(row));
  }

  /** A row of the log as a Change, its values read back into JSON. */
  private toChange(r: ChangeRow): Change {
    const transformer = this.transformerFor(r.resource);
    const prevStored = fromColumns(r.prev_value, r.prev_value_bytes);
    return {
      resource: r.resource,
      namespace: r.namespace,
      name: r.name,
      revision: Number(r.revision),
      type: r.type,
      value: storedJson(r, fromColumns(r.value, r.value_bytes)!, transformer),
      prevValue: prevStored === undefined ? undefined : storedJson(r, prevStored, transformer),
    };
  }

  async list(query: ListQuery): Promise<ListResult> {
    return this.snapshot(async (tx): Promise<ListResult> => {
      const { current, compacted } = await this.revisionsIn(tx);
      // A list is never consistent at a revision that does not exist yet: a watch from it would skip writes.
      const revision = Math.min(query.revision ?? current, current);
      if (query.revision !== undefined && revision < compacted) throw new CompactedError(revision, compacted);
      const historical = revision < current;
      const transformer = this.transformerFor(query.resource);
      const limit = query.limit && query.limit > 0 ? query.limit : Number.POSITIVE_INFINITY;
      const items: StoredObject[] = [];
      let after = query.after;
      for (;;) {
        const size = scanSize(query, limit, items.length);
        const batch = await this.scan(tx, query, after, revision, historical, size);
        for (let i = 0; i < batch.length; i++) {
          const row = batch[i]!;
          after = { namespace: row.namespace, name: row.name };
          const item = this.readRow(row, transformer, query);
          if (!item) continue;
          if (query.filter && !query.filter(item)) continue;
          items.push(item);
          if (items.length === limit) {
            const more = i + 1 < batch.length || (await this.scan(tx, query, after, revision, historical, 1)).length > 0;
            if (!more) return { items, revision };
            const result: ListResult = { items, revision, continueAfter: after };
            if (!query.filter) result.remaining = await this.countAfter(tx, query, after, revision, historical);
            return result;
          }
        }
        if (batch.length < size) return { items, revision };
      }
    });
  }

  /** A scanned row as a StoredObject; undefined when its value cannot be read and the query asked to skip such. */
  private readRow(row: ScannedRow, transformer: ValueTransformer | undefined, query: ListQuery): StoredObject | undefined {
    const key = { resource: row.resource, namespace: row.namespace, name: row.name };
    try {
      return { ...key, revision: Number(row.revision), value: storedJson(key, fromColumns(row.value, row.value_bytes)!, transformer) };
    } catch (e) {
      if (!(e instanceof UnreadableValueError) || !query.onUnreadable) throw e;
      query.onUnreadable(e);
      return undefined;
    }
  }

  private where(query: ListQuery, after: Position | undefined, alias: string): SQL {
    const column = (name: string) => sql.raw(alias ? `${alias}.${name}` : name);
    const where = [sql`${column("resource")} = ${query.resource}`];
    if (query.namespace !== undefined) where.push(sql`${column("namespace")} = ${query.namespace}`);
    if (after) where.push(sql`(${column("namespace")}, ${column("name")}) > (${after.namespace}, ${after.name})`);
    return sql.join(where, sql` AND `);
  }

  /** Objects of one resource in key order after `after`, as they were at `revision`, values as stored. */
  private async scan(
    tx: Executor,
    query: ListQuery,
    after: Position | undefined,
    revision: number,
    historical: boolean,
    limit: number,
  ): Promise<ScannedRow[]> {
    if (!historical) {
      const result = await tx.execute<ScannedRow>(sql`
        SELECT resource, namespace, name, revision, value, value_bytes FROM objects
         WHERE ${this.where(query, after, "")} ORDER BY namespace, name LIMIT ${limit}`);
      return result.rows;
    }
    // State at an older revision: objects untouched since then, plus, for every key changed after it,
    // the state before its first later change (unless that change created it).
    const result = await tx.execute<ScannedRow>(sql`
      SELECT resource, namespace, name, revision, value, value_bytes ${this.unchangedSince(query, after, revision)}
      UNION ALL
      SELECT c.resource, c.namespace, c.name, c.prev_revision AS revision, c.prev_value AS value, c.prev_value_bytes AS value_bytes
        ${this.changedAfter(query, after, revision)}
      ORDER BY namespace, name LIMIT ${limit}`);
    return result.rows;
  }

  /** `FROM objects WHERE …`: the keys of the query after `after` whose current state is already their state at `revision`. */
  private unchangedSince(query: ListQuery, after: Position | undefined, revision: number): SQL {
    return sql`FROM objects WHERE ${this.where(query, after, "")} AND revision <= ${revision}::bigint`;
  }

  /**
   * `FROM changes c WHERE …`: of each key of the query after `after` that existed at `revision` and
   * changed after it, the first later change, whose previous value is the key's state at `revision`.
   */
  private changedAfter(query: ListQuery, after: Position | undefined, revision: number): SQL {
    return sql`FROM changes c WHERE ${this.where(query, after, "c")} AND c.revision > ${revision}::bigint AND c.type != 'ADDED'
      AND c.revision = (SELECT min(c2.revision) FROM changes c2
                         WHERE c2.resource = c.resource AND c2.namespace = c.namespace
                           AND c2.name = c.name AND c2.revision > ${revision}::bigint)`;
  }

  private async countAfter(tx: Executor, query: ListQuery, after: Position, revision: number, historical: boolean): Promise<number> {
    // Historical: the rows `scan` would give, counted without sending their values.
    const count = historical
      ? sql`SELECT (SELECT count(*) ${this.unchangedSince(query, after, revision)})
                 + (SELECT count(*) ${this.changedAfter(query, after, revision)}) AS n`
      : sql`SELECT count(*) AS n FROM objects WHERE ${this.where(query, after, "")}`;
    const result = await tx.execute<{ n: string }>(count);
    return Number(result.rows[0]!.n);
  }

  async compact(policy: CompactionPolicy): Promise<CompactionResult> {
    return this.db.transaction(async (tx): Promise<CompactionResult> => {
      // Locked: two compactions (two processes) never remove the same window twice.
      const compacted = Number(
        (await tx.execute<{ value: string }>(sql`SELECT value FROM counters WHERE name = 'compacted' FOR UPDATE`)).rows[0]!.value,
      );
      const current = await this.counterIn(tx, "revision");
      const published = await this.counterIn(tx, "published");
      const byCount = current - policy.maxRevisions;
      const oldest = await tx.execute<{ r: string | null }>(
        sql`SELECT max(revision) AS r FROM changes WHERE committed_at < ${Date.now() - policy.maxAgeMs}::bigint`,
      );
      const byAge = Number(oldest.rows[0]?.r ?? 0);
      // Never drop a change the event relay has not published yet: the log is also the outbox.
      const through = Math.min(Math.max(byCount, byAge), published);
      if (through <= compacted) return { compactedThrough: compacted, removed: 0 };
      const removed = await tx.execute(sql`DELETE FROM changes WHERE revision <= ${through}::bigint`);
      await tx.execute(sql`UPDATE counters SET value = ${through}::bigint WHERE name = 'compacted'`);
      // The space of removed rows is reused once autovacuum has passed (PostgreSQL's own housekeeping).
      return { compactedThrough: through, removed: removed.rowCount ?? 0 };
    });
  }

  lead(name: string, callbacks: LeaderCallbacks): Leadership {
    const leadership = new AdvisoryLeadership(name, callbacks, {
      connection: this.connectionConfig(),
      retryMs: this.options.leaderRetryMs ?? 1000,
      log: this.log,
      onRelease: () => this.leaderships.delete(leadership),
    });
    this.leaderships.add(leadership);
    return leadership;
  }

  private connectionConfig(): pg.ClientConfig {
    return { connectionString: this.options.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: APPLICATION_NAME };
  }

  /** What monitoring reports: live objects per resource, and the database's size on disk. */
  async stats(): Promise<StorageStatistics> {
    const [counts, size] = await Promise.all([
      this.db.execute<{ resource: string; n: string }>(sql`SELECT resource, count(*) AS n FROM objects GROUP BY resource`),
      this.db.execute<{ bytes: string }>(sql`SELECT pg_database_size(current_database()) AS bytes`),
    ]);
    return {
      objectCounts: new Map(counts.rows.map((r) => [r.resource, Number(r.n)])),
      sizeBytes: Number(size.rows[0]!.bytes),
    };
  }

  /** Closes once; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // Writes already queued are committed (or fail) before the connections go.
      while (this.flushing || this.queue.length > 0) await this.flush();
      this.closed = true;
      await Promise.all([...this.leaderships].map((l) => l.release()));
      clearInterval(this.followTimer);
      await this.listener?.end().catch(() => undefined);
      await this.catchingUp;
      await this.pool.end();
    })();
    return this.closing;
  }
}
