// Events from NATS JetStream: list over HTTPS, then the resource's events from the stream ORCH_EVENTS,
// starting exactly after what the list covered, with no gap and no duplicate.
//
// Design. Revisions are global (one per commit, any resource), so a subscriber of one resource sees
// revision jumps all the time and cannot tell a gap from another resource's writes. The stream's own
// sequence is what has no holes: the relay publishes every revision once, in order (duplicates after a
// crash are dropped by the message id `<epoch>-<revision>`). So the informer reasons in stream sequences:
//
// 1. Subscribe first. Read the stream's last sequence L, create an ephemeral pull consumer (filter
//    `orch.events.<group|core>.<plural>.<namespace|*>…`, ack none) starting at L+1, and only then list.
//    A pull consumer does not move until it is pulled, so the server holds our place: nothing needs
//    buffering here while the list runs. Every revision committed before the list is either in the list
//    or at a sequence > L (published after the stream info was read); revisions after the list are all
//    at sequences > L. Events with revision <= the list's are dropped: covered by the list.
//    Afterwards an event is applied only if its revision is above the last applied one, which also drops
//    a re-published duplicate.
// 2. Before every pull, check that nothing we still need has left the stream. JetStream reports the
//    consumer's position P (`delivered.stream_seq`: every message <= P was scanned, and delivered if it
//    matched) and the stream's first sequence F. A limits-retention stream drops only from the head, and
//    the consumer only moves while a pull is outstanding; so, with no pull outstanding, F > P+1 means
//    messages the consumer never scanned were dropped: the window expired under us -> relist. A stream
//    whose creation time changed, or whose last sequence went below ours, was re-created -> relist; a
//    new database epoch in the message id -> relist.
// 3. Deliveries must arrive: with ack none the consumer's delivery sequence counts every message sent to
//    us. A hole in it while reading, or a consumer delivery count above ours at the check (a message
//    lost with a dropped connection or a fetch that ended), means a lost message -> recreate the consumer
//    at our last stream sequence + 1 (not a relist: the stream still has it). A consumer that is gone
//    (NATS restarted, inactivity) is recreated the same way; step 2 then tells whether the stream still
//    reaches back that far.
// The one window this cannot see is a drop of a not-yet-scanned message between the check and the pull
// reaching the server (one round trip; or, after a pull was abandoned mid-way, until that pull expires):
// it needs the consumer to sit at the very head of the retained window, a million events or a day
// behind with the relay's defaults. An explicit purge of the stream moves consumers forward silently
// and is outside what this detects.
import { EVENTS_PREFIX, EVENTS_STREAM, REVISION_HEADER, type EventEnvelope, encodeToken } from "@orch/events";
import {
  AckPolicy,
  type Consumer,
  type ConsumerInfo,
  type ConsumerMessages,
  DeliverPolicy,
  Events,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  ReplayPolicy,
  connect,
  nanos,
  nuid,
} from "nats";
import type { KubeObject } from "../types.js";
import type { EventSource, InformerOptions, InformerSink, NatsOptions } from "./source.js";

const MSG_ID_HEADER = "Nats-Msg-Id";
const REQUEST_TIMEOUT_MS = 2000;
/** Ephemeral consumers the informer abandoned (crash, lost connection) are removed by the server after this. */
const INACTIVE_THRESHOLD_MS = 5 * 60_000;

type Verdict = "ok" | "recreate" | "relist";

/** Where the informer stands in the stream. */
interface Position {
  consumer: string;
  /** The stream's creation time when we started: a different one is a different stream. */
  created: string;
  /** Stream sequence of the last message taken from the consumer. */
  seq: number;
  /** Delivery sequence of that message on the current consumer (0 before the first). */
  delivered: number;
  /** The last revision applied (the list's, then each event's). */
  revision: number;
  epoch: string | undefined;
}

/** What one run of the source works with. */
interface Session<T extends KubeObject> {
  jsm: JetStreamManager;
  js: JetStreamClient;
  link: Link;
  sink: InformerSink<T>;
  signal: AbortSignal;
}

