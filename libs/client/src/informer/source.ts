// What an informer and its event sources share: the informer's options, the sink a source drives
// (the informer's cache) and the source contract. Sources: nats-source.ts and http-source.ts.
import type { ConnectionOptions, NatsConnection } from "nats";
import type { KubeObject, ResourceRef } from "../types.js";

export interface NatsOptions {
  /** Servers to connect to; the informer owns that connection. */
  servers?: string | string[];
  /** Credentials and the inbox prefix for that connection (see @orch/bus-access `natsConnectOptions`). */
  connectOptions?: ConnectionOptions;
  /** Or a connection the caller owns (shared by a process's informers; not closed by stop()). */
  connection?: NatsConnection;
  /** The JetStream stream, default `ORCH_EVENTS`. */
  stream?: string;
  /** Events requested per pull, default 256. */
  batch?: number;
  /** How long one pull waits for events, default 5000 ms (at least 1000). */
  fetchExpiresMs?: number;
}

export interface InformerOptions {
  ref: ResourceRef;
  /** Only this namespace (namespaced resources); all namespaces when absent. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Events from NATS JetStream (list over HTTPS, then the stream from the list's revision). Without it
   * the informer watches over HTTP: same interface, for callers with no access to NATS.
   */
  nats?: NatsOptions;
  /** Re-deliver every cached object to onUpdate this often (a safety net, not a trigger). Off when 0/absent. */
  resyncPeriodMs?: number;
  /** List page size, default 500. */
  pageSize?: number;
  /**
   * Drop `metadata.managedFields` from every object before it is cached and handed to the handlers, as
   * kube-controller-manager and kube-scheduler do with their informers: a controller that only reads
   * objects and writes them with update or patch never needs them (the server keeps the stored ones
   * when a write leaves them out), and they are nearly half of a running pod's JSON. Default false.
   */
  withoutManagedFields?: boolean;
  /** Transient failures (list, watch, NATS) and handler exceptions; the informer retries on its own. */
  onError?: (error: unknown) => void;
}

/** What a source drives: the cache, through the informer. */
export interface InformerSink<T extends KubeObject> {
  readonly signal: AbortSignal;
  /** Lists (retrying until it succeeds or the informer stops) and replaces the cache; returns the list's revision. */
  relist(): Promise<number>;
  /** Applies one event at `revision` (the caller drops what the cache already covers). */
  apply(type: "ADDED" | "MODIFIED" | "DELETED", obj: T, revision: number): Promise<void>;
  /** Progress without a change (bookmark). */
  progress(revision: number): void;
  /** Reads the current state of an object an event only identified; undefined when it is gone. */
  fetch(identity: T): Promise<T | undefined>;
  error(e: unknown): void;
  /** Waits before a retry: exponential with jitter, up to 10 s; resolves early when the informer stops. */
  backoff(attempt: number): Promise<void>;
}

export interface EventSource<T extends KubeObject> {
  /** Runs until the sink's signal aborts. */
  run(sink: InformerSink<T>): Promise<void>;
}
