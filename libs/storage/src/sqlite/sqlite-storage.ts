import { type Logger, createLogger } from "@orch/log";
import Database from "better-sqlite3";
import { type SQL, and, asc, eq, gt, sql } from "drizzle-orm";
import { type BetterSQLite3Database, drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { chmodSync, closeSync, existsSync, openSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BroadcastChannel } from "node:worker_threads";
import { CommitDelivery } from "../commit-delivery.js";
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
import { changes, counters } from "./schema.js";
import { CHECKPOINT_REVISIONS, Checkpointer, SERVING_CHECKPOINT_PAGES } from "./checkpointer.js";

export interface SqliteOptions {
  /** Database file path, or ":memory:". */
  path: string;
  /** Where a failing commit listener is reported (default a logger named `storage`). */
  log?: Logger;
  /** How each resource's values are stored (encryption at rest); default: plain JSON text for all. */
  transformers?: ValueTransformers;
  /**
   * Whether this connection runs the cluster's singletons (`lead` holds the lock at once); default true.
   * An apiserver serving from several threads opens the file once per thread, and only its first leads.
   */
  leader?: boolean;
  /**
   * No other connection (thread or process) writes the file while this one is open: the gets made in one
   * turn of the event loop may then share one read transaction. Outside a transaction, SQLite locks and
   * unlocks the file around every statement (three system calls, a tenth of an apiserver's get); sharing
   * is safe only when no other writer can commit between a turn's first read and its last. Default false.
   */
  onlyConnection?: boolean;
  /**
   * The write-ahead log is checkpointed from a worker thread (checkpointer.ts), not by the commits of
   * this connection; the leading connection starts that thread. Default false: SQLite's own checkpoints.
   */
  checkpointer?: boolean;
}

/**
 * The keys of a list's resource (and namespace) after `after`, as a condition the key index serves as a
 * range. Within the position's own namespace it compares the name alone: SQLite does not range-scan a row
 * value whose first column equality already fixes, so `(namespace, name) > (…)` there walked every key from
 * the namespace's first to the page's start, each page of a chunked list a longer walk.
 */
function keyRange(query: ListQuery, after: Position | undefined): SQL {
  const where = [sql`resource = ${query.resource}`];
  if (query.namespace !== undefined) where.push(sql`namespace = ${query.namespace}`);
  if (after) {
    const inNamespace = after.namespace === query.namespace;
    where.push(inNamespace ? sql`name > ${after.name}` : sql`(namespace, name) > (${after.namespace}, ${after.name})`);
  }
  return sql.join(where, sql` AND `);
}

/** `FROM objects WHERE …`: the keys matching `cond` whose current state is already their state at `revision`. */
function unchangedSince(cond: SQL, revision: number): SQL {
  return sql`FROM objects WHERE ${cond} AND revision <= ${revision}`;
}

/**
 * `FROM changes c WHERE …`: of each key matching `cond` that existed at `revision` and changed after it,
 * the first later change, whose previous value is the key's state at `revision`.
 */
function changedAfter(cond: SQL, revision: number): SQL {
  return sql`FROM changes c WHERE ${cond} AND c.revision > ${revision} AND c.type != 'ADDED'
    AND c.revision = (SELECT min(c2.revision) FROM changes c2
                       WHERE c2.resource = c.resource AND c2.namespace = c.namespace
                         AND c2.name = c.name AND c2.revision > ${revision})`;
}

/** Changes read per query while catching up with other threads' commits. */
const FOLLOW_BATCH = 1000;

/** How long a statement waits for another connection's lock before SQLITE_BUSY (a group commit does not wait). */
const BUSY_TIMEOUT_MS = 5000;

/** Tries of a contended group commit on the next turn of the event loop before it retries every millisecond. */
const IMMEDIATE_RETRIES = 10;

function migrationsFolder(): string {
  // Beside the bundle when one ships them (the @orch/control-plane package); otherwise resolved through
  // the package, which works from source and from this repository's bundled apps alike.
  const beside = join(dirname(fileURLToPath(import.meta.url)), "migrations", "sqlite");
  if (existsSync(beside)) return beside;
  const pkg = createRequire(import.meta.url).resolve("@orch/storage/package.json");
  return join(dirname(pkg), "migrations", "sqlite");
}

interface QueuedWrite {
  /** Writes at `revision`, the next one the group has: the caller checks and writes in one savepoint. */
  run: (revision: number) => Change;
  resolve: (change: Change) => void;
  reject: (error: unknown) => void;
  restore: () => void;
}

/**
 * The database holds every Secret: it and its WAL and shared-memory files are the owner's alone, whoever
 * created them and whatever the umask. SQLite gives the WAL files the database file's mode.
 */
function ownerOnly(path: string): void {
  closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

/** What became of one queued write once its group committed. */
type Outcome = { change: Change } | { error: unknown };

/** A row as scanned, before its value is read back into JSON. */
type ScannedRow = Omit<StoredObject, "value"> & { value: StoredValue };

/** What a group's transaction found and did: the first revision it took after, other writers' commits it read. */
interface GroupCommit {
  first: number;
  earlier: Change[];
  outcomes: Outcome[];
}

const isUniqueViolation = (e: unknown): boolean => e instanceof Error && (e as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE";
const isBusy = (e: unknown): boolean => e instanceof Error && (e as { code?: string }).code === "SQLITE_BUSY";

/**
 * The Storage contract on an SQLite file. One process owns the file; several threads of it may each open
 * it (an apiserver serving from several threads): writes take the file's write lock in turn, and each
 * group commit announces its last revision on a BroadcastChannel named after the file, on which the
 * other threads read the log and hand those commits to their listeners, as PostgreSQL replicas do.
 */
export class SqliteStorage implements ServingStorage {
  private readonly sqlite: Database.Database;
  private readonly db: BetterSQLite3Database;
  /** Every revision reaches the listeners once and in order, whichever thread committed it. */
  private readonly delivery: CommitDelivery;
  /** Where this connection announces its commits to, and hears of, the other threads' (a file only). */
  private readonly commits: BroadcastChannel | undefined;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly leader: boolean;
  private readonly onlyConnection: boolean;
  /** A read transaction this turn's gets share (onlyConnection), ended before any write. */
  private reading = false;
  private closed = false;
  /** Group commits in a row that found the write lock taken by another connection. */
  private contended = 0;
  /** The last revision announced on the commit channel. */
  private announced = 0;
  /** Sets how long the next statement waits for a lock: not at all (a group commit), or the usual time. */
  private readonly lockWait: { none: Database.Statement; usual: Database.Statement };
  /** Writes waiting for the next group commit. */
  private queue: QueuedWrite[] = [];
  /** Runs one write inside the current transaction as a savepoint. */
  private readonly inSavepoint: (run: (revision: number) => Change, revision: number) => Change;
  /** Commits a group of writes in one transaction that holds the write lock from its start. */
  private readonly commitGroup: { immediate(group: QueuedWrite[]): GroupCommit };
  private readonly q;
  private readonly w;
  private readonly log: Logger;
  private readonly transformerFor: ValueTransformers;

  constructor(options: SqliteOptions) {
    this.log = options.log ?? createLogger("storage");
    this.transformerFor = options.transformers ?? (() => undefined);
    if (options.path !== ":memory:") ownerOnly(options.path);
    this.sqlite = new Database(options.path);
    // Must precede the first table so freed pages can later be returned to the file system.
    this.sqlite.pragma("auto_vacuum = INCREMENTAL");
    this.sqlite.pragma("journal_mode = WAL");
    // NORMAL in WAL mode survives a process crash; only an OS crash may lose the last commits.
    this.sqlite.pragma("synchronous = NORMAL");
    this.sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.lockWait = {
      none: this.sqlite.prepare("PRAGMA busy_timeout = 0"),
      usual: this.sqlite.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`),
    };
    this.db = drizzle(this.sqlite);
    this.inSavepoint = this.sqlite.transaction((run: (revision: number) => Change, revision: number) => run(revision));
    this.commitGroup = this.sqlite.transaction((group: QueuedWrite[]) => this.writeGroup(group));
    migrate(this.db, { migrationsFolder: migrationsFolder() });
    this.sqlite.exec("INSERT OR IGNORE INTO counters(name, value) VALUES ('revision', 0), ('compacted', 0), ('published', 0)");
    this.sqlite
      .prepare("INSERT OR IGNORE INTO counters(name, value) VALUES ('epoch', ?)")
      .run(Math.floor(Math.random() * Number.MAX_SAFE_INTEGER));

    const counter = (name: string) => this.db.select({ value: counters.value }).from(counters).where(eq(counters.name, name)).prepare();
    this.q = {
      revision: counter("revision"),
      compacted: counter("compacted"),
      published: counter("published"),
      epoch: counter("epoch"),
      changesAfter: this.db
        .select()
        .from(changes)
        .where(gt(changes.revision, sql.placeholder("after")))
        .orderBy(asc(changes.revision))
        .limit(sql.placeholder("limit"))
        .prepare(),
      changesAfterFor: this.db
        .select()
        .from(changes)
        .where(and(gt(changes.revision, sql.placeholder("after")), eq(changes.resource, sql.placeholder("resource"))))
        .orderBy(asc(changes.revision))
        .limit(sql.placeholder("limit"))
        .prepare(),
    };
    // The statements of every write and get, on better-sqlite3 itself with positional parameters:
    // drizzle's prepared queries fill named placeholders from an object on each call, which cost about
    // as much as the SQLite work of a create.
    const keyIs = "resource = ? AND namespace = ? AND name = ?";
    this.w = {
      // A row as two values: an object per row is most of a get's storage time.
      get: this.sqlite.prepare<[string, string, string], [number, StoredValue]>(`SELECT revision, value FROM objects WHERE ${keyIs}`).raw(),
      setRevision: this.sqlite.prepare<[number]>("UPDATE counters SET value = ? WHERE name = 'revision'"),
      insertObject: this.sqlite.prepare<[string, string, string, number, StoredValue]>(
        "INSERT INTO objects (resource, namespace, name, revision, value) VALUES (?, ?, ?, ?, ?)",
      ),
      updateObject: this.sqlite.prepare<[number, StoredValue, string, string, string, number]>(
        `UPDATE objects SET revision = ?, value = ? WHERE ${keyIs} AND revision = ?`,
      ),
      deleteObject: this.sqlite.prepare<[string, string, string, number]>(`DELETE FROM objects WHERE ${keyIs} AND revision = ?`),
      insertChange: this.sqlite.prepare<[number, string, string, string, ChangeType, StoredValue, number, StoredValue | null, number]>(
        "INSERT INTO changes (revision, resource, namespace, name, type, value, prev_revision, prev_value, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ),
    };
    this.leader = options.leader ?? true;
    this.onlyConnection = options.onlyConnection ?? false;
    this.delivery = new CommitDelivery(this.counterValue(this.q.revision), this.log, () => setImmediate(() => this.catchUp()));
    if (options.path !== ":memory:") {
      this.commits = new BroadcastChannel(`orch-sqlite-commits:${realpathSync(options.path)}`);
      this.commits.onmessage = (message) => {
        if ((message as { data: number }).data > this.delivery.revision) this.catchUp();
      };
      // Following other threads keeps nothing alive: a thread ends when its own work does.
      this.commits.unref();
      if (options.checkpointer) {
        this.sqlite.pragma(`wal_autocheckpoint = ${SERVING_CHECKPOINT_PAGES}`);
        if (this.leader) this.checkpointer = new Checkpointer(options.path, this.commits.name, this.log);
      }
    }
  }

  private counterValue(stmt: { get(): { value: number } | undefined }): number {
    return stmt.get()?.value ?? 0;
  }

  async currentRevision(): Promise<number> {
    return this.counterValue(this.q.revision);
  }
  async compactedRevision(): Promise<number> {
    return this.counterValue(this.q.compacted);
  }
  async epoch(): Promise<string> {
    return this.counterValue(this.q.epoch).toString(36);
  }
  async publishedRevision(): Promise<number> {
    return this.counterValue(this.q.published);
  }
  async markPublished(revision: number): Promise<void> {
    this.endRead();
    this.db
      .update(counters)
      .set({ value: sql`max(${counters.value}, ${revision})` })
      .where(eq(counters.name, "published"))
      .run();
  }

  async get(key: ObjectKey): Promise<StoredObject | undefined> {
    if (this.onlyConnection && !this.sqlite.inTransaction) {
      this.sqlite.exec("BEGIN");
      this.reading = true;
      setImmediate(() => this.endRead());
    }
    const row = this.w.get.get(key.resource, key.namespace, key.name);
    if (!row) return undefined;
    return storedObject(key, row[0], row[1], this.transformerFor(key.resource));
  }

  /** Ends the turn's shared read transaction, if one is open: before a write, which takes its own. */
  private endRead(): void {
    if (!this.reading) return;
    this.reading = false;
    this.sqlite.exec("COMMIT");
  }

  onCommit(listener: (change: Change) => void): () => void {
    return this.delivery.add(listener);
  }

  /** Reads the log after the last revision handed over and hands over what it finds. */
  private catchUp(): void {
    if (this.closed) return;
    try {
      for (;;) {
        const batch = this.readChanges(this.delivery.revision, FOLLOW_BATCH);
        this.delivery.deliver(batch);
        if (batch.length < FOLLOW_BATCH) return;
      }
    } catch (e) {
      if (!(e instanceof CompactedError)) throw e;
      // Fallen behind compaction: what is gone cannot be handed over; watchers resuming from it get a 410.
      this.log.error("commits of other threads were compacted before this one read them", { error: e.message });
      this.delivery.skipTo(this.counterValue(this.q.revision));
    }
  }

  /**
   * Queues one write and commits it with the others queued in the same turn of the event loop: one
   * SQLite transaction (one WAL commit) for the group, a savepoint per write so a failing write rolls
   * back alone. Resolves once the group is committed; listeners hear each change in revision order.
   */
  private commit(
    key: ObjectKey,
    type: ChangeType,
    object: KubeObject,
    write: (revision: number, stored: StoredValue) => { prevRevision: number; prevStored: StoredValue | undefined },
  ): Promise<Change> {
    const transformer = this.transformerFor(key.resource);
    return new Promise((resolve, reject) => {
      const before = object.metadata.resourceVersion;
      const run = (revision: number): Change => {
        const { value, stored } = encodeForStorage(key, type, object, revision, transformer);
        const { prevRevision, prevStored } = write(revision, stored);
        this.w.insertChange.run(
          revision,
          key.resource,
          key.namespace,
          key.name,
          type,
          stored,
          prevRevision,
          prevStored ?? null,
          Date.now(),
        );
        // Listeners get JSON: the previous state is read back (decrypted) only for a transformed resource.
        const prevValue = prevStored === undefined ? undefined : storedJson(key, prevStored, transformer);
        return committedChange(key, revision, type, value, prevValue, object);
      };
      // Rolled back: the caller's object must not carry a revision that was never committed.
      const restore = () => (object.metadata.resourceVersion = before);
      this.queue.push({ run, resolve, reject, restore });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * The group's writes, each at the next revision unless it fails; the revision counter is read and
   * written once per group (an UPDATE … RETURNING per write was a third of a write's SQLite time). The
   * transaction began IMMEDIATE, so no other connection can commit between the read and the write; the
   * commits other threads made since this one last handed any over are read under the same lock, so
   * that they reach the listeners before this group's.
   */
  private writeGroup(group: QueuedWrite[]): GroupCommit {
    const first = this.counterValue(this.q.revision);
    const earlier = this.delivery.revision < first ? this.changesAfter(this.delivery.revision, first - this.delivery.revision) : [];
    const outcomes: Outcome[] = [];
    let revision = first;
    for (const write of group) {
      try {
        outcomes.push({ change: this.inSavepoint(write.run, revision + 1) });
        revision++;
      } catch (error) {
        outcomes.push({ error });
      }
    }
    if (revision !== first) this.w.setRevision.run(revision);
    return { first, earlier, outcomes };
  }

  /**
   * Commits the queued writes as one group. The write lock is taken without waiting: better-sqlite3 is
   * synchronous, and SQLite's busy wait would stop this thread's event loop while another thread commits.
   * Contended, the group waits for a later turn instead (`wait` only at close).
   */
  private flush(wait = false): void {
    if (this.queue.length === 0) return; // already flushed by close()
    const group = this.queue;
    this.queue = [];
    this.endRead();
    let committed: GroupCommit;
    try {
      if (!wait) this.lockWait.none.get();
      try {
        committed = this.commitGroup.immediate(group);
      } finally {
        if (!wait) this.lockWait.usual.get();
      }
    } catch (error) {
      if (isBusy(error) && !wait) {
        // Another thread holds the write lock for the moment: nothing of the group was written.
        this.queue = group.concat(this.queue);
        if (this.contended++ < IMMEDIATE_RETRIES) setImmediate(() => this.flush());
        else setTimeout(() => this.flush(), 1);
        return;
      }
      // The commit itself failed: nothing of the group was written.
      for (const write of group) {
        write.restore();
        write.reject(error);
      }
      return;
    }
    this.contended = 0;
    const { first, earlier, outcomes } = committed;
    this.delivery.deliver(earlier);
    if (this.delivery.revision < first) {
      // Other threads' commits compacted before this one read them: this group's must still be heard.
      this.log.error("commits of other threads were compacted before this one read them", { through: first });
      this.delivery.skipTo(first);
    }
    let last = first;
    group.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if ("error" in outcome) {
        write.restore();
        write.reject(outcome.error);
        return;
      }
      last = outcome.change.revision;
      this.delivery.deliver([outcome.change]);
      outcome.change.object = undefined;
      write.resolve(outcome.change);
    });
    if (last !== first) this.announce(last);
  }

  /**
   * Tells the other threads of this database that it has commits up to `revision`. Alone on the file,
   * only the checkpointer listens, and it acts once every CHECKPOINT_REVISIONS: a message per group
   * woke its thread for nothing (1 % of the serving thread's time in a rollout).
   */
  private announce(revision: number): void {
    if (this.onlyConnection && revision - this.announced < CHECKPOINT_REVISIONS) return;
    this.announced = revision;
    this.commits?.postMessage(revision);
  }

  /** The current row, checked against the revision the caller's change was based on. */
  private expect(key: ObjectKey, expectedRevision: number): { revision: number; value: StoredValue } {
    const current = this.w.get.get(key.resource, key.namespace, key.name);
    if (!current) throw new KeyNotFoundError(key);
    const [revision, value] = current;
    if (revision !== expectedRevision) throw new RevisionConflictError(key, expectedRevision);
    return { revision, value };
  }

  async create(key: ObjectKey, object: KubeObject): Promise<Change> {
    return this.commit(key, "ADDED", object, (revision, value) => {
      try {
        this.w.insertObject.run(key.resource, key.namespace, key.name, revision, value);
      } catch (e) {
        if (isUniqueViolation(e)) throw new KeyExistsError(key);
        throw e;
      }
      return { prevRevision: 0, prevStored: undefined };
    });
  }

  async update(key: ObjectKey, object: KubeObject, expectedRevision: number): Promise<Change> {
    return this.commit(key, "MODIFIED", object, (revision, value) => {
      const prev = this.expect(key, expectedRevision);
      // The revision condition in the statement is what makes concurrent writers from one base lose.
      const { changes: n } = this.w.updateObject.run(revision, value, key.resource, key.namespace, key.name, expectedRevision);
      if (n !== 1) throw new RevisionConflictError(key, expectedRevision);
      return { prevRevision: prev.revision, prevStored: prev.value };
    });
  }

  async delete(key: ObjectKey, last: KubeObject, expectedRevision: number): Promise<Change> {
    return this.commit(key, "DELETED", last, () => {
      const prev = this.expect(key, expectedRevision);
      const { changes: n } = this.w.deleteObject.run(key.resource, key.namespace, key.name, expectedRevision);
      if (n !== 1) throw new RevisionConflictError(key, expectedRevision);
      return { prevRevision: prev.revision, prevStored: prev.value };
    });
  }

  async changes(after: number, limit: number, resource?: string): Promise<Change[]> {
    return this.readChanges(after, limit, resource);
  }

  private readChanges(after: number, limit: number, resource?: string): Change[] {
    // One read transaction, so a compaction by another connection cannot slip between the check and the read.
    return this.sqlite.transaction(() => {
      const compacted = this.counterValue(this.q.compacted);
      if (after < compacted) throw new CompactedError(after, compacted);
      return this.changesAfter(after, limit, resource);
    })();
  }

  /** The logged changes after `after`, oldest first, whether or not older ones are compacted. */
  private changesAfter(after: number, limit: number, resource?: string): Change[] {
    const rows = resource ? this.q.changesAfterFor.all({ after, limit, resource }) : this.q.changesAfter.all({ after, limit });
    return rows.map((r) => {
      const transformer = this.transformerFor(r.resource);
      return {
        resource: r.resource,
        namespace: r.namespace,
        name: r.name,
        revision: r.revision,
        type: r.type,
        value: storedJson(r, r.value, transformer),
        prevValue: r.prevValue === null ? undefined : storedJson(r, r.prevValue, transformer),
      };
    });
  }

  async list(query: ListQuery): Promise<ListResult> {
    // One read transaction: every batch sees the same snapshot.
    return this.sqlite.transaction((): ListResult => {
      const current = this.counterValue(this.q.revision);
      // A list is never consistent at a revision that does not exist yet: a watch from it would skip writes.
      const revision = Math.min(query.revision ?? current, current);
      if (query.revision !== undefined) {
        const compacted = this.counterValue(this.q.compacted);
        if (revision < compacted) throw new CompactedError(revision, compacted);
      }
      const historical = revision < current;
      const transformer = this.transformerFor(query.resource);
      const limit = query.limit && query.limit > 0 ? query.limit : Number.POSITIVE_INFINITY;
      const items: StoredObject[] = [];
      let after = query.after;
      for (;;) {
        const size = scanSize(query, limit, items.length);
        const batch = this.scan(query, after, revision, historical, size);
        for (let i = 0; i < batch.length; i++) {
          const row = batch[i]!;
          after = { namespace: row.namespace, name: row.name };
          if (!this.readRow(row, transformer, query)) continue;
          if (query.filter && !query.filter(row)) continue;
          items.push(row);
          if (items.length === limit) {
            const more = i + 1 < batch.length || this.scan(query, after, revision, historical, 1).length > 0;
            if (!more) return { items, revision };
            const result: ListResult = { items, revision, continueAfter: after };
            if (!query.filter) result.remaining = this.countAfter(query, after, revision, historical);
            return result;
          }
        }
        if (batch.length < size) return { items, revision };
      }
    })();
  }

  /**
   * Turns a scanned row's stored value into JSON in place; false when it cannot be read and the
   * query asked to leave such objects out.
   */
  private readRow(row: ScannedRow, transformer: ValueTransformer | undefined, query: ListQuery): row is StoredObject {
    try {
      row.value = storedJson(row, row.value, transformer);
      return true;
    } catch (e) {
      if (!(e instanceof UnreadableValueError) || !query.onUnreadable) throw e;
      query.onUnreadable(e);
      return false;
    }
  }

  /** Objects of one resource in key order after `after`, as they were at `revision`, values as stored. */
  private scan(query: ListQuery, after: Position | undefined, revision: number, historical: boolean, limit: number): ScannedRow[] {
    const cond = keyRange(query, after);
    if (!historical) {
      // The resource, and the namespace when the query names one, are the query's own: not read back as a
      // new string per row (a third of the time a list of 10,000 spends in SQLite).
      const { resource, namespace } = query;
      const rows = this.db.all<ScannedRow>(
        sql`SELECT ${namespace === undefined ? sql`namespace, ` : sql``}name, revision, value FROM objects WHERE ${cond} ORDER BY namespace, name LIMIT ${limit}`,
      );
      for (const row of rows) {
        row.resource = resource;
        if (namespace !== undefined) row.namespace = namespace;
      }
      return rows;
    }
    // State at an older revision: objects untouched since then, plus, for every key changed after it,
    // the state before its first later change (unless that change created it).
    return this.db.all<ScannedRow>(sql`
      SELECT resource, namespace, name, revision, value ${unchangedSince(cond, revision)}
      UNION ALL
      SELECT c.resource, c.namespace, c.name, c.prev_revision AS revision, c.prev_value AS value ${changedAfter(cond, revision)}
      ORDER BY namespace, name LIMIT ${limit}`);
  }

  private countAfter(query: ListQuery, after: Position, revision: number, historical: boolean): number {
    const cond = keyRange(query, after);
    if (!historical) return this.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM objects WHERE ${cond}`)!.n;
    // The rows `scan` would give, counted without reading their values.
    return this.db.get<{ n: number }>(
      sql`SELECT (SELECT count(*) ${unchangedSince(cond, revision)}) + (SELECT count(*) ${changedAfter(cond, revision)}) AS n`,
    )!.n;
  }

  async compact(policy: CompactionPolicy): Promise<CompactionResult> {
    this.endRead();
    const result = this.sqlite.transaction((): CompactionResult => {
      const current = this.counterValue(this.q.revision);
      const published = this.counterValue(this.q.published);
      const compacted = this.counterValue(this.q.compacted);
      const byCount = current - policy.maxRevisions;
      const byAge =
        this.db.get<{ r: number | null }>(sql`SELECT max(revision) AS r FROM changes WHERE committed_at < ${Date.now() - policy.maxAgeMs}`)
          ?.r ?? 0;
      // Never drop a change the event relay has not published yet: the log is also the outbox.
      const through = Math.min(Math.max(byCount, byAge), published);
      if (through <= compacted) return { compactedThrough: compacted, removed: 0 };
      const { changes: removed } = this.db.run(sql`DELETE FROM changes WHERE revision <= ${through}`);
      this.db.run(sql`UPDATE counters SET value = ${through} WHERE name = 'compacted'`);
      return { compactedThrough: through, removed };
    })();
    if (result.removed > 0) {
      this.sqlite.pragma("incremental_vacuum");
      this.sqlite.pragma("wal_checkpoint(TRUNCATE)");
    }
    return result;
  }

  /**
   * What monitoring reports: live objects per resource (`<group>/<plural>`, one pass over the key index),
   * and the database's size in pages, free pages included (what the file takes on disk once checkpointed).
   */
  lead(_name: string, callbacks: LeaderCallbacks): Leadership {
    // One process owns the file and names the one connection that leads, from the start.
    let held = this.leader;
    if (held) callbacks.acquired();
    return {
      get held() {
        return held;
      },
      async release() {
        if (!held) return;
        held = false;
        callbacks.lost();
      },
    };
  }

  async stats(): Promise<StorageStatistics> {
    const rows = this.db.all<{ resource: string; n: number }>(sql`SELECT resource, count(*) AS n FROM objects GROUP BY resource`);
    const pages = this.sqlite.pragma("page_count", { simple: true }) as number;
    const pageSize = this.sqlite.pragma("page_size", { simple: true }) as number;
    return { objectCounts: new Map(rows.map((r) => [r.resource, r.n])), sizeBytes: pages * pageSize };
  }

  async close(): Promise<void> {
    this.endRead();
    if (this.queue.length > 0) this.flush(true);
    this.closed = true;
    this.commits?.close();
    await this.checkpointer?.close();
    this.sqlite.close();
  }
}
