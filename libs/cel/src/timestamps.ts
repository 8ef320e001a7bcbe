// Timestamps to the nanosecond, as cel-go's (Go's time.Time). The engine holds a timestamp as a
// JavaScript Date, whose unit is the millisecond; the nanoseconds below it ride along with each Date
// (a WeakMap, so that the engine's own functions keep working on plain Dates), and the operations that
// would lose them — parsing, adding or subtracting a duration, subtracting timestamps, comparing,
// printing — are done on whole nanoseconds (kubernetes-semantics.ts wraps those nodes).
import { Environment } from "@marcbachmann/cel-js";

/** Nanoseconds within the millisecond (0–999,999) of the Dates that have any. */
const belowMillisecond = new WeakMap<Date, number>();

const Duration = (new Environment().evaluate("duration('0s')") as object).constructor as new (
  seconds: bigint,
  nanos: number,
) => {
  seconds: bigint;
  nanos: number;
};

export const isDuration = (v: unknown): v is { seconds: bigint; nanos: number } => v instanceof Duration;

/** A timestamp in nanoseconds since the epoch. */
export const timestampNanos = (d: Date): bigint => BigInt(d.getTime()) * 1_000_000n + BigInt(belowMillisecond.get(d) ?? 0);

/** The timestamp `ns` nanoseconds after the epoch (an invalid Date beyond JavaScript's range). */
export function timestampOfNanos(ns: bigint): Date {
  let ms = ns / 1_000_000n;
  let below = ns % 1_000_000n;
  if (below < 0n) {
    below += 1_000_000n;
    ms -= 1n;
  }
  const d = new Date(Number(ms));
  if (below !== 0n) belowMillisecond.set(d, Number(below));
  return d;
}

const durationNanos = (d: { seconds: bigint; nanos: number }): bigint => d.seconds * 1_000_000_000n + BigInt(d.nanos);

/** A duration of `ns` nanoseconds, in the engine's representation. */
export const durationOfNanos = (ns: bigint) => new Duration(ns / 1_000_000_000n, Number(ns % 1_000_000_000n));

/** The nanoseconds below the millisecond written in an RFC 3339 string's fraction of a second. */
function fractionBelowMillisecond(text: string): number {
  const fraction = /T\d{2}:\d{2}:\d{2}\.(\d+)/i.exec(text)?.[1];
  if (!fraction || fraction.length <= 3) return 0;
  return Number(fraction.slice(3, 9).padEnd(6, "0"));
}

/** `d` (parsed from `text` by the engine or `new Date`) with the nanoseconds `text` had below the millisecond. */
export function withFraction(d: Date, text: string): Date {
  const below = fractionBelowMillisecond(text);
  if (below !== 0 && !Number.isNaN(d.getTime())) belowMillisecond.set(d, below);
  return d;
}

/** Go's time.RFC3339Nano: up to nine fractional digits, without trailing zeros. */
export function rfc3339(d: Date): string {
  const iso = d.toISOString();
  const below = belowMillisecond.get(d) ?? 0;
  const digits = `${iso.slice(20, 23)}${String(below).padStart(6, "0")}`.replace(/0+$/, "");
  return `${iso.slice(0, 19)}${digits ? `.${digits}` : ""}Z`;
}

/** `+` and `-` on timestamps and durations, and comparisons of timestamps, to the nanosecond. */
export function timestampOperation(op: string, left: unknown, right: unknown): { value: unknown } | undefined {
  if (left instanceof Date && right instanceof Date) {
    const a = timestampNanos(left);
    const b = timestampNanos(right);
    switch (op) {
      case "-":
        return { value: durationOfNanos(a - b) };
      case "==":
        return { value: a === b };
      case "!=":
        return { value: a !== b };
      case "<":
        return { value: a < b };
      case "<=":
        return { value: a <= b };
      case ">":
        return { value: a > b };
      case ">=":
        return { value: a >= b };
    }
    return undefined;
  }
  if (op === "+" && left instanceof Date && isDuration(right))
    return { value: timestampOfNanos(timestampNanos(left) + durationNanos(right)) };
  if (op === "+" && isDuration(left) && right instanceof Date)
    return { value: timestampOfNanos(timestampNanos(right) + durationNanos(left)) };
  if (op === "-" && left instanceof Date && isDuration(right))
    return { value: timestampOfNanos(timestampNanos(left) - durationNanos(right)) };
  return undefined;
}
