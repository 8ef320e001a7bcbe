// The apiserver's metrics under Kubernetes' names, labels and buckets (k8s.io/apiserver
// pkg/endpoints/metrics and pkg/storage/etcd3/metrics), process metrics, and orch's own for the event
// relay. The HTTP layer records requests through the methods here; storage and relay figures are read
// at scrape time from the sources the apiserver hands in, so neither depends on this package.
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
  collectDefaultMetrics,
} from "prom-client";
import { type CounterSeries, type HistogramSeries, KeyedCounter, KeyedHistogram } from "./request-series.js";
import { type RequestFacts, type RequestKind, type RequestLabels, dryRunLabel, reportedVerb, scopeOf } from "./labels.js";
import { PeakCount } from "./peak.js";

/** A request's label set in apiserver_request_total and apiserver_request_duration_seconds. */
export interface RequestSeries {
  readonly key: string;
  readonly labels: RequestLabels;
  readonly duration: HistogramSeries;
  /** Its apiserver_request_total series by response code. */
  readonly byCode: Map<number, CounterSeries>;
}

/** Kubernetes' `component` label for requests served by the apiserver itself. */
const COMPONENT = "apiserver";

/** Kubernetes' buckets for apiserver_request_duration_seconds (chosen for its latency SLOs). */
export const REQUEST_DURATION_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

export interface StoredObjectCount {
  /** "" for the core group. */
  group: string;
  /** The plural resource name. */
  resource: string;
  count: number;
}

/** What the storage reports at scrape time. */
export interface StorageStats {
  objects: StoredObjectCount[];
  /** The size of the database file. */
  sizeBytes: number;
  /** Names the database (Kubernetes' storage_cluster_id is etcd's cluster id). */
  clusterId: string;
}

/** What the event relay reports at scrape time. */
export interface RelayStats {
  /** The newest committed revision. */
  currentRevision: number;
  /** The revision the relay has published through (its watermark). */
  publishedRevision: number;
  /** Events published since the apiserver started. */
  publishedEvents: number;
  /** When the oldest change not yet published was committed (ms since the epoch); undefined when none waits. */
  oldestPendingCommittedAt: number | undefined;
  connected: boolean;
}

/** One thread's figures, as prom-client gives them (`Registry.getMetricsAsJSON`). */
export type ThreadFigures = MetricObjectWithValues<MetricValue<string>>[];

export interface MetricSources {
  storage?: () => Promise<StorageStats>;
  /**
   * The other threads serving requests in this process, when there are any: their figures are added to
   * this thread's, so that whichever thread a scrape reaches reports the whole process.
   */
  otherThreads?: () => Promise<ThreadFigures[]>;
  /** Only when the apiserver relays events (NATS configured): without it the relay metrics are absent. See also `reportRelay`. */
  relay?: () => Promise<RelayStats>;
  /** For the relay's lag in seconds; Date.now by default. */
  now?: () => number;
}

const LONG_RUNNING_LABELS = ["verb", "group", "version", "resource", "subresource", "scope", "component"] as const;

/** Why a conversion webhook call failed, as apiextensions-apiserver's ConversionWebhookErrorType names it. */
export type ConversionWebhookFailure =
  | "conversion_webhook_call_failure"
  | "conversion_webhook_malformed_response_failure"
  | "conversion_webhook_partial_response_failure"
  | "conversion_webhook_invalid_converted_object_failure"
  | "conversion_webhook_no_objects_returned_failure";

/** One conversion through a CRD's webhook (pkg/apiserver/conversion/metrics.go). */
export interface ConversionWebhookObservation {
  crd: string;
  fromVersion: string;
  toVersion: string;
  seconds: number;
  succeeded: boolean;
  /** Why the webhook call failed; a failure before any call (no review version orch speaks) has none. */
  failure?: ConversionWebhookFailure;
}

