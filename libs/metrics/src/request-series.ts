// The two series every request touches, apiserver_request_total and apiserver_request_duration_seconds,
// kept outside prom-client's own Counter and Histogram: those validate and hash the label set on every
// call, twice per request, which was a fifth of a get's CPU. Here a label set is looked up once by a key
// the caller builds, then only incremented; the registry formats them like its own metrics.
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

/** A counter whose label sets are found by key. */
export class KeyedCounter extends RegistryMetric {
  readonly type = "counter";
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  /** Adds one to the series of `key`; `labels()` is called only the first time `key` is seen. */
  inc(key: string, labels: () => Labels): void {
    const found = this.series.get(key);
    if (found) found.value++;
    else this.series.set(key, { labels: labels(), value: 1 });
  }

  protected values(): SeriesValue[] {
    return [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
  }

  reset(): void {
    this.series.clear();
  }
}

/** A histogram whose label sets are found by key. */
export class KeyedHistogram extends RegistryMetric {
  readonly type = "histogram";
  private readonly series = new Map<string, { labels: Labels; counts: Float64Array; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    /** Upper bounds, ascending. */
    private readonly bounds: readonly number[],
  ) {
    super(name, help);
  }

  observe(key: string, labels: () => Labels, value: number): void {
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: labels(), counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    const bucket = this.bounds.findIndex((bound) => value <= bound);
    if (bucket >= 0) entry.counts[bucket]!++;
    entry.sum += value;
    entry.count++;
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

  reset(): void {
    this.series.clear();
  }
}
