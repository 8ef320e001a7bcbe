// The outbox relay: the revision log in the database is the outbox; this publishes each committed
// revision to JetStream in order, with the revision (and the database's epoch) as message id so a
// re-publish after a crash is dropped by the stream's duplicate window, and advances the published
// watermark after the acks.
import { type Logger, createLogger } from "@orch/log";
import type { Change, Storage } from "@orch/storage";
import {
  type ConnectionOptions,
  Events,
  type NatsConnection,
  RetentionPolicy,
  type StreamConfig,
  StorageType,
  connect,
  headers,
} from "nats";
import {
  COMMITTED_AT_HEADER,
  EVENTS_PREFIX,
  EVENTS_STREAM,
  IDENTITY_ONLY_RESOURCES,
  REVISION_HEADER,
  subjectForChange,
} from "@orch/events";
import { AckedPublisher } from "./acked-publisher.js";

export interface RelayOptions {
  /** Where the relay reports what goes wrong (default a logger named `event-relay`). */
  log?: Logger;
  /** Messages kept in the stream (oldest dropped first). */
  maxMessages?: number;
  /** How long messages are kept, in milliseconds. */
  maxAgeMs?: number;
  /** Copies of the stream in a NATS cluster (JetStream's replicas, 1 to 5); 1 on a single server. */
  replicas?: number;
}

const BATCH = 500;
const MAX_COMMIT_TIMES = 100_000;
const PUBLISH_TIMEOUT_MS = 2000;
/**
 * Commits kept in memory for publishing, so that they are not read back from the log; past this backlog
 * (NATS away) the log alone serves.
 */
const RECENT_LIMIT = 1_000;
/**
 * How long the watermark may lag behind what was published: written once per interval, not per batch (an
 * UPDATE and a commit each, 3 % of the apiserver's time in a burst of pod writes). After a crash the
 * relay publishes that moment again, and the stream's duplicate window drops the copies.
 */
const WATERMARK_INTERVAL_MS = 100;
/** Connection attempts (at most 250 ms apart) before the first warning, and between two warnings. */
const QUIET_CONNECT_ATTEMPTS = 8;
const CONNECT_ATTEMPTS_PER_WARNING = 120;

export function envelopeText(change: Change): string {
  return `{"type":"${change.type}","revision":${change.revision},"object":${change.value}}`;
}

/** Room for the envelope's own fields and the headers within max_payload. */
const ENVELOPE_HEADROOM = 4096;

/**
 * The envelope of a change as it goes on the bus: reduced to the object's identity when the object
 * carries credentials (a Secret's data is read through the API, where RBAC applies, never from the bus),
 * or when the whole envelope would exceed the server's payload limit (a refused message would block
 * every revision after it).
 */
export function busEnvelope(change: Change, maxPayload: number): string {
  if (!IDENTITY_ONLY_RESOURCES.has(change.resource)) {
    const full = envelopeText(change);
    if (Buffer.byteLength(full) + ENVELOPE_HEADROOM <= maxPayload) return full;
  }
  const { apiVersion, kind, metadata } = JSON.parse(change.value) as {
    apiVersion?: string;
    kind?: string;
    metadata?: Record<string, unknown>;
  };
  const identity = { apiVersion, kind, metadata: pick(metadata ?? {}, ["name", "namespace", "uid", "resourceVersion", "generation"]) };
  return JSON.stringify({ type: change.type, revision: change.revision, object: identity, truncated: true });
}

const pick = (o: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));

export interface RelayProgress {
  /** The newest committed revision. */
  currentRevision: number;
  /** The revision published through (the watermark). */
  publishedRevision: number;
  /** Events published since start. */
  publishedEvents: number;
  /** When the oldest change not yet published was committed (ms since the epoch); undefined when none waits. */
  oldestPendingCommittedAt: number | undefined;
  connected: boolean;
}

export class EventRelay {
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private nc: NatsConnection | undefined;
  private publisher: AckedPublisher | undefined;
  /** Message ids are `<database epoch>-<revision>`: a re-created database never collides with old ids. */
  private epoch = "";
  /** False until connected, and between a disconnect and the reconnect: nats.js discards what is written meanwhile. */
  private connected = false;
  /**
   * Set when a publish failed: the stream may be gone (deleted, or lost with a JetStream that stopped and
   * came back without it), so the next attempt makes sure it exists first. Publishing then resumes from
   * the watermark, so the new stream gets every revision not yet acknowledged.
   */
  private checkStream = true;
  private readonly streamConfig: Partial<StreamConfig>;
  private streamReady!: () => void;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  /** Commit times of the changes not yet published (dropped once published; bounded by the backlog). */
  private readonly committedAt = new Map<number, number>();
  /** Events published (acknowledged by the stream) since start, and when that was: for monitoring. */
  private publishedEvents = 0;
  private readonly startedAt = Date.now();
  /** Settles once connected and the stream exists. */
  readonly ready: Promise<void>;
  /** Changes committed since start, in revision order, not yet published (at most RECENT_LIMIT). */
  private recent: Change[] = [];
  /** A change was left out of `recent` for room: the log holds some that memory does not. */
  private overflowed = false;
  /** The revision published through; read from the storage's watermark before the first drain. */
  private published: number | undefined;
  /** The watermark as last written, and the write waiting for its interval. */
  private marked = 0;
  private marking: NodeJS.Timeout | undefined;

