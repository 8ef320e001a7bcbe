// CEL's quantity type (the quantity library of k8s.io/apiserver/pkg/cel/library) over the one
// Quantity of @orch/machinery: parsed, compared and printed exactly as the apiserver stores quantities
// (values rounded up to nano units at parse, as resource.ParseQuantity does).
import {
  type Quantity as QuantityValue,
  QuantityError,
  compareQuantities,
  formatQuantity,
  parseQuantity,
  quantitySign,
} from "@orch/machinery";

export { QuantityError };

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const pow10 = (n: number) => 10n ** BigInt(n);
/** Decimal places an addition may align: `1e2147483647 + 1` would otherwise build a number of 2 billion digits. */
const MAX_ALIGNMENT = 1000;

export class Quantity {
  constructor(readonly value: QuantityValue) {}

  static parse(text: string): Quantity {
    return new Quantity(parseQuantity(text));
  }

  /** An integer as a quantity (what `add(int)` and `sub(int)` take). */
  static ofInteger(n: bigint): Quantity {
    return new Quantity({ mantissa: n, exponent: 0, format: "DecimalSI" });
  }

  static isQuantity(text: string): boolean {
    try {
      parseQuantity(text);
      return true;
    } catch {
      return false;
    }
  }

  compareTo(other: Quantity): -1n | 0n | 1n {
    return BigInt(compareQuantities(this.value, other.value)) as -1n | 0n | 1n;
  }

  /** Quantity.Add: exact, in the receiver's format; refused when the exponents are too far apart to align. */
  add(other: Quantity): Quantity {
    const a = this.value;
    const b = other.value;
    if (Math.abs(a.exponent - b.exponent) > MAX_ALIGNMENT) throw new QuantityError("quantities too far apart in magnitude to add");
    const exponent = Math.min(a.exponent, b.exponent);
    const mantissa = a.mantissa * pow10(a.exponent - exponent) + b.mantissa * pow10(b.exponent - exponent);
    return new Quantity({ mantissa, exponent, format: a.format });
  }

  negate(): Quantity {
    return new Quantity({ mantissa: -this.value.mantissa, exponent: this.value.exponent, format: this.value.format });
  }

  sign(): bigint {
    return BigInt(quantitySign(this.value));
  }

  /** A whole number within int64. */
  isInteger(): boolean {
    return this.integer() !== undefined;
  }

  /** The value as an int64; Kubernetes' error when it is fractional or out of range. */
  asInteger(): bigint {
    const n = this.integer();
    if (n === undefined) throw new QuantityError("cannot convert value to integer");
    return n;
  }

  asApproximateFloat(): number {
    return Number(this.value.mantissa) * 10 ** this.value.exponent;
  }

  toString(): string {
    return formatQuantity(this.value);
  }

  private integer(): bigint | undefined {
    const { mantissa, exponent } = this.value;
    let n: bigint;
    if (exponent > 19 && mantissa !== 0n) return undefined;
    if (exponent >= 0) n = mantissa * pow10(exponent);
    else if (mantissa % pow10(-exponent) === 0n) n = mantissa / pow10(-exponent);
    else return undefined;
    return n > INT64_MAX || n < INT64_MIN ? undefined : n;
  }
}
