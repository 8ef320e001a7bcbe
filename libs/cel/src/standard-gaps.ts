// Standard CEL functions and operators @marcbachmann/cel-js 8 lacks, found by the cel-spec conformance
// suite (docs/cel.md): ordering of bytes, the conversions int(uint), int(timestamp),
// string(timestamp), string(duration) and the identities duration(duration), timestamp(timestamp),
// optional.ofNonZeroValue(), equality of optionals and their type, optional_type. Registered on the CRD rule environment.
import { type Environment, Optional } from "@marcbachmann/cel-js";
import { rfc3339 } from "./timestamps.js";

export { rfc3339 };

const TS = "google.protobuf.Timestamp";
const DUR = "google.protobuf.Duration";
const INT64_MAX = 2n ** 63n - 1n;

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** cel-go's zero values: what optional.ofNonZeroValue() turns into optional.none(). */
function isZero(v: unknown): boolean {
  if (v === null || v === false || v === 0 || v === 0n || v === "") return true;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length === 0;
  if (v instanceof Map || v instanceof Set) return v.size === 0;
  // Go's zero time, 0001-01-01T00:00:00Z.
  if (v instanceof Date) return v.getTime() === -62135596800000;
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) return Object.keys(v as object).length === 0;
  // UnsignedInt and Duration are valued by valueOf().
  if (typeof v === "object" && typeof (v as { valueOf(): unknown }).valueOf() !== "object") return Number((v as object).valueOf()) === 0;
  return false;
}

export function registerStandardGaps(env: Environment, equals: (a: unknown, b: unknown) => boolean): Environment {
  // The type of optional values, which the engine has but does not name: cel-go's optional_type.
  const TypeValue = (env.evaluate("int") as object).constructor as new (name: string) => object;
  const optionalType = new TypeValue("optional_type");
  for (const [op, test] of [
    ["<", (c: number) => c < 0],
    ["<=", (c: number) => c <= 0],
    [">", (c: number) => c > 0],
    [">=", (c: number) => c >= 0],
  ] as const) {
    env.registerOperator(`bytes ${op} bytes`, (a: Uint8Array, b: Uint8Array) => test(compareBytes(a, b)));
  }
  return env
    .registerFunction("int(uint): int", (u: { valueOf(): bigint }) => {
      const v = u.valueOf();
      if (v > INT64_MAX) throw new Error("integer overflow");
      return v;
    })
    .registerFunction(`int(${TS}): int`, (d: Date) => BigInt(Math.floor(d.getTime() / 1000)))
    .registerFunction(`string(${TS}): string`, rfc3339)
    .registerFunction(`string(${DUR}): string`, (d: object) => String(d))
    .registerFunction(`duration(${DUR}): ${DUR}`, (d: object) => d)
    .registerFunction(`timestamp(${TS}): ${TS}`, (d: Date) => d)
    .registerFunction("OptionalNamespace.ofNonZeroValue(A): optional<A>", (_: unknown, v: unknown) =>
      isZero(v) ? Optional.none() : Optional.of(v),
    )
    .registerConstant("optional_type", "type", optionalType)
    .registerFunction("type(optional<A>): type", () => optionalType)
    .registerOperator("optional<A> == optional<A>", (a: Optional, b: Optional) =>
      a.hasValue() && b.hasValue() ? equals(a.value(), b.value()) : a.hasValue() === b.hasValue(),
    );
}
