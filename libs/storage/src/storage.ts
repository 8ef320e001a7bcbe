// The narrow interface between the REST layer and a database: a revision log with the current object
// per key, as etcd offers it. Every engine (SQLite now, another SQL engine later) implements exactly this
// and passes the same contract tests (test/storage-contract.ts).

/** Where an object lives: `resource` is `<group>/<plural>` (`core/pods`), `namespace` is "" when cluster-scoped. */
export interface ObjectKey {
  resource: string;
  namespace: string;
  name: string;
}

export interface StoredObject extends ObjectKey {
  /** The revision of the last write to this object: its `metadata.resourceVersion`. */
  revision: number;
  /** The object as JSON text, `metadata.resourceVersion` included. */
  value: string;
  /**
   * Set by `get` when the value was stored with an older encryption key or provider than the current
   * one: an update rewrites it even when nothing changed, as Kubernetes' GuaranteedUpdate does.
   */
  stale?: boolean;
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

/** One committed revision. For DELETED, `value` is the last state stamped with the deleting revision. */
export interface Change extends StoredObject {
  type: ChangeType;
  /** The state before this change (absent for ADDED): watchers need it to see an object leave a selection. */
  prevValue: string | undefined;
  /**
   * The object `value` encodes, while the engine that committed it hands the change to its listeners:
   * they may read it instead of parsing `value` (and must not change it). Cleared once they have heard
   * the change, so the changes a watch window keeps hold their text only; absent in changes read back.
   */
  object?: unknown;
}

export interface Position {
  namespace: string;
  name: string;
}

export interface ListQuery {
  resource: string;
  /** Only this namespace; all namespaces when undefined. */
  namespace?: string;
  /** Start strictly after this key (pagination). */
  after?: Position;
  /** Read the state as of this revision; the current state when undefined. */
  revision?: number;
  /** Stop after this many matching objects. */
  limit?: number;
  /** Keep only objects for which this returns true; applied before `limit`. */
  filter?: (object: StoredObject) => boolean;
  /**
   * Leave out objects whose stored value cannot be read (its encryption key is gone) and report each
   * here, instead of failing the whole list: for in-process consumers, to whom the rest beats nothing.
   */
  onUnreadable?: (error: UnreadableValueError) => void;
}

export interface ListResult {
  items: StoredObject[];
  /** The revision the list is consistent at. */
  revision: number;
  /** Set when `limit` cut the list: the last key examined, to continue after. */
  continueAfter?: Position;
  /** With `continueAfter` and no filter: how many objects remain. */
  remaining?: number;
}

/** An object whose `metadata.resourceVersion` the storage sets to the revision it commits. */
export interface KubeObject {
  metadata: { resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export class KeyExistsError extends Error {
  constructor(readonly key: ObjectKey) {
    super(`key exists: ${keyText(key)}`);
  }
}
export class KeyNotFoundError extends Error {
  constructor(readonly key: ObjectKey) {
    super(`key not found: ${keyText(key)}`);
  }
}
export class RevisionConflictError extends Error {
  constructor(
    readonly key: ObjectKey,
    readonly expected: number,
  ) {
    super(`revision conflict on ${keyText(key)}: expected ${expected}`);
  }
}
/**
 * The most one stored object may take, as JSON: etcd's default request limit (--max-request-bytes,
 * 1.5 MiB), which bounds every object of a Kubernetes cluster. It bounds what every later read, patch
 * and watch event of the object costs.
 */
export const MAX_OBJECT_BYTES = 1536 * 1024;

/** The object is larger than MAX_OBJECT_BYTES: nothing was written. */
export class ObjectTooLargeError extends Error {
  constructor(
    readonly key: ObjectKey,
    readonly bytes: number,
  ) {
    super(`object ${keyText(key)} is ${bytes} bytes, more than ${MAX_OBJECT_BYTES}`);
  }
}

/** The revision asked for has been compacted away. */
export class CompactedError extends Error {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`revision ${requested} is compacted (compacted through ${compacted})`);
  }
}

/** A value as the engine keeps it: the object's JSON text, or the bytes a ValueTransformer made of it. */
export type StoredValue = string | Buffer;

/**
 * Turns an object's JSON into what is stored and back: Kubernetes' `value.Transformer`, through which
 * encryption at rest plugs in (libs/encryption-at-rest). The engine applies it on every write and read.
 */
export interface ValueTransformer {
  toStorage(json: string, key: ObjectKey): StoredValue;
  /** The JSON back; `stale` as in StoredObject. Throws UnreadableValueError when it cannot. */
  fromStorage(stored: StoredValue, key: ObjectKey): { json: string; stale: boolean };
}

/** The transformer of a storage resource (`core/secrets`); undefined: stored as plain JSON text. */
export type ValueTransformers = (resource: string) => ValueTransformer | undefined;

/** A stored value could not be turned back into JSON (Kubernetes' "unable to transform key"). */
export class UnreadableValueError extends Error {
  constructor(
    readonly key: ObjectKey,
    readonly reason: string,
  ) {
    super(`unable to transform key "${keyText(key)}": ${reason}`);
  }
}

/** Bytes where plain JSON text was expected: encrypted by a configuration that no longer covers the resource. */
export function plainText(key: ObjectKey, stored: StoredValue): string {
  if (typeof stored === "string") return stored;
  throw new UnreadableValueError(key, "identity transformer tried to read encrypted data");
}

/** The JSON of a stored value; a resource without a transformer costs one type check. */
export function storedJson(key: ObjectKey, stored: StoredValue, transformer: ValueTransformer | undefined): string {
  return transformer ? transformer.fromStorage(stored, key).json : plainText(key, stored);
}

/** A stored row as `get` answers it: its JSON, and `stale` when an older key or provider wrote it. */
export function storedObject(
  key: ObjectKey,
  revision: number,
  stored: StoredValue,
  transformer: ValueTransformer | undefined,
): StoredObject {
  if (!transformer) return atRevision(key, revision, plainText(key, stored));
  const { json, stale } = transformer.fromStorage(stored, key);
  const object = atRevision(key, revision, json);
  if (stale) object.stale = true;
  return object;
}

/**
 * A key's object at a revision, its fields written out: with a spread of the key a get cost about a tenth
 * more CPU (docs/benchmarks.md), the answer an object slower to build and to read.
 */
function atRevision(key: ObjectKey, revision: number, value: string): StoredObject {
  return { resource: key.resource, namespace: key.namespace, name: key.name, revision, value };
}

/** A committed change as an engine hands it to its listeners, its fields written out as `atRevision`'s. */
export function committedChange(
  key: ObjectKey,
  revision: number,
  type: ChangeType,
  value: string,
  prevValue: string | undefined,
  object: unknown,
): Change {
  return { resource: key.resource, namespace: key.namespace, name: key.name, revision, type, value, prevValue, object };
}

/**
 * An object as an engine stores it at `revision`: its JSON (refused over MAX_OBJECT_BYTES, except a
 * deletion's last state, which was within the limit when written) and the stored value.
 */
export function encodeForStorage(
  key: ObjectKey,
  type: ChangeType,
  object: KubeObject,
  revision: number,
  transformer: ValueTransformer | undefined,
): { value: string; stored: StoredValue } {
  object.metadata.resourceVersion = String(revision);
  const value = JSON.stringify(object);
  if (type !== "DELETED" && value.length > MAX_OBJECT_BYTES / 3) {
    const bytes = Buffer.byteLength(value);
    if (bytes > MAX_OBJECT_BYTES) throw new ObjectTooLargeError(key, bytes);
  }
  return { value, stored: transformer ? transformer.toStorage(value, key) : value };
}

/** Rows an engine reads per query while scanning a list; a filter may need several batches to fill a page. */
const SCAN_BATCH = 1000;

/**
 * How many rows a list reads next, with `taken` of the page's `limit` items found: a batch while a filter
 * may drop rows; else what the page still needs plus one, which tells whether the list continues.
 */
export function scanSize(query: ListQuery, limit: number, taken: number): number {
  return query.filter ? SCAN_BATCH : Math.min(SCAN_BATCH, limit - taken + 1);
}

export const keyText = (k: ObjectKey): string => `/${k.resource}/${k.namespace ? `${k.namespace}/` : ""}${k.name}`;

export interface CompactionPolicy {
  /** Keep at most this many of the newest revisions in the change history. */
  maxRevisions: number;
  /** Drop history older than this many milliseconds. */
  maxAgeMs: number;
}

export interface CompactionResult {
  compactedThrough: number;
  removed: number;
}

export interface Storage {
  /** The newest committed revision (0 for an empty database). */
  currentRevision(): Promise<number>;
  /** Revisions at or below this one are gone from the history. */
  compactedRevision(): Promise<number>;
  get(key: ObjectKey): Promise<StoredObject | undefined>;
  list(query: ListQuery): Promise<ListResult>;
  /** Commits a new object; KeyExistsError when the key is taken, ObjectTooLargeError over MAX_OBJECT_BYTES. */
  create(key: ObjectKey, object: KubeObject): Promise<Change>;
  /** Commits a new state only if the stored revision is `expectedRevision`; ObjectTooLargeError as create. */
  update(key: ObjectKey, object: KubeObject, expectedRevision: number): Promise<Change>;
  /** Removes the object only if the stored revision is `expectedRevision`; `last` is its final state. */
  delete(key: ObjectKey, last: KubeObject, expectedRevision: number): Promise<Change>;
  /** Committed changes with revision > `after`, oldest first, at most `limit`. CompactedError if `after` is too old. */
  changes(after: number, limit: number, resource?: string): Promise<Change[]>;
  /**
   * Called synchronously after each commit, in revision order, each revision once: this writer's before
   * its write resolves, and on a database shared by several writers (PostgreSQL replicas, an apiserver's
   * threads on one SQLite file) also the others', as soon as this one has read them from the log.
   */
  onCommit(listener: (change: Change) => void): () => void;
  /** A random number fixed when the database was created: revisions are unique only together with it. */
  epoch(): Promise<string>;
  /** The revision the event relay has published through (the outbox watermark). */
  publishedRevision(): Promise<number>;
  markPublished(revision: number): Promise<void>;
  compact(policy: CompactionPolicy): Promise<CompactionResult>;
  close(): Promise<void>;
}

/** An engine's figures for monitoring (/metrics). */
export interface StorageStatistics {
  /** Live objects per storage resource (`<group>/<plural>`). */
  objectCounts: Map<string, number>;
  /** What the database takes on disk. */
  sizeBytes: number;
}

/** What a process does while it holds a cluster-wide lock, and stops doing when it loses it. */
export interface LeaderCallbacks {
  /** This process holds the lock now: start what must run once. */
  acquired(): void;
  /** It no longer does (its connection to the database failed, or it released the lock): stop at once. */
  lost(): void;
}

/** A process's claim on a cluster-wide lock; `release` gives it up (and calls `lost` if it was held). */
export interface Leadership {
  readonly held: boolean;
  release(): Promise<void>;
}

/** An engine the apiserver runs on (SqliteStorage, PostgresStorage): the contract plus its figures. */
export interface ServingStorage extends Storage {
  stats(): Promise<StorageStatistics>;
  /**
   * Competes for the lock `name` among the processes sharing this storage, for what must run once per
   * cluster (the apiserver's own controllers, the event relay): at most one process holds it at a time,
   * and another takes it over when the holder dies. SQLite has one process, which names the one connection
   * that leads (`SqliteOptions.leader`): that one holds the lock at once.
   */
  lead(name: string, callbacks: LeaderCallbacks): Leadership;
}