/** The Prometheus text format's content type. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export class ApiserverMetrics {
  /** This apiserver's own registry: several apiservers in one process (tests) do not share series. */
  readonly registry = new Registry();
  private readonly requests = new KeyedCounter(
    "apiserver_request_total",
    "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
  ).register(this.registry);
  private readonly durations = new KeyedHistogram(
    "apiserver_request_duration_seconds",
    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
    REQUEST_DURATION_BUCKETS,
  ).register(this.registry);
  private readonly longRunning = new Gauge({
    name: "apiserver_longrunning_requests",
    help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
    labelNames: LONG_RUNNING_LABELS,
    registers: [this.registry],
  });
  private readonly terminations = new Counter({
    name: "apiserver_request_terminations_total",
    help: "Number of requests which apiserver terminated in self-defense.",
    labelNames: ["verb", "group", "version", "resource", "subresource", "scope", "component", "code"],
    registers: [this.registry],
  });
  private readonly aborts = new Counter({
    name: "apiserver_request_aborts_total",
    help: "Number of requests which apiserver aborted possibly due to a timeout, for each group, version, verb, resource, subresource and scope",
    labelNames: ["verb", "group", "version", "resource", "subresource", "scope"],
    registers: [this.registry],
  });
  private readonly crdConversions = new Histogram({
    name: "apiserver_crd_conversion_webhook_duration_seconds",
    help: "CRD webhook conversion duration in seconds",
    labelNames: ["crd_name", "from_version", "to_version", "succeeded"],
    buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
    registers: [this.registry],
  });
  private readonly conversionRequests = new Counter({
    name: "apiserver_conversion_webhook_request_total",
    help: "Counter for conversion webhook requests with success/failure and failure error type",
    labelNames: ["result", "failure_type"],
    registers: [this.registry],
  });
  private readonly conversionLatency = new Histogram({
    name: "apiserver_conversion_webhook_duration_seconds",
    help: "Conversion webhook request latency",
    labelNames: ["result", "failure_type"],
    buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60],
    registers: [this.registry],
  });
  private readonly seriesByKey = new Map<string, RequestSeries>();
  private readonly inFlight: Record<RequestKind, PeakCount> = { readOnly: new PeakCount(), mutating: new PeakCount() };
  private readonly sources: MetricSources;
  private relaySource: (() => Promise<RelayStats | undefined>) | undefined;
  private readonly storageObjects: Gauge<"resource">;
  private readonly resourceObjects: Gauge<"group" | "resource">;
  private readonly storageSize: Gauge<"storage_cluster_id">;
  private relay: { lagRevisions: Gauge; lagSeconds: Gauge; published: Counter; connected: Gauge; last: RelayStats | undefined } | undefined;

  constructor(sources: MetricSources = {}) {
    this.sources = sources;
    const registers = [this.registry];
    const inFlight = this.inFlight;
    new Gauge({
      name: "apiserver_current_inflight_requests",
      help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
      labelNames: ["request_kind"],
      registers,
      collect() {
        for (const kind of ["readOnly", "mutating"] as const) this.set({ request_kind: kind }, inFlight[kind].value());
      },
    });
    this.storageObjects = new Gauge({
      name: "apiserver_storage_objects",
      help: "Number of stored objects at the time of last check split by kind (deprecated in Kubernetes 1.34 for apiserver_resource_objects).",
      labelNames: ["resource"],
      registers,
    });
    this.resourceObjects = new Gauge({
      name: "apiserver_resource_objects",
      help: "Number of stored objects at the time of last check split by kind.",
      labelNames: ["group", "resource"],
      registers,
    });
    this.storageSize = new Gauge({
      name: "apiserver_storage_size_bytes",
      help: "Size of the storage database file physically allocated in bytes.",
      labelNames: ["storage_cluster_id"],
      registers,
    });
    // 1 in each thread's registry: summed over the threads that answered, it says whether a scrape saw them all.
    new Gauge({
      name: "orch_apiserver_serving_threads",
      help: "Threads of this apiserver process that serve requests and whose figures this exposition includes (ORCH_APISERVER_THREADS when all answered).",
      registers,
    }).set(1);
    if (sources.relay) this.reportRelay(sources.relay);
    // Process figures are the whole process's (CPU, resident memory, file descriptors, start time) even
    // though the apiserver runs on a worker thread; heap, event loop lag and GC are that thread's own.
    collectDefaultMetrics({ register: this.registry });
  }

  /** From now on, report the event relay's figures (the relay starts after the HTTP server); undefined: nothing new (another replica publishes). */
  reportRelay(source: () => Promise<RelayStats | undefined>): void {
    this.relaySource = source;
    if (this.relay) return;
    const registers = [this.registry];
    this.relay = {
      lagRevisions: new Gauge({
        name: "orch_event_relay_lag_revisions",
        help: "Committed revisions not yet published to NATS: the newest revision minus the relay's watermark.",
        registers,
      }),
      lagSeconds: new Gauge({
        name: "orch_event_relay_lag_seconds",
        help: "Seconds since the oldest change not yet published to NATS was committed; 0 when nothing waits.",
        registers,
      }),
      published: new Counter({
        name: "orch_event_relay_published_events_total",
        help: "Change events the relay has published to NATS JetStream (acknowledged by the stream) since the apiserver started.",
        registers,
      }),
      connected: new Gauge({
        name: "orch_event_relay_connected",
        help: "1 while the relay is connected to NATS, else 0.",
        registers,
      }),
      last: undefined,
    };
  }

  /**
   * The series a request is counted in, found by its label values: made once for each label set, so
   * that a request builds no label object (a get spent several microseconds on them).
   */
  series(facts: RequestFacts): RequestSeries {
    const verb = reportedVerb(facts);
    const dryRun = dryRunLabel(facts.dryRun);
    const scope = scopeOf(facts);
    const key = `${verb}\n${dryRun}\n${facts.group}\n${facts.version}\n${facts.resource}\n${facts.subresource}\n${scope}`;
    let found = this.seriesByKey.get(key);
    if (!found) {
      const labels: RequestLabels = {
        verb,
        dry_run: dryRun,
        group: facts.group,
        version: facts.version,
        resource: facts.resource,
        subresource: facts.subresource,
        scope,
      };
      const withComponent = { ...labels, component: COMPONENT };
      found = { key, labels, duration: this.durations.at(key, () => withComponent), byCode: new Map() };
      this.seriesByKey.set(key, found);
    }
    return found;
  }

  /** A request finished (answered in full, or its client went away): counted with its code and timed. */
  observe(series: RequestSeries, code: number, seconds: number): void {
    let counter = series.byCode.get(code);
    if (!counter) {
      counter = this.requests.at(`${series.key}\n${code}`, () => ({ ...series.labels, component: COMPONENT, code: String(code) }));
      series.byCode.set(code, counter);
    }
    counter.value++;
    this.durations.observe(series.duration, seconds);
  }

  /** A long-running request (a watch) opened (+1) or ended (-1). */
  longRunningChanged(labels: RequestLabels, delta: 1 | -1): void {
    const { dry_run: _dryRun, ...rest } = labels;
    this.longRunning.inc({ ...rest, component: COMPONENT }, delta);
  }

  /** A short request started (+1) or finished (-1) its handling. */
  inFlightChanged(kind: RequestKind, delta: 1 | -1): void {
    this.inFlight[kind].add(delta);
  }

  /** The apiserver refused or cut a request to protect itself (429 over the limits, 504 at the deadline). */
  terminated(labels: RequestLabels, code: number): void {
    const { dry_run: _dryRun, ...rest } = labels;
    this.terminations.inc({ ...rest, component: COMPONENT, code: String(code) });
  }

  /** The handler was stopped before it answered: the deadline passed or the client went away. */
  aborted(labels: RequestLabels): void {
    const { dry_run: _dryRun, ...rest } = labels;
    this.aborts.inc(rest);
  }

  /** A conversion through a CRD's webhook: the per-CRD histogram and the webhook call's own figures. */
  conversionWebhook(o: ConversionWebhookObservation): void {
    this.crdConversions.observe(
      { crd_name: o.crd, from_version: o.fromVersion, to_version: o.toVersion, succeeded: String(o.succeeded) },
      o.seconds,
    );
    if (!o.succeeded && !o.failure) return;
    const labels = { result: o.succeeded ? "success" : "failure", failure_type: o.failure ?? "" };
    this.conversionRequests.inc(labels);
    this.conversionLatency.observe(labels, o.seconds);
  }

  /** The exposition in Prometheus' text format, with storage and relay figures read now. */
  async expose(): Promise<string> {
    if (!this.sources.otherThreads) {
      await this.refresh();
      return this.registry.metrics();
    }
    const [own, others] = await Promise.all([this.figures(), this.sources.otherThreads()]);
    return addThreads([own, ...others]).metrics();
  }

  /** This thread's figures, storage and relay read now: what it gives a scrape another thread answers. */
  async figures(): Promise<ThreadFigures> {
    await this.refresh();
    return this.registry.getMetricsAsJSON();
  }

  private async refresh(): Promise<void> {
    const [storage, relay] = await Promise.all([this.sources.storage?.(), this.relaySource?.()]);
    if (storage) this.setStorage(storage);
    if (relay) this.setRelay(relay);
  }

  private setStorage(stats: StorageStats): void {
    // Reset first: a resource whose last object went (or whose CRD was deleted) leaves the exposition.
    this.storageObjects.reset();
    this.resourceObjects.reset();
    for (const { group, resource, count } of stats.objects) {
      // Kubernetes' GroupResource.String(): `pods`, `deployments.apps`.
      this.storageObjects.set({ resource: group ? `${resource}.${group}` : resource }, count);
      this.resourceObjects.set({ group, resource }, count);
    }
    this.storageSize.reset();
    this.storageSize.set({ storage_cluster_id: stats.clusterId }, stats.sizeBytes);
  }

  private setRelay(stats: RelayStats): void {
    const relay = this.relay!;
    const now = (this.sources.now ?? Date.now)();
    relay.lagRevisions.set(Math.max(0, stats.currentRevision - stats.publishedRevision));
    relay.lagSeconds.set(stats.oldestPendingCommittedAt === undefined ? 0 : Math.max(0, (now - stats.oldestPendingCommittedAt) / 1000));
    const before = relay.last?.publishedEvents ?? 0;
    if (stats.publishedEvents > before) relay.published.inc(stats.publishedEvents - before);
    relay.connected.set(stats.connected ? 1 : 0);
    relay.last = stats;
  }
}

/**
 * Figures that are the process's or the database's, the same whichever thread reads them: reported once,
 * not summed over threads (prom-client's cluster aggregation, made for processes, would sum or omit them).
 */
const SAME_IN_EVERY_THREAD = /^(process_|nodejs_version_info$|apiserver_storage_|apiserver_resource_objects$)/;

/**
 * The process's figures from each serving thread's, the answering thread's first: requests, watches,
 * heaps and collections summed, process and storage figures as the answering thread read them, event
 * loop figures as prom-client combines them.
 */
function addThreads(threads: ThreadFigures[]): Registry {
  for (const figures of threads) {
    for (const metric of figures) {
      if (SAME_IN_EVERY_THREAD.test(metric.name)) metric.aggregator = "first";
    }
  }
  return AggregatorRegistry.aggregate(threads);
}