class Relist extends Error {}
class Recreate extends Error {}

export class NatsEventSource<T extends KubeObject> implements EventSource<T> {
  private readonly stream: string;
  private readonly subject: string;
  private fetching: ConsumerMessages | undefined;

  constructor(
    options: InformerOptions,
    private readonly nats: NatsOptions,
  ) {
    this.stream = nats.stream ?? EVENTS_STREAM;
    const { ref, namespace } = options;
    const scope = ref.namespaced && namespace ? `${encodeToken(namespace)}.*` : ">";
    this.subject = `${EVENTS_PREFIX}.${encodeToken(ref.group || "core")}.${encodeToken(ref.plural)}.${scope}`;
  }

  async run(sink: InformerSink<T>): Promise<void> {
    const { signal } = sink;
    const owned = !this.nats.connection;
    const nc = this.nats.connection ?? (await this.connect(sink));
    const stopFetch = () => void this.fetching?.stop();
    signal.addEventListener("abort", stopFetch);
    const link = new Link(nc);
    // A pull outstanding when the connection drops would only end at its expiry: end it now; the check
    // before the next pull finds out what was lost.
    link.onDisconnect(stopFetch);
    try {
      // No API probe: whether JetStream answers is found out (and retried) by the first stream info.
      // A short timeout: a request lost on the way should not hold the informer for long.
      const session: Session<T> = {
        jsm: await nc.jetstreamManager({ checkAPI: false, timeout: REQUEST_TIMEOUT_MS }),
        js: nc.jetstream({ timeout: REQUEST_TIMEOUT_MS }),
        link,
        sink,
        signal,
      };
      let failures = 0;
      while (!signal.aborted) {
        let position: Position | undefined;
        try {
          position = await this.subscribeAndList(session);
          failures = 0;
          await this.follow(session, position);
        } catch (e) {
          if (signal.aborted) break;
          if (!(e instanceof Relist)) {
            if (!(e instanceof Disconnected)) sink.error(e);
            await sink.backoff(failures++);
          }
        } finally {
          // Awaited (briefly) so that closing the connection right after does not lose the request; the
          // server removes a consumer we could not delete after its inactivity threshold anyway.
          if (position) await within(1000, session.jsm.consumers.delete(this.stream, position.consumer));
        }
      }
    } finally {
      signal.removeEventListener("abort", stopFetch);
      link.close();
      if (owned) await nc.close().catch(() => undefined);
    }
  }

