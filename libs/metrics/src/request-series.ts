// The two series every request touches, apiserver_request_total and apiserver_request_duration_seconds,
// kept outside prom-client's own Counter and Histogram: those validate and hash the label set on every
// call, twice per request, which was a fifth of a get's CPU. Here a caller asks once for a label set's
// entry, keeps it, and then only increments it; the registry formats them like its own metrics.
import type { Metric, Registry } from "prom-client";

type Labels = Record<string, string>;

/** One line of the exposition: a series' labels and value, under the metric's name or `metricName`. */
interface SeriesValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * What prom-client's registry reads from a metric (`get`, `reset`, and the fields below); its typings
 * name only its own four classes, so `register` casts.
 */
abstract class RegistryMetric {
  readonly aggregator = "sum";
  abstract readonly type: "counter" | "histogram";

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  protected abstract values(): SeriesValue[];
  abstract reset(): void;

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: SeriesValue[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  register(registry: Registry): this {
    registry.registerMetric(this as unknown as Metric);
    return this;
  }
}

/** One label set of a KeyedCounter: increment `value`. */
export interface CounterSeries {
  readonly labels: Labels;
  value: number;
}

/** A counter whose label sets are found by key. */
export class KeyedCounter extends RegistryMetric {
  readonly type = "counter";
  private readonly series = new Map<string, CounterSeries>();

  /** The series of `key`, made with `labels()` the first time `key` is seen. */
  at(key: string, labels: () => Labels): CounterSeries {
    let found = this.series.get(key);
    if (!found) this.series.set(key, (found = { labels: labels(), value: 0 }));
    return found;
  }

  protected values(): SeriesValue[] {
    return [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
  }

  /** Zero, in place: callers keep the series they were given. */
  reset(): void {
    for (const series of this.series.values()) series.value = 0;
  }
}

/** One label set of a KeyedHistogram, for `KeyedHistogram.observe`. */
export interface HistogramSeries {
  readonly labels: Labels;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** A histogram whose label sets are found by key. */
export class KeyedHistogram extends RegistryMetric {
  readonly type = "histogram";
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    name: string,
    help: string,
    /** Upper bounds, ascending. */
    private readonly bounds: readonly number[],
  ) {
    super(name, help);
  }

  /** The series of `key`, made with `labels()` the first time `key` is seen. */
  at(key: string, labels: () => Labels): HistogramSeries {
    let found = this.series.get(key);
    if (!found) this.series.set(key, (found = { labels: labels(), counts: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    return found;
  }

  observe(series: HistogramSeries, value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > this.bounds[bucket]!) bucket++;
    if (bucket < this.bounds.length) series.counts[bucket]!++;
    series.sum += value;
    series.count++;
  }

  protected values(): SeriesValue[] {
    const values: SeriesValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: "+Inf", ...labels }, value: count, metricName: bucket });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return values;
  }

  /** Zero, in place: callers keep the series they were given. */
  reset(): void {
    for (const series of this.series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
