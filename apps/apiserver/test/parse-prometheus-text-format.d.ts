// Types for parse-prometheus-text-format (it ships none): prom2json's shape, every number as text.
declare module "parse-prometheus-text-format" {
  export interface Sample {
    value: string;
    labels?: Record<string, string>;
  }
  export interface HistogramSample {
    labels?: Record<string, string>;
    /** Cumulative count per upper bound (`le`). */
    buckets: Record<string, string>;
    count: string;
    sum: string;
  }
  export interface MetricFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: (Sample | HistogramSample)[];
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
