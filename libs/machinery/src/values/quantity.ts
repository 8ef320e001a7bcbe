// Resource quantities (`500m`, `1Gi`, `1e3`) as k8s.io/apimachinery/pkg/api/resource parses, compares
// and prints them. The value is kept exact as mantissa × 10^exponent (BigInt mantissa), rounded up to
// nano precision as Kubernetes does; nothing is ever a float.
//
// Grammar (resource.ParseQuantity):
//   <quantity> ::= <signedNumber><suffix>
//   <number>   ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//   <suffix>   ::= Ki | Mi | Gi | Ti | Pi | Ei | n | u | m | "" | k | M | G | T | P | E | (e|E)<signedNumber>

export type QuantityFormat = "DecimalExponent" | "BinarySI" | "DecimalSI";

export interface Quantity {
  /** The value is mantissa × 10^exponent. */
  readonly mantissa: bigint;
  readonly exponent: number;
  /** How it prints: the kind of suffix it was written with. */
  readonly format: QuantityFormat;
  /** The text it was parsed from, when Kubernetes keeps that text for printing. */
  readonly text?: string;
}

const splitRE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/** resource.ErrFormatWrong, ErrNumeric, ErrSuffix: the texts clients see in a 400. */
export const quantityErrors = {
  format: `quantities must match the regular expression '${splitRE}'`,
  numeric: "unable to parse numeric part of quantity",
  suffix: "unable to parse quantity's suffix",
} as const;

export class QuantityError extends Error {}

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const SUFFIX_CHARS = "eEinumkKMGTP";

interface Scanned {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** parseQuantityString, step for step (it accepts `+`, `.` and `1.` as Kubernetes does). */
function scan(str: string): Scanned {
  let positive = true;
  let pos = 0;
  const end = str.length;
  const done = (num: string, denom = "", suffix = ""): Scanned => ({ positive, num, denom, suffix });
  if (str[0] === "-") {
    positive = false;
    pos++;
  } else if (str[0] === "+") pos++;
  // Leading zeros.
  while (pos < end && str[pos] === "0") pos++;
  if (pos >= end) return done("0");
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  const num = str.slice(pos, i) || "0";
  if (i >= end) return done(num);
  pos = i;
  let denom = "";
  if (str[pos] === ".") {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return done(num, denom);
    pos = i;
  }
  const suffixStart = pos;
  i = pos;
  while (i < end && SUFFIX_CHARS.includes(str[i]!)) i++;
  if (i >= end) return done(num, denom, str.slice(suffixStart));
  pos = i;
  if (str[pos] === "-" || str[pos] === "+") pos++;
  i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return done(num, denom, str.slice(suffixStart));
  throw new QuantityError(quantityErrors.format);
}

interface Suffix {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** quantitySuffixer.interpret. */
function interpret(suffix: string): Suffix | undefined {
  if (Object.hasOwn(decimalSuffixes, suffix)) return { base: 10, exponent: decimalSuffixes[suffix]!, format: "DecimalSI" };
  if (Object.hasOwn(binarySuffixes, suffix)) return { base: 2, exponent: binarySuffixes[suffix]!, format: "BinarySI" };
  if (suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E")) {
    const digits = suffix.slice(1);
    if (!/^[+-]?[0-9]+$/.test(digits)) return undefined;
    const parsed = BigInt(digits);
    if (parsed > INT64_MAX || parsed < INT64_MIN) return undefined;
    // Go keeps int32(parsed).
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: "DecimalExponent" };
  }
  return undefined;
}

const abs = (n: bigint) => (n < 0n ? -n : n);
const pow10 = (n: number) => 10n ** BigInt(n);
const digitCount = (n: bigint) => (n === 0n ? 0 : abs(n).toString().length);

/** Division rounding away from zero (inf.RoundUp). */
function divAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d === 0n ? q : n < 0n ? q - 1n : q + 1n;
}

/** Whether Kubernetes' fast path keeps the text it parsed (it then prints that text back). */
function keepsText(s: Scanned, suffix: Suffix): boolean {
  const shifted = s.num + s.denom;
  if (suffix.format === "BinarySI") {
    if (suffix.exponent < 0 || s.denom.length > 0) return false;
    const precision = 15 - s.num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
    if (precision < 0) return false;
    const value = BigInt(shifted);
    if (value << BigInt(suffix.exponent) > INT64_MAX) return false;
    return suffix.exponent % 10 === 0 && (value & 7n) !== 0n;
  }
  if (18 - shifted.length < 0) return false;
  const scale = suffix.exponent - s.denom.length;
  if (scale < -9) return false;
  return scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
}

