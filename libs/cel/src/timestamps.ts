// Timestamps to the nanosecond and with their UTC offset, as cel-go's (Go's time.Time). The engine holds
// a timestamp as a JavaScript Date: milliseconds, in UTC. The nanoseconds below the millisecond and the
// offset the timestamp was written with ride along with each Date (WeakMaps, so that the engine's own
// functions keep working on plain Dates), and the operations that would lose them — parsing, adding or
// subtracting a duration, subtracting timestamps, comparing, printing — are done here
// (kubernetes-semantics.ts wraps those nodes). Go prints a time in its own offset (`+01:00`); accessors
// without a time zone still read UTC, as Kubernetes' DefaultUTCTimeZone makes them.
import { Environment } from "@marcbachmann/cel-js";

/** Nanoseconds within the millisecond (0–999,999) of the Dates that have any. */
const belowMillisecond = new WeakMap<Date, number>();
/** Minutes east of UTC of the Dates written with a non-zero offset. */
const offsets = new WeakMap<Date, number>();

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

/** The timestamp `ns` nanoseconds after the epoch (an invalid Date beyond JavaScript's range), in `like`'s offset. */
export function timestampOfNanos(ns: bigint, like?: Date): Date {
  let ms = ns / 1_000_000n;
  let below = ns % 1_000_000n;
  if (below < 0n) {
    below += 1_000_000n;
    ms -= 1n;
  }
  const d = new Date(Number(ms));
  if (below !== 0n) belowMillisecond.set(d, Number(below));
  const offset = like && offsets.get(like);
  if (offset) offsets.set(d, offset);
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

/**
 * An RFC 3339 text as the engine's timestamp() takes it: at most 30 characters, so fractional digits
 * past the millisecond (which asWritten() keeps) are cut; cel-go takes up to nine with any offset.
 */
export const engineTimestampText = (text: string): string => text.replace(/(T\d{2}:\d{2}:\d{2}\.\d{3})\d+/i, "$1");

/**
 * `d` (parsed from `text` by the engine or `new Date`) with what `text` had beyond it: the nanoseconds
 * below the millisecond and the UTC offset.
 */
export function asWritten(d: Date, text: string): Date {
  if (Number.isNaN(d.getTime())) return d;
  const below = fractionBelowMillisecond(text);
  if (below !== 0) belowMillisecond.set(d, below);
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(text);
  const minutes = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) : 0;
  if (minutes !== 0) offsets.set(d, minutes);
  return d;
}

/** Go's time.RFC3339Nano: up to nine fractional digits, without trailing zeros, in the time's offset. */
export function rfc3339(d: Date): string {
  const offset = offsets.get(d) ?? 0;
  const iso = (offset === 0 ? d : new Date(d.getTime() + offset * 60_000)).toISOString();
  const below = belowMillisecond.get(d) ?? 0;
  const digits = `${iso.slice(20, 23)}${String(below).padStart(6, "0")}`.replace(/0+$/, "");
  const abs = Math.abs(offset);
  const zone =
    offset === 0 ? "Z" : `${offset < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  return `${iso.slice(0, 19)}${digits ? `.${digits}` : ""}${zone}`;
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
    return { value: timestampOfNanos(timestampNanos(left) + durationNanos(right), left) };
  if (op === "+" && isDuration(left) && right instanceof Date)
    return { value: timestampOfNanos(timestampNanos(right) + durationNanos(left), right) };
  if (op === "-" && left instanceof Date && isDuration(right))
    return { value: timestampOfNanos(timestampNanos(left) - durationNanos(right), left) };
  return undefined;
}