  /**
   * Connects, retrying until it succeeds or the informer stops; a refusal (a wrong certificate, no
   * rights) is reported through the sink after a few quiet attempts (NATS may just be starting), where
   * nats.js's own first-connect retry would keep it silent.
   */
  private async connect(sink: InformerSink<T>): Promise<NatsConnection> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await abortable(
          connect({
            name: "orch-informer",
            timeout: REQUEST_TIMEOUT_MS,
            ...this.nats.connectOptions,
            ...(this.nats.servers ? { servers: this.nats.servers } : {}),
            maxReconnectAttempts: -1,
            reconnectTimeWait: 250,
          }),
          sink.signal,
          (nc) => void nc.close(),
        );
      } catch (e) {
        if (sink.signal.aborted) throw e;
        if (attempt >= 3) sink.error(e);
        await sink.backoff(attempt);
      }
    }
  }

  /** Step 1: a consumer placed right after the stream's end, then the list. */
  private async subscribeAndList(s: Session<T>): Promise<Position> {
    const info = await s.link.request(s.signal, () => s.jsm.streams.info(this.stream));
    const last = info.state.last_seq;
    const consumer = await s.link.request(s.signal, () => this.createConsumer(s.jsm, last + 1));
    const position: Position = { consumer, created: info.created, seq: last, delivered: 0, revision: 0, epoch: undefined };
    try {
      position.revision = await s.sink.relist();
    } catch (e) {
      void s.jsm.consumers.delete(this.stream, consumer).catch(() => undefined);
      throw e;
    }
    return position;
  }

  private async createConsumer(jsm: JetStreamManager, startSeq: number): Promise<string> {
    const info = await jsm.consumers.add(this.stream, {
      // Named, so that the create request's subject carries the filter: the NATS server's permissions
      // then decide which consumers this identity may have (see @orch/bus-access). The name is random:
      // it is what lets its creator pull from it.
      name: nuid.next(),
      filter_subject: this.subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, startSeq),
      ack_policy: AckPolicy.None,
      replay_policy: ReplayPolicy.Instant,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: nanos(INACTIVE_THRESHOLD_MS),
    });
    return info.name;
  }

  /** Steps 2 and 3: check, pull, apply; until a relist is needed or the informer stops. */
  private async follow(s: Session<T>, position: Position): Promise<void> {
    const { signal } = s;
    let failures = 0;
    let consumer: { name: string; api: Consumer } | undefined;
    while (!signal.aborted) {
      try {
        const verdict = await this.check(s, position);
        if (verdict === "relist") throw new Relist();
        if (verdict === "recreate") throw new Recreate();
        if (consumer?.name !== position.consumer) {
          const name = position.consumer;
          consumer = { name, api: await s.link.request(signal, () => s.js.consumers.get(this.stream, name)) };
        }
        const messages = await consumer.api.fetch({
          max_messages: this.nats.batch ?? 256,
          expires: Math.max(1000, this.nats.fetchExpiresMs ?? 5000),
        });
        this.fetching = messages;
        try {
          for await (const m of messages) await this.take(m, s.sink, position);
        } finally {
          this.fetching = undefined;
          messages.stop();
        }
        failures = 0;
      } catch (e) {
        if (signal.aborted || e instanceof Relist) throw e;
        if (isMissing(e, "stream")) throw new Relist();
        if (!(e instanceof Recreate)) {
          // NATS away or the consumer gone: wait, then continue from where we are.
          if (!isMissing(e) && !(e instanceof Disconnected)) s.sink.error(e);
          await s.sink.backoff(failures++);
          if (signal.aborted) return;
        }
        // A new consumer from the last message taken; the next check tells whether the stream still has it.
        const old = position.consumer;
        position.consumer = await s.link.request(signal, () => this.createConsumer(s.jsm, position.seq + 1));
        position.delivered = 0;
        void s.jsm.consumers.delete(this.stream, old).catch(() => undefined);
      }
    }
  }

  /** Step 2 (and the delivery count of step 3), with no pull outstanding. */
  private async check(s: Session<T>, position: Position): Promise<Verdict> {
    let consumer: ConsumerInfo;
    try {
      consumer = await s.link.request(s.signal, () => s.jsm.consumers.info(this.stream, position.consumer));
    } catch (e) {
      if (isMissing(e, "stream")) return "relist";
      if (isMissing(e)) return "recreate";
      throw e;
    }
    if (consumer.delivered.consumer_seq !== position.delivered) return "recreate";
    const stream = await s.link.request(s.signal, () => s.jsm.streams.info(this.stream));
    if (stream.created !== position.created || stream.state.last_seq < position.seq) return "relist";
    if (stream.state.first_seq > consumer.delivered.stream_seq + 1) return "relist";
    return "ok";
  }

  /** One message: verify its place, then apply it unless the cache already covers it. */
  private async take(m: JsMsg, sink: InformerSink<T>, position: Position): Promise<void> {
    if (m.info.deliverySequence !== position.delivered + 1) throw new Recreate();
    position.delivered = m.info.deliverySequence;
    position.seq = m.info.streamSequence;
    const id = m.headers?.get(MSG_ID_HEADER) ?? "";
    const epoch = id.includes("-") ? id.slice(0, id.lastIndexOf("-")) : undefined;
    if (epoch !== undefined) {
      // A re-created database numbers revisions from 1 again: nothing we hold is comparable.
      if (position.epoch !== undefined && epoch !== position.epoch) throw new Relist();
      position.epoch = epoch;
    }
    const header = Number(m.headers?.get(REVISION_HEADER) ?? NaN);
    // Cheap skip by header first: events the list covered need no parsing.
    if (Number.isSafeInteger(header) && header <= position.revision) return;
    const envelope = JSON.parse(m.string()) as EventEnvelope;
    if (envelope.revision <= position.revision) return;
    let object = envelope.object as T | undefined;
    // Too large for NATS: read it (a newer state is fine; a deleted one is followed by its DELETED event).
    if (envelope.truncated && envelope.type !== "DELETED") object = await sink.fetch(object!);
    if (object) await sink.apply(envelope.type, object, envelope.revision);
    position.revision = envelope.revision;
  }
}

