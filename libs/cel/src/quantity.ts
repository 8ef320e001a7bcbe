// A resource quantity (`40Gi`, `500m`, `1e3`) for CEL, after k8s.io/apimachinery/pkg/api/resource and
// the quantity library of k8s.io/apiserver/pkg/cel/library. Values are exact rationals; Kubernetes'
// canonical rounding to nano units is not reproduced (comparisons are exact instead).

/** resource.ErrFormatWrong */
const FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** resource.ErrSuffix */
const SUFFIX_WRONG = "unable to parse quantity's suffix";

const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Readonly<Record<string, bigint>> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
/** Bounds the exponent so that `1e999999999` cannot build a huge number. */
const MAX_EXPONENT = 1000;

const pow10 = (n: number) => 10n ** BigInt(n);
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));

export class QuantityError extends Error {}

export class Quantity {
  /** The value is `numerator / denominator`, denominator > 0, in lowest terms. */
  readonly numerator: bigint;
  readonly denominator: bigint;

  constructor(numerator: bigint, denominator = 1n) {
    if (denominator < 0n) [numerator, denominator] = [-numerator, -denominator];
    const g = gcd(numerator, denominator) || 1n;
    this.numerator = numerator / g;
    this.denominator = denominator / g;
  }

  static parse(text: string): Quantity {
    const m = SHAPE.exec(text.trim() === text ? text : "");
    const [, sign = "", whole = "", fraction = "", suffix = ""] = m ?? [];
    if (!m || (whole === "" && fraction === "")) throw new QuantityError(FORMAT_WRONG);
    let numerator = BigInt(`${sign}${whole || "0"}${fraction}`);
    let denominator = pow10(fraction.length);
    const binary = BINARY_SUFFIXES[suffix];
    const decimal = DECIMAL_SUFFIXES[suffix];
    let exponent: number;
    if (binary !== undefined) {
      numerator *= 1n << binary;
      exponent = 0;
    } else if (decimal !== undefined) {
      exponent = decimal;
    } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
      exponent = Number(suffix.slice(1));
      if (Math.abs(exponent) > MAX_EXPONENT) throw new QuantityError(SUFFIX_WRONG);
    } else {
      throw new QuantityError(SUFFIX_WRONG);
    }
    if (exponent >= 0) numerator *= pow10(exponent);
    else denominator *= pow10(-exponent);
    return new Quantity(numerator, denominator);
  }

  static isQuantity(text: string): boolean {
    try {
      Quantity.parse(text);
      return true;
    } catch {
      return false;
    }
  }

  compareTo(other: Quantity): -1n | 0n | 1n {
    const l = this.numerator * other.denominator;
    const r = other.numerator * this.denominator;
    return l < r ? -1n : l > r ? 1n : 0n;
  }

  add(other: Quantity): Quantity {
    return new Quantity(
      this.numerator * other.denominator + other.numerator * this.denominator,
      this.denominator * other.denominator,
    );
  }

  negate(): Quantity {
    return new Quantity(-this.numerator, this.denominator);
  }

  sign(): bigint {
    return this.numerator < 0n ? -1n : this.numerator > 0n ? 1n : 0n;
  }

  isInteger(): boolean {
    return this.denominator === 1n;
  }

  /** The value as an int64; throws when it is fractional or out of range, as Kubernetes' asInteger. */
  asInteger(): bigint {
    const v = this.numerator;
    if (!this.isInteger() || v > 0x7fffffffffffffffn || v < -0x8000000000000000n) {
      throw new QuantityError("cannot convert value to integer");
    }
    return v;
  }

  asApproximateFloat(): number {
    return Number(this.numerator) / Number(this.denominator);
  }

  toString(): string {
    return this.isInteger() ? String(this.numerator) : `${this.numerator}/${this.denominator}`;
  }
}
