// The outbox relay: the revision log in the database is the outbox; this publishes each committed
// revision to JetStream in order, with the revision (and the database's epoch) as message id so a
// re-publish after a crash is dropped by the stream's duplicate window, and advances the published
// watermark after the acks.
import type { Change, Storage } from "@orch/storage";
import { Events, type JetStreamClient, type NatsConnection, RetentionPolicy, StorageType, connect, headers } from "nats";
import { EVENTS_PREFIX, subjectForChange } from "./subjects.js";

export const EVENTS_STREAM = "ORCH_EVENTS";
export const REVISION_HEADER = "Orch-Revision";

export interface EventEnvelope {
  type: "ADDED" | "MODIFIED" | "DELETED";
  revision: number;
  object: unknown;
}

export interface RelayOptions {
  /** Messages kept in the stream (oldest dropped first). */
  maxMessages?: number;
  /** How long messages are kept, in milliseconds. */
  maxAgeMs?: number;
}

const BATCH = 500;
const PUBLISH_TIMEOUT_MS = 2000;

export function envelopeText(change: Change): string {
  return `{"type":"${change.type}","revision":${change.revision},"object":${change.value}}`;
}

export class EventRelay {
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  /** Message ids are `<database epoch>-<revision>`: a re-created database never collides with old ids. */
  private epoch = "";
  /** False until connected, and between a disconnect and the reconnect: nats.js discards what is written meanwhile. */
  private connected = false;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  /** Settles once connected and the stream exists. */
  readonly ready: Promise<void>;

  private constructor(
    private readonly storage: Storage,
    url: string,
    options: RelayOptions,
  ) {
    this.unsubscribe = storage.onCommit(() => this.kick());
    // Also retry on a timer: NATS may have been away when the last commit happened.
    this.timer = setInterval(() => this.kick(), 1000);
    this.timer.unref();
    this.ready = this.connect(url, options);
    this.ready.catch((e) => console.error("event relay:", e));
  }

  /**
   * Starts relaying. It does not wait for NATS: the apiserver serves writes while NATS is away, and the
   * backlog is published once it is reachable. Await `ready` to know it is.
   */
  static start(storage: Storage, url: string, options: RelayOptions = {}): EventRelay {
    return new EventRelay(storage, url, options);
  }

  private async connect(url: string, options: RelayOptions): Promise<void> {
    this.epoch = await this.storage.epoch();
    const nc = await connect({
      servers: url,
      name: "orch-apiserver-relay",
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    if (this.stopped) {
      await nc.close();
      return;
    }
    this.nc = nc;
    const jsm = await nc.jetstreamManager();
    const config = {
      name: EVENTS_STREAM,
      subjects: [`${EVENTS_PREFIX}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_msgs: options.maxMessages ?? 1_000_000,
      max_age: (options.maxAgeMs ?? 24 * 3600 * 1000) * 1_000_000,
      duplicate_window: 120 * 1_000_000_000,
    };
    try {
      await jsm.streams.info(EVENTS_STREAM);
      await jsm.streams.update(EVENTS_STREAM, config);
    } catch {
      await jsm.streams.add(config);
    }
    this.js = nc.jetstream();
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

  private kick(): void {
    if (this.stopped || !this.connected) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch(() => {
        // NATS unavailable: the backlog stays in the log and is retried by the timer.
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
    const js = this.js!;
    for (;;) {
      const after = await this.storage.publishedRevision();
      const batch = await this.storage.changes(after, BATCH);
      if (batch.length === 0) return;
      // Publishes are pipelined on one connection, which keeps them in order.
      await Promise.all(
        batch.map((change) => {
          const h = headers();
          h.set(REVISION_HEADER, String(change.revision));
          return js.publish(subjectForChange(change), envelopeText(change), {
            msgID: `${this.epoch}-${change.revision}`,
            headers: h,
            // A publish racing a disconnect that nats.js has not noticed yet would otherwise hang for its
            // default 5 s; failing sooner lets the backlog go out as soon as the connection is back.
            timeout: PUBLISH_TIMEOUT_MS,
          });
        }),
      );
      await this.storage.markPublished(batch[batch.length - 1]!.revision);
      if (batch.length < BATCH || this.stopped || !this.connected) return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearInterval(this.timer);
    await this.draining;
    await this.nc?.drain().catch(() => undefined);
  }
}
