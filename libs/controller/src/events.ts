// Recording core/v1 Events as client-go's tools/record does, so that `kubectl describe` and `kubectl get
// events` show what a controller did. Recording never blocks the reconciler: events go on a bounded queue
// (dropped when it is full) and a writer sends them in order (one at a time, or a few at once with
// each event's repeats still in order). Before sending, the EventCorrelator's
// three steps (events_cache.go):
//   - aggregation: more than 10 events of one source, object, type and reason with different messages
//     within 10 minutes become one event "(combined from similar events): <message>";
//   - de-duplication: an event seen before (same source, object, type, reason, message) is a PATCH of
//     the earlier one — count + 1, lastTimestamp, message — instead of a new object;
//   - spam filter: per source and object a token bucket of 25 events, refilled one per 5 minutes.
import type { Event } from "@orch/api";
import { type ApiClient, ApiError, type KubeObject, type ResourceRef, isAlreadyExists, isNotFound } from "@orch/client";
import type { Logger } from "@orch/log";
import { cloneJson, rfc3339 } from "@orch/machinery";
import { type Clock, realClock } from "./clock.js";

export const coreEventsResource: ResourceRef = { group: "", version: "v1", plural: "events", namespaced: true };

export type EventType = "Normal" | "Warning";

/** What a controller records with (record.EventRecorder). */
export interface EventRecorder {
  /**
   * Records `reason` and `message` about `obj` (it needs apiVersion, kind and metadata); `fieldPath`
   * names a part of it, as kubelet's container events do (`spec.containers{web}`).
   */
  event(obj: KubeObject, type: EventType, reason: string, message: string, fieldPath?: string): void;
}

export interface EventBroadcasterOptions {
  client: Pick<ApiClient, "create" | "patch">;
  log?: Logger;
  clock?: Pick<Clock, "now">;
  /** Pause between tries of an event the server could not take (transport errors); client-go's 10 s. */
  retryDelayMs?: number;
  /** Events waiting to be sent at most; more are dropped (client-go's 1000). */
  queueLength?: number;
  /**
   * Events being sent at once, default 1: client-go's record library sends one at a time, its
   * events/v1 library (kube-scheduler's) each on a goroutine of its own. Those of one correlation key
   * (an event and its repeats) always go in order.
   */
  inFlight?: number;
  /**
   * Sends at once across every broadcaster given the same limit: a process that records for many
   * sources (the orchlet's hundred nodes, each with a broadcaster of its own as each kubelet has) keeps
   * its events from crowding out the writes they tell of at a busy apiserver. Retry pauses hold no slot.
   */
  sendLimit?: SendLimit;
}