  private constructor(
    private readonly storage: Storage,
    nats: string | ConnectionOptions,
    options: RelayOptions,
  ) {
    this.streamConfig = {
      name: EVENTS_STREAM,
      subjects: [`${EVENTS_PREFIX}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_msgs: options.maxMessages ?? 1_000_000,
      max_age: (options.maxAgeMs ?? 24 * 3600 * 1000) * 1_000_000,
      duplicate_window: 120 * 1_000_000_000,
      num_replicas: options.replicas ?? 1,
    };
    this.unsubscribe = storage.onCommit((change) => {
      // While NATS is away the backlog grows; past this many its changes go without a commit time.
      if (this.committedAt.size < MAX_COMMIT_TIMES) this.committedAt.set(change.revision, performance.timeOrigin + performance.now());
      if (this.recent.length < RECENT_LIMIT) this.recent.push(change);
      else this.overflowed = true;
      this.kick();
    });
    // Also retry on a timer: NATS may have been away when the last commit happened.
    this.timer = setInterval(() => this.kick(), 1000);
    this.timer.unref();
    const streamReady = new Promise<void>((resolve) => (this.streamReady = resolve));
    const log = options.log ?? createLogger("event-relay");
    const connected = this.connect(typeof nats === "string" ? { servers: nats } : nats, log);
    connected.catch((e) => log.error("cannot connect to NATS", e));
    this.ready = connected.then(() => streamReady);
  }

  /**
   * Starts relaying. It does not wait for NATS: the apiserver serves writes while NATS is away, and the
   * backlog is published once it is reachable. Await `ready` to know it is. `nats` is a server URL, or
   * connection options with credentials.
   */
  static start(storage: Storage, nats: string | ConnectionOptions, options: RelayOptions = {}): EventRelay {
    return new EventRelay(storage, nats, options);
  }

  /**
   * Connects, retrying until it succeeds or the relay stops. It says why while it cannot: a server that
   * refuses the certificate would otherwise be retried in silence. (nats.js's own first-connect retry
   * does not tell.) NATS starting a moment after the apiserver is normal, so the first failures are quiet.
   */
  private async connect(nats: ConnectionOptions, log: Logger): Promise<void> {
    this.epoch = await this.storage.epoch();
    let nc: NatsConnection | undefined;
    for (let attempt = 1; !nc; attempt++) {
      try {
        nc = await connect({
          name: "orch-apiserver-relay",
          timeout: 2_000,
          ...nats,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
          // nats.js otherwise makes an Error per publish, for a stack trace should its ack time out.
          noAsyncTraces: true,
        });
      } catch (e) {
        if (this.stopped) return;
        if (attempt % CONNECT_ATTEMPTS_PER_WARNING === QUIET_CONNECT_ATTEMPTS) {
          log.warn(`cannot connect to NATS yet: ${(e as Error).message}; retrying`);
        }
        // Soon at first: under the launcher, NATS starts right after the apiserver is ready.
        await new Promise((r) => setTimeout(r, Math.min(250, 25 * 2 ** attempt)));
      }
    }
    if (this.stopped) {
      await nc.close();
      return;
    }
    this.nc = nc;
    // The stream is made sure of by the first drain, and again after any failed one (see checkStream).
    this.publisher = new AckedPublisher(nc, nats.inboxPrefix);
    this.connected = true;
    void this.followConnection(nc);
    this.kick();
  }

  /**
   * nats.js drops messages buffered while it is disconnected when it dials again, so a publish made then
   * only fails at its timeout (5 s), holding up the backlog and stop(). Publish only while connected, and
   * catch up as soon as the connection is back.
   */
  private async followConnection(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) this.connected = false;
      else if (status.type === Events.Reconnect) {
        this.connected = true;
        this.kick();
      }
    }
  }

  /** Creates the stream, or brings an existing one to the configured limits. */
  private async ensureStream(): Promise<void> {
    const jsm = await this.nc!.jetstreamManager({ timeout: PUBLISH_TIMEOUT_MS });
    try {
      await jsm.streams.info(EVENTS_STREAM);
      await jsm.streams.update(EVENTS_STREAM, this.streamConfig);
    } catch (e) {
      if (!isStreamMissing(e)) throw e;
      await jsm.streams.add(this.streamConfig);
    }
    this.checkStream = false;
    this.streamReady();
  }

  private kick(): void {
    if (this.stopped || !this.connected) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch(() => {
        // NATS or its stream unavailable: the backlog stays in the log and is retried by the timer.
        this.checkStream = true;
      })
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    const publisher = this.publisher!;
    if (this.checkStream) await this.ensureStream();
    this.published ??= this.marked = await this.storage.publishedRevision();
    for (;;) {
      const { batch, fromLog } = await this.next(this.published);
      if (batch.length === 0) return;
      // Publishes are pipelined on one connection, which keeps them in order: the server stores them in
      // the order sent, so when a later one was stored an earlier failure can only be a lost ack (the
      // message is stored; its re-publish is a duplicate) or a refusal of that one message, which
      // busEnvelope rules out for size, the one per-message refusal the stream can make.
      const maxPayload = this.nc!.info?.max_payload ?? 1024 * 1024;
      await publisher.publish(
        batch.map((change) => {
          const h = headers();
          h.set(REVISION_HEADER, String(change.revision));
          const committedAt = this.committedAt.get(change.revision);
          if (committedAt !== undefined) h.set(COMMITTED_AT_HEADER, committedAt.toFixed(3));
          return {
            subject: subjectForChange(change),
            data: busEnvelope(change, maxPayload),
            msgId: `${this.epoch}-${change.revision}`,
            headers: h,
          };
        }),
        // A publish racing a disconnect that nats.js has not noticed yet would otherwise wait for acks
        // that never come; failing sooner lets the backlog go out as soon as the connection is back.
        PUBLISH_TIMEOUT_MS,
      );
      this.published = batch[batch.length - 1]!.revision;
      this.markSoon();
      this.publishedEvents += batch.length;
      for (const change of batch) this.committedAt.delete(change.revision);
      if (this.stopped || !this.connected) return;
      if (fromLog ? batch.length < BATCH : this.recent.length === batch.length && !this.overflowed) return;
    }
  }

  /**
   * The changes after `after` to publish next: from memory when it holds the very next revision on, else
   * from the log (a backlog from before this start, or past RECENT_LIMIT).
   */
  private async next(after: number): Promise<{ batch: Change[]; fromLog: boolean }> {
    const stale = this.recent.findIndex((c) => c.revision > after);
    this.recent.splice(0, stale < 0 ? this.recent.length : stale);
    if (this.recent[0]?.revision === after + 1) {
      let n = 1;
      while (n < this.recent.length && n < BATCH && this.recent[n]!.revision === after + 1 + n) n++;
      return { batch: this.recent.slice(0, n), fromLog: false };
    }
    const batch = await this.storage.changes(after, BATCH);
    // Caught up with the log: whatever memory holds from here on is complete.
    if (batch.length < BATCH) this.overflowed = false;
    return { batch, fromLog: true };
  }

  /** Writes the watermark once per WATERMARK_INTERVAL_MS at most. */
  private markSoon(): void {
    this.marking ??= setTimeout(() => {
      this.marking = undefined;
      this.mark().catch(() => this.markSoon());
    }, WATERMARK_INTERVAL_MS);
  }

  private async mark(): Promise<void> {
    const published = this.published;
    if (published === undefined || published <= this.marked) return;
    await this.storage.markPublished(published);
    this.marked = Math.max(this.marked, published);
  }

  /** How far behind the revision log the relay is, for monitoring (the apiserver's /metrics). */
  async progress(): Promise<RelayProgress> {
    const [currentRevision, publishedRevision] = await Promise.all([
      this.storage.currentRevision(),
      this.published ?? this.storage.publishedRevision(),
    ]);
    let oldestPendingCommittedAt: number | undefined;
    if (currentRevision > publishedRevision) {
      // Commit times are kept, in revision order, for the changes committed since start; an older backlog
      // (left by a previous run, or past MAX_COMMIT_TIMES) has waited at least since this relay started.
      const [revision, committedAt] = this.committedAt.entries().next().value ?? [];
      oldestPendingCommittedAt = revision !== undefined && revision <= publishedRevision + 1 ? committedAt : this.startedAt;
    }
    return {
      currentRevision,
      publishedRevision,
      publishedEvents: this.publishedEvents,
      oldestPendingCommittedAt,
      connected: this.connected,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearInterval(this.timer);
    await this.draining;
    clearTimeout(this.marking);
    this.marking = undefined;
    await this.mark().catch(() => undefined);
    this.publisher?.close();
    await this.nc?.drain().catch(() => undefined);
  }
}

/** JetStream's "stream not found" (10059), as the API or nats.js words it. */
function isStreamMissing(e: unknown): boolean {
  const err = e as { api_error?: { err_code?: number }; message?: string };
  return err.api_error?.err_code === 10059 || err.message === "stream not found";
}
