export {
  ApiserverMetrics,
  type ConversionWebhookFailure,
  type ConversionWebhookObservation,
  type MetricSources,
  PROMETHEUS_CONTENT_TYPE,
  REQUEST_DURATION_BUCKETS,
  type RelayStats,
  type RequestSeries,
  type StorageStats,
  type StoredObjectCount,
  type ThreadFigures,
} from "./apiserver-metrics.js";
export {
  type RequestFacts,
  type RequestInfoVerb,
  type RequestKind,
  type RequestLabels,
  type Scope,
  dryRunLabel,
  reportedVerb,
  requestKindOf,
  requestLabels,
  scopeOf,
} from "./labels.js";
export { PeakCount } from "./peak.js";