/** resource.ParseQuantity. Throws QuantityError with Kubernetes' message. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(quantityErrors.format);
  if (str === "0") return { mantissa: 0n, exponent: 0, format: "DecimalSI", text: "0" };
  const s = scan(str);
  const suffix = interpret(s.suffix);
  if (!suffix) throw new QuantityError(quantityErrors.suffix);
  let mantissa = BigInt(s.num + s.denom);
  let exponent = -s.denom.length;
  if (suffix.base === 10) exponent += suffix.exponent;
  else mantissa <<= BigInt(suffix.exponent);
  // Round up (away from zero) to nano precision; a non-zero value never becomes zero.
  if (exponent < -9) {
    const shift = -9 - exponent;
    mantissa = shift > digitCount(mantissa) ? (mantissa === 0n ? 0n : 1n) : divAwayFromZero(mantissa, pow10(shift));
    exponent = -9;
  }
  let format = suffix.format;
  if (format === "BinarySI") {
    // Binary quantities are capped at 2^63-1 in magnitude; below 1 they print as decimals.
    if (exponent >= 0 ? mantissa * pow10(exponent) > INT64_MAX : mantissa > INT64_MAX * pow10(-exponent)) {
      mantissa = INT64_MAX;
      exponent = 0;
    }
    if (mantissa !== 0n && (exponent >= 0 ? false : mantissa < pow10(-exponent))) format = "DecimalSI";
  }
  if (!s.positive) mantissa = -mantissa;
  const text = keepsText(s, suffix) ? str : undefined;
  return text === undefined ? { mantissa, exponent, format } : { mantissa, exponent, format, text };
}

/** Quantity.UnmarshalJSON: a JSON string or number, surrounding spaces ignored. */
export function parseQuantityJSON(value: string | number): Quantity {
  return parseQuantity(String(value).trim());
}

export function quantitySign(q: Quantity): -1 | 0 | 1 {
  return q.mantissa === 0n ? 0 : q.mantissa < 0n ? -1 : 1;
}

/** Quantity.Cmp: -1, 0 or 1. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const sa = quantitySign(a);
  const sb = quantitySign(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  // Same sign: compare magnitudes, first by order of magnitude so huge exponents are never expanded.
  const ma = digitCount(a.mantissa) + a.exponent;
  const mb = digitCount(b.mantissa) + b.exponent;
  let cmp: number;
  if (Math.abs(ma - mb) > 1) cmp = ma < mb ? -1 : 1;
  else {
    const e = Math.min(a.exponent, b.exponent);
    const x = abs(a.mantissa) * pow10(a.exponent - e);
    const y = abs(b.mantissa) * pow10(b.exponent - e);
    cmp = x === y ? 0 : x < y ? -1 : 1;
  }
  return (sa < 0 ? -cmp : cmp) as -1 | 0 | 1;
}

/**
 * Quantity.ScaledValue: the value divided by 10^scale, rounded away from zero. Like Go's, it is an
 * int64: beyond that range it saturates, instead of building a number of billions of digits for
 * `1e2147483647` (which Kubernetes parses).
 */
export function quantityScaledValue(q: Quantity, scale: number): bigint {
  const e = q.exponent - scale;
  if (e < 0) return divAwayFromZero(q.mantissa, pow10(-e));
  if (digitCount(q.mantissa) + e > 19) return q.mantissa === 0n ? 0n : q.mantissa < 0n ? INT64_MIN : INT64_MAX;
  const value = q.mantissa * pow10(e);
  return value > INT64_MAX ? INT64_MAX : value < INT64_MIN ? INT64_MIN : value;
}

/** Quantity.Value (whole units, rounded away from zero). */
export const quantityValue = (q: Quantity): bigint => quantityScaledValue(q, 0);
/** Quantity.MilliValue. */
export const quantityMilliValue = (q: Quantity): bigint => quantityScaledValue(q, -3);

const decimalSuffixByExponent = new Map(Object.entries(decimalSuffixes).map(([s, e]) => [e, s]));
const binarySuffixByExponent = new Map(Object.entries(binarySuffixes).map(([s, e]) => [e, s]));

/** Removes the factors `base` from a non-zero value: the rest and how many were removed. */
function removeFactors(value: bigint, base: bigint): [bigint, number] {
  let times = 0;
  while (value !== 0n && value % base === 0n) {
    value /= base;
    times++;
  }
  return [value, times];
}

/** Quantity.String: the canonical form (`1.5` → `1500m`, `1.5Gi` → `1536Mi`), or the kept text. */
export function formatQuantity(q: Quantity): string {
  if (q.text !== undefined) return q.text;
  if (q.mantissa === 0n) return "0";
  let format = q.format;
  if (format === "BinarySI") {
    const small =
      compareQuantities(q, { mantissa: -1024n, exponent: 0, format }) > 0 &&
      compareQuantities(q, { mantissa: 1024n, exponent: 0, format }) < 0;
    const integer = q.exponent >= 0 || q.mantissa % pow10(-q.exponent) === 0n;
    if (small || !integer) format = "DecimalSI";
  }
  if (format === "BinarySI") {
    const [rest, times] = removeFactors(quantityValue(q), 1024n);
    return `${rest}${binarySuffixByExponent.get(times * 10) ?? ""}`;
  }
  let [mantissa, times] = removeFactors(q.mantissa, 10n);
  let exponent = q.exponent + times;
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  // Kubernetes prints no suffix at all for a decimal exponent it has no letter for (e.g. 10^21).
  const suffix = format === "DecimalSI" ? (decimalSuffixByExponent.get(exponent) ?? "") : exponent === 0 ? "" : `e${exponent}`;
  return `${mantissa}${suffix}`;
}

/** Parses and re-prints as Kubernetes stores a quantity; throws QuantityError. */
export const canonicalQuantity = (value: string | number): string => formatQuantity(parseQuantityJSON(value));