/**
 * Whether the connection is up. nats.js buffers what is sent while it is disconnected and discards that
 * buffer when it dials again, and a request in flight when the connection drops gets no answer: either
 * only fails at its timeout. So requests wait for the connection, and one pending when it drops fails
 * at once; the caller then resumes the moment the connection is back.
 */
class Link {
  private up = true;
  private readonly onUp = new Set<() => void>();
  private readonly onDown = new Set<() => void>();
  private readonly events: AsyncIterable<{ type: string }> & { stop?: () => void };

  constructor(nc: NatsConnection) {
    const events = nc.status() as AsyncIterable<{ type: string }> & { stop?: () => void };
    this.events = events;
    void (async () => {
      for await (const status of events) {
        if (status.type === Events.Disconnect) {
          this.up = false;
          for (const fail of [...this.onDown]) fail();
        } else if (status.type === Events.Reconnect) {
          this.up = true;
          for (const wake of [...this.onUp]) wake();
        }
      }
    })().catch(() => undefined);
  }

  onDisconnect(fn: () => void): void {
    this.onDown.add(fn);
  }

  /** Resolves when connected (at once if it is), or when the informer stops. */
  ready(signal: AbortSignal): Promise<void> {
    if (this.up || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.onUp.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.onUp.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** A request's answer, once connected; fails at once if the connection drops before it comes. */
  async request<R>(signal: AbortSignal, send: () => Promise<R>): Promise<R> {
    await this.ready(signal);
    let drop: (() => void) | undefined;
    const dropped = new Promise<never>((_, reject) => {
      drop = () => reject(new Disconnected("the NATS connection dropped"));
      this.onDown.add(drop);
    });
    try {
      return await abortable(Promise.race([send(), dropped]), signal);
    } finally {
      this.onDown.delete(drop!);
    }
  }

  close(): void {
    this.events.stop?.();
    for (const wake of [...this.onUp]) wake();
  }
}

class Disconnected extends Error {}

/** JetStream's "not found" answers (10014 consumer, 10059 stream), also as nats.js phrases them. */
function isMissing(e: unknown, what?: "stream" | "consumer"): boolean {
  const err = e as { api_error?: { err_code?: number; code?: number }; message?: string };
  const code = err.api_error?.err_code;
  if (what === "stream") return code === 10059 || err.message === "stream not found";
  if (what === "consumer") return code === 10014 || err.message === "consumer not found";
  // "consumer deleted": a pull that was waiting when the consumer was removed (see @orch/bus-access).
  return code === 10014 || code === 10059 || err.api_error?.code === 404 || /not found|consumer deleted/.test(err.message ?? "");
}

/** Waits for `promise` at most `ms`, ignoring its outcome. */
function within(ms: number, promise: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Races a promise with the informer's stop, so stop() never waits for a NATS request timing out.
 * `dispose` cleans up what the promise yields if it settles after the stop.
 */
function abortable<R>(promise: Promise<R>, signal: AbortSignal, dispose?: (value: R) => void): Promise<R> {
  if (signal.aborted) {
    promise.then(
      (v) => dispose?.(v),
      () => undefined,
    );
    return Promise.reject(new Error("informer stopped"));
  }
  return new Promise<R>((resolve, reject) => {
    const onAbort = () => {
      promise.then(
        (v) => dispose?.(v),
        () => undefined,
      );
      reject(new Error("informer stopped"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