/** A number of event sends shared by several broadcasters, handed out in the order asked for. */
export class SendLimit {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error(`a send limit must be 1 or more, not ${max}`);
  }

  async run<T>(send: () => Promise<T>): Promise<T> {
    if (this.active < this.max) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await send();
    } finally {
      // The slot passes straight to the next in line, so `active` stays counted.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** client-go's defaults (events_cache.go, event.go). */
const LRU_ENTRIES = 4096;
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 300_000;
const MAX_TRIES = 12;

/** A Map used as a least-recently-used cache (groupcache/lru): reads refresh, the oldest entry goes first. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

interface Observation {
  count: number;
  firstTimestamp: string | null | undefined;
  name: string;
}

type Ref = Event["involvedObject"];

const objectKey = (source: Event["source"], o: Ref): string[] => [
  source.component ?? "",
  source.host ?? "",
  o.kind ?? "",
  o.namespace ?? "",
  o.name ?? "",
  o.uid ?? "",
  o.apiVersion ?? "",
];

/** The correlator's state: what was sent, under which name, how often; and the spam buckets. */
class Correlator {
  private readonly aggregates = new Lru<{ messages: Set<string>; last: number }>(LRU_ENTRIES);
  private readonly observed = new Lru<Observation>(LRU_ENTRIES);
  private readonly buckets = new Lru<{ tokens: number; at: number }>(LRU_ENTRIES);

  /** The event to send (created or, with `patch`, patched onto an earlier one), or undefined when filtered. */
  correlate(event: Event, now: number): { event: Event; key: string; patch: boolean } | undefined {
    const { event: aggregated, key } = this.aggregate(event, now);
    const seen = this.observed.get(key);
    const out = cloneJson(aggregated);
    if (seen) {
      out.metadata.name = seen.name;
      out.firstTimestamp = seen.firstTimestamp;
      out.count = seen.count + 1;
    }
    this.observed.set(key, { count: out.count ?? 1, firstTimestamp: out.firstTimestamp, name: out.metadata.name ?? "" });
    if (this.spam(out, now)) return undefined;
    return { event: out, key, patch: seen !== undefined };
  }

  /** After a successful write: the name the server has it under (a patch that found nothing created anew). */
  stored(key: string, event: Event): void {
    this.observed.set(key, { count: event.count ?? 1, firstTimestamp: event.firstTimestamp, name: event.metadata.name ?? "" });
  }

  /** EventAggregate: the 10th distinct message of a group within 10 minutes turns the group into one combined event. */
  private aggregate(event: Event, now: number): { event: Event; key: string } {
    const fullKey = [
      ...objectKey(event.source, event.involvedObject),
      event.involvedObject.fieldPath ?? "",
      event.type ?? "",
      event.reason ?? "",
      event.message ?? "",
    ].join("\0");
    const groupKey = [
      ...objectKey(event.source, event.involvedObject),
      event.type ?? "",
      event.reason ?? "",
      event.reportingComponent,
      event.reportingInstance,
    ].join("\0");
    let group = this.aggregates.get(groupKey);
    if (!group || now - group.last > AGGREGATE_INTERVAL_MS) group = { messages: new Set(), last: now };
    group.messages.add(event.message ?? "");
    group.last = now;
    this.aggregates.set(groupKey, group);
    if (group.messages.size < AGGREGATE_MAX_EVENTS) return { event, key: fullKey };
    // Keep the set at its limit (PopAny), so the group stays aggregated while it is active.
    group.messages.delete(group.messages.values().next().value!);
    const combined: Event = {
      ...cloneJson(event),
      metadata: { name: eventName(event.involvedObject.name ?? "", now), namespace: event.metadata.namespace },
      message: `(combined from similar events): ${event.message ?? ""}`,
      count: 1,
    };
    return { event: combined, key: groupKey };
  }

  /** EventSourceObjectSpamFilter: true when this source has said too much about this object lately. */
  private spam(event: Event, now: number): boolean {
    const key = objectKey(event.source, event.involvedObject).join("\0");
    const bucket = this.buckets.get(key) ?? { tokens: SPAM_BURST, at: now };
    bucket.tokens = Math.min(SPAM_BURST, bucket.tokens + (now - bucket.at) / SPAM_REFILL_MS);
    bucket.at = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    return !allowed;
  }
}

let lastNanos = 0n;

/** `<object>.<hex nanoseconds>`, as makeEvent names events; strictly increasing within the process. */
function eventName(objectName: string, nowMs: number): string {
  let nanos = BigInt(Math.floor(nowMs)) * 1_000_000n;
  if (nanos <= lastNanos) nanos = lastNanos + 1n;
  lastNanos = nanos;
  return `${objectName}.${nanos.toString(16)}`;
}

/**
 * One sink per process (record.EventBroadcaster with StartRecordingToSink): recorders for any number of
 * components share its queue and correlator. `stop()` drops what is still queued.
 */
export class EventBroadcaster {
  private readonly client: EventBroadcasterOptions["client"];
  private readonly log: Logger | undefined;
  private readonly clock: Pick<Clock, "now">;
  private readonly retryDelayMs: number;
  private readonly queueLength: number;
  private readonly inFlight: number;
  private readonly sendLimit: SendLimit | undefined;
  private readonly correlator = new Correlator();
  private readonly queue: Event[] = [];
  private draining: Promise<void> | undefined;
  private stopped = false;
  /** Ends the retry pauses at a stop. */
  private readonly wakers = new Set<() => void>();

  constructor(options: EventBroadcasterOptions) {
    this.client = options.client;
    this.log = options.log;
    this.clock = options.clock ?? realClock;
    this.retryDelayMs = options.retryDelayMs ?? 10_000;
    this.queueLength = options.queueLength ?? 1000;
    this.inFlight = Math.max(1, options.inFlight ?? 1);
    this.sendLimit = options.sendLimit;
  }

  /** A recorder whose events name `component` as their source (`deployment-controller`, …). */
  recorder(component: string, host = ""): EventRecorder {
    return {
      event: (obj, type, reason, message, fieldPath) => {
        if (this.stopped) return;
        if (this.queue.length >= this.queueLength) {
          this.log?.warn(`event queue full; dropped ${type} ${reason} for ${obj.kind} ${obj.metadata?.name}`);
          return;
        }
        this.queue.push(this.makeEvent(obj, component, host, type, reason, message, fieldPath));
        this.draining ??= this.drain().finally(() => (this.draining = undefined));
      },
    };
  }

  /** Resolves once every event recorded so far has been sent (or given up on). For tests and clean stops. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    for (const wake of this.wakers) wake();
  }

  /** makeEvent and generateEvent: one occurrence, named after the object and the time. */
  private makeEvent(
    obj: KubeObject,
    component: string,
    host: string,
    type: EventType,
    reason: string,
    message: string,
    fieldPath: string | undefined,
  ): Event {
    const now = this.clock.now();
    const time = rfc3339(new Date(now));
    const meta = obj.metadata ?? {};
    const involvedObject: Ref = {
      kind: obj.kind,
      namespace: meta.namespace,
      name: meta.name,
      uid: meta.uid,
      apiVersion: obj.apiVersion,
      resourceVersion: meta.resourceVersion,
      ...(fieldPath ? { fieldPath } : {}),
    };
    return {
      apiVersion: "v1",
      kind: "Event",
      // A cluster-scoped object's events go to "default".
      metadata: { name: eventName(meta.name ?? "", now), namespace: meta.namespace || "default" },
      involvedObject,
      reason,
      message,
      source: { component, ...(host ? { host } : {}) },
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
      type,
      reportingComponent: component,
      reportingInstance: host,
    } as Event;
  }

  private async drain(): Promise<void> {
    const sending = new Set<Promise<void>>();
    // The last send of each correlation key: a repeat is a patch of what that send created.
    const lastOfKey = new Map<string, Promise<void>>();
    for (;;) {
      const event = this.stopped ? undefined : this.queue.shift();
      if (!event) {
        // Done when nothing is queued or being sent; a send that ends may find more queued meanwhile.
        if (sending.size === 0) return;
        await Promise.race(sending);
        continue;
      }
      const correlated = this.correlator.correlate(event, this.clock.now());
      if (!correlated) continue;
      const before = lastOfKey.get(correlated.key);
      const send: Promise<void> = (async () => {
        await before;
        await this.record(correlated);
      })().finally(() => {
        sending.delete(send);
        if (lastOfKey.get(correlated.key) === send) lastOfKey.delete(correlated.key);
      });
      sending.add(send);
      lastOfKey.set(correlated.key, send);
      while (sending.size >= this.inFlight) await Promise.race(sending);
    }
  }

  /** Sends one correlated event, retrying what the server could not take. */
  private async record(correlated: { event: Event; key: string; patch: boolean }): Promise<void> {
    for (let tries = 1; !this.stopped; tries++) {
      const send = () => this.send(correlated.key, correlated.event, correlated.patch);
      if (await (this.sendLimit ? this.sendLimit.run(send) : send())) return;
      if (tries >= MAX_TRIES) {
        this.log?.error(
          `unable to write event ${correlated.event.reason} for ${correlated.event.involvedObject.name} (retry limit exceeded)`,
        );
        return;
      }
      // The first pause is random, so that clients do not retry in step after an outage.
      await this.sleep(tries === 1 ? Math.random() * this.retryDelayMs : this.retryDelayMs);
    }
  }

  /** recordEvent: true when done with the event (written, or refused for good). */
  private async send(key: string, event: Event, patch: boolean): Promise<boolean> {
    const namespace = event.metadata.namespace;
    try {
      let written: Event | undefined;
      if (patch) {
        try {
          written = await this.client.patch<Event>(
            coreEventsResource,
            event.metadata.name ?? "",
            { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message },
            { namespace },
          );
        } catch (e) {
          // Removed since (events expire): record it anew, count and first time kept.
          if (!isNotFound(e)) throw e;
        }
      }
      if (!written) {
        const { resourceVersion: _, ...metadata } = event.metadata;
        written = await this.client.create<Event>(coreEventsResource, { ...event, metadata });
      }
      this.correlator.stored(key, written);
      return true;
    } catch (e) {
      if (e instanceof ApiError) {
        const expected = isAlreadyExists(e) || e.causes.some((c) => c.reason === "NamespaceTerminating");
        if (!expected) this.log?.error(`server rejected event ${event.reason} for ${event.involvedObject.name} (will not retry)`, e);
        return true;
      }
      this.log?.warn(`unable to write event ${event.reason} for ${event.involvedObject.name} (may retry): ${String(e)}`);
      return false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}
