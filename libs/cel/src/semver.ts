// A semantic version (semver.org 2.0.0) for CEL: the value of a DRA `version` attribute and of
// `semver("1.2.3")`, after the semver library of k8s.io/apiserver/pkg/cel/library (which uses
// github.com/blang/semver/v4's strict parser; the error texts are blang's).

export class SemverError extends Error {}

const ALPHANUMERIC = /^[0-9A-Za-z-]+$/;
const NUMERIC = /^[0-9]+$/;

function numberPart(part: string, what: string): bigint {
  if (!NUMERIC.test(part)) throw new SemverError(`Invalid character(s) found in ${what} number "${part}"`);
  if (part.length > 1 && part.startsWith("0")) {
    throw new SemverError(`${what[0]!.toUpperCase()}${what.slice(1)} number must not contain leading zeroes "${part}"`);
  }
  return BigInt(part);
}

type Identifier = bigint | string;

export class Semver {
  private constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    /** Pre-release identifiers: numeric ones as bigint. */
    readonly pre: readonly Identifier[],
    readonly build: readonly string[],
  ) {}

  static parse(text: string): Semver {
    if (text === "") throw new SemverError("Version string empty");
    let rest = text;
    let build: string[] = [];
    const plus = rest.indexOf("+");
    if (plus >= 0) {
      build = rest.slice(plus + 1).split(".");
      rest = rest.slice(0, plus);
      for (const b of build) {
        if (b === "") throw new SemverError(`Build meta data can not be empty "${b}"`);
        if (!ALPHANUMERIC.test(b)) throw new SemverError(`Invalid character(s) found in build meta data "${b}"`);
      }
    }
    let pre: Identifier[] = [];
    const dash = rest.indexOf("-");
    if (dash >= 0) {
      pre = rest
        .slice(dash + 1)
        .split(".")
        .map((p) => {
          if (p === "") throw new SemverError("Prerelease is empty");
          if (NUMERIC.test(p)) {
            if (p.length > 1 && p.startsWith("0")) {
              throw new SemverError(`Numeric PreRelease version must not contain leading zeroes "${p}"`);
            }
            return BigInt(p);
          }
          if (!ALPHANUMERIC.test(p)) throw new SemverError(`Invalid character(s) found in prerelease "${p}"`);
          return p;
        });
      rest = rest.slice(0, dash);
    }
    const parts = rest.split(".");
    if (parts.length !== 3) throw new SemverError("No Major.Minor.Patch elements found");
    const [major, minor, patch] = parts as [string, string, string];
    return new Semver(numberPart(major, "major"), numberPart(minor, "minor"), numberPart(patch, "patch"), pre, build);
  }

  static isSemver(text: string): boolean {
    try {
      Semver.parse(text);
      return true;
    } catch {
      return false;
    }
  }

  /** Precedence as semver.org 2.0.0 §11: build metadata is ignored. */
  compareTo(other: Semver): -1n | 0n | 1n {
    for (const [a, b] of [
      [this.major, other.major],
      [this.minor, other.minor],
      [this.patch, other.patch],
    ] as const) {
      if (a !== b) return a < b ? -1n : 1n;
    }
    if (this.pre.length === 0 || other.pre.length === 0) {
      return this.pre.length === other.pre.length ? 0n : this.pre.length === 0 ? 1n : -1n;
    }
    for (let i = 0; i < Math.min(this.pre.length, other.pre.length); i++) {
      const a = this.pre[i]!;
      const b = other.pre[i]!;
      if (a === b) continue;
      if (typeof a !== typeof b) return typeof a === "bigint" ? -1n : 1n;
      return a < b ? -1n : 1n;
    }
    return this.pre.length === other.pre.length ? 0n : this.pre.length < other.pre.length ? -1n : 1n;
  }

  toString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.pre.length) s += `-${this.pre.join(".")}`;
    if (this.build.length) s += `+${this.build.join(".")}`;
    return s;
  }
}
