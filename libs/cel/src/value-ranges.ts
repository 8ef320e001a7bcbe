// cel-go's value ranges, which @marcbachmann/cel-js 8 does not keep everywhere: an int is an int64
// (negation, division and int(double) overflow), a duration is Go's time.Duration (int64 nanoseconds,
// about ±292 years: cel-go v0.22 parses and adds durations with it), a timestamp lies in years
// 0001–9999. A result outside its range is cel-go's error, not a value.
import { Environment } from "@marcbachmann/cel-js";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, in milliseconds since the epoch. */
const TIMESTAMP_MIN_MS = -62135596800000;
const TIMESTAMP_MAX_MS = 253402300799999;

const Duration = (new Environment().evaluate("duration('0s')") as object).constructor;

const durationNanos = (d: { seconds: bigint; nanos: number }): bigint => d.seconds * 1_000_000_000n + BigInt(d.nanos);

/** Why `value` cannot be a CEL value (cel-go's message), or undefined when it is in range. */
export function rangeError(value: unknown): string | undefined {
  if (typeof value === "bigint") return value < INT64_MIN || value > INT64_MAX ? "integer overflow" : undefined;
  if (value instanceof Date) {
    const t = value.getTime();
    return t < TIMESTAMP_MIN_MS || t > TIMESTAMP_MAX_MS || Number.isNaN(t) ? "timestamp overflow" : undefined;
  }
  if (value instanceof Duration) {
    const ns = durationNanos(value as unknown as { seconds: bigint; nanos: number });
    // cel-go's checked duration arithmetic fails as int64 arithmetic does.
    return ns < INT64_MIN || ns > INT64_MAX ? "integer overflow" : undefined;
  }
  return undefined;
}

/** cel-go's doubleToInt64Checked: both ends are exclusive, so -2^63 as a double overflows too. */
const intOfDoubleOverflows = (v: unknown): boolean => typeof v === "number" && (v <= -(2 ** 63) || v >= 2 ** 63);

/** The operators and conversions whose result may leave its range. */
const ARITHMETIC = new Set(["+", "-", "*", "/", "%", "-_"]);
const CONVERSIONS = new Set(["int", "uint", "duration", "timestamp"]);

interface HandledNode {
  op: string;
  args: unknown;
  handle?: (...params: unknown[]) => unknown;
}

function checked(value: unknown, onError: (message: string) => string = (m) => m): unknown {
  if (value instanceof Promise) return value.then((v) => checked(v, onError));
  const error = rangeError(value);
  if (error) throw new Error(onError(error));
  return value;
}

/** Wraps the handle of an arithmetic or conversion node so that its result is range-checked. */
export function checkRange(n: HandledNode): void {
  const original = n.handle;
  if (!original) return;
  if (ARITHMETIC.has(n.op)) {
    n.handle = (...params: unknown[]) => checked(original(...params));
    return;
  }
  const name = (n.args as [unknown])[0];
  if (n.op !== "call" || typeof name !== "string" || !CONVERSIONS.has(name)) return;
  // Call handles take (values, node, evaluator).
  n.handle = (values: unknown, ...rest: unknown[]) => {
    if (name === "int" && intOfDoubleOverflows((values as unknown[])[0])) throw new Error("integer overflow");
    // time.ParseDuration fails beyond int64 nanoseconds, which cel-go reports as a failed conversion.
    return checked(original(values, ...rest), (m) =>
      name === "duration" ? "type conversion error from 'string' to 'google.protobuf.Duration'" : m,
    );
  };
}
