// Kubernetes' quantity and semver CEL libraries (k8s.io/apiserver/pkg/cel/library quantity.go,
// semverlib.go), registered on any environment that offers them.
import type { Environment } from "@marcbachmann/cel-js";
import { Quantity } from "./quantity.js";
import { Semver } from "./semver.js";

const Q = "kubernetes.Quantity";
const S = "kubernetes.Semver";

export function registerQuantityAndSemver(env: Environment): Environment {
  return env
    .registerType(Q, Quantity)
    .registerType(S, Semver)
    .registerFunction(`quantity(string): ${Q}`, (s: string) => Quantity.parse(s))
    .registerFunction("isQuantity(string): bool", (s: string) => Quantity.isQuantity(s))
    .registerFunction(`${Q}.sign(): int`, (q: Quantity) => q.sign())
    .registerFunction(`${Q}.isInteger(): bool`, (q: Quantity) => q.isInteger())
    .registerFunction(`${Q}.asInteger(): int`, (q: Quantity) => q.asInteger())
    .registerFunction(`${Q}.asApproximateFloat(): double`, (q: Quantity) => q.asApproximateFloat())
    .registerFunction(`${Q}.add(${Q}): ${Q}`, (a: Quantity, b: Quantity) => a.add(b))
    .registerFunction(`${Q}.add(int): ${Q}`, (a: Quantity, b: bigint) => a.add(Quantity.ofInteger(b)))
    .registerFunction(`${Q}.sub(${Q}): ${Q}`, (a: Quantity, b: Quantity) => a.add(b.negate()))
    .registerFunction(`${Q}.sub(int): ${Q}`, (a: Quantity, b: bigint) => a.add(Quantity.ofInteger(-b)))
    .registerFunction(`${Q}.isLessThan(${Q}): bool`, (a: Quantity, b: Quantity) => a.compareTo(b) < 0n)
    .registerFunction(`${Q}.isGreaterThan(${Q}): bool`, (a: Quantity, b: Quantity) => a.compareTo(b) > 0n)
    .registerFunction(`${Q}.compareTo(${Q}): int`, (a: Quantity, b: Quantity) => a.compareTo(b))
    .registerOperator(`${Q} == ${Q}`, (a: Quantity, b: Quantity) => a.compareTo(b) === 0n)
    .registerFunction(`semver(string): ${S}`, (s: string) => Semver.parse(s))
    .registerFunction("isSemver(string): bool", (s: string) => Semver.isSemver(s))
    .registerFunction(`${S}.isLessThan(${S}): bool`, (a: Semver, b: Semver) => a.compareTo(b) < 0n)
    .registerFunction(`${S}.isGreaterThan(${S}): bool`, (a: Semver, b: Semver) => a.compareTo(b) > 0n)
    .registerFunction(`${S}.compareTo(${S}): int`, (a: Semver, b: Semver) => a.compareTo(b))
    .registerFunction(`${S}.major(): int`, (v: Semver) => v.major)
    .registerFunction(`${S}.minor(): int`, (v: Semver) => v.minor)
    .registerFunction(`${S}.patch(): int`, (v: Semver) => v.patch)
    .registerOperator(`${S} == ${S}`, (a: Semver, b: Semver) => a.compareTo(b) === 0n);
}
