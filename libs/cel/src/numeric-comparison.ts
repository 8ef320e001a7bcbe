// cel-go's comparisons across int, uint and double (CrossTypeNumericComparisons, which Kubernetes
// enables), where @marcbachmann/cel-js 8 differs: an int and a double compare as cel-go's
// compareIntDouble does (as doubles, unless the double lies outside int64), `in` finds 3u in [1, 2, 3],
// and a list is indexed by a uint or an integral double.
import { Environment } from "@marcbachmann/cel-js";

const UnsignedInt = (new Environment().evaluate("0u") as object).constructor;

const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;

/** An int or uint as a bigint, a double as a number, anything else undefined. */
function numeric(v: unknown): bigint | number | undefined {
  if (typeof v === "bigint" || typeof v === "number") return v;
  if (v instanceof UnsignedInt) return (v as { valueOf(): bigint }).valueOf();
  return undefined;
}

/** -1, 0 or 1 as cel-go orders an integer and a double; NaN when the double is NaN. */
function compareIntegerDouble(i: bigint, d: number, unsigned: boolean): number {
  if (Number.isNaN(d)) return Number.NaN;
  if (d < (unsigned ? 0 : -TWO_63)) return 1;
  if (d > (unsigned ? TWO_64 : TWO_63)) return -1;
  const x = Number(i);
  return x < d ? -1 : x > d ? 1 : 0;
}

/** cel-go's order of two numbers of any numeric types; NaN when unordered, undefined when not both numbers. */
export function compareNumbers(a: unknown, b: unknown): number | undefined {
  const x = numeric(a);
  const y = numeric(b);
  if (x === undefined || y === undefined) return undefined;
  if (typeof x === "number" && typeof y === "number") return x < y ? -1 : x > y ? 1 : x === y ? 0 : Number.NaN;
  if (typeof x === "bigint" && typeof y === "bigint") return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === "bigint") return compareIntegerDouble(x, y as number, a instanceof UnsignedInt);
  return -compareIntegerDouble(y as bigint, x, b instanceof UnsignedInt);
}

/** Whether two numbers differ in type (int, uint, double): only then does cel-go's comparison differ. */
const mixed = (a: unknown, b: unknown): boolean =>
  numeric(a) !== undefined && numeric(b) !== undefined && (typeof a !== typeof b || a instanceof UnsignedInt !== b instanceof UnsignedInt);

const ORDER: Record<string, (c: number) => boolean> = {
  "<": (c) => c < 0,
  "<=": (c) => c <= 0,
  ">": (c) => c > 0,
  ">=": (c) => c >= 0,
  "==": (c) => c === 0,
  "!=": (c) => c !== 0,
};

interface HandledNode {
  op: string;
  handle?: (...params: unknown[]) => unknown;
}

/** Wraps a comparison, `in` or index node so that numbers of different types compare as in cel-go. */
export function compareNumbersAcrossTypes(n: HandledNode): void {
  const original = n.handle;
  if (!original) return;
  const test = ORDER[n.op];
  if (test) {
    n.handle = (left: unknown, right: unknown, ...rest: unknown[]) =>
      mixed(left, right) ? test(compareNumbers(left, right)!) : original(left, right, ...rest);
  } else if (n.op === "in") {
    n.handle = (left: unknown, right: unknown, ...rest: unknown[]) =>
      Array.isArray(right) && numeric(left) !== undefined
        ? right.some((e) => compareNumbers(left, e) === 0)
        : original(left, right, ...rest);
  } else if (n.op === "[]") {
    n.handle = (left: unknown, right: unknown, ...rest: unknown[]) => {
      if (!Array.isArray(left) || typeof right === "bigint") return original(left, right, ...rest);
      const index = numeric(right);
      if (index === undefined) return original(left, right, ...rest);
      if (typeof index === "number" && !Number.isInteger(index)) throw new Error("unsupported index value");
      return original(left, BigInt(index), ...rest);
    };
  }
}
