// Kubernetes' CEL extension libraries beyond quantity and semver (k8s.io/apiserver/pkg/cel/library:
// ip.go, cidr.go, urls.go, format.go, regex.go) and the cel-go extensions Kubernetes 1.32 enables
// (ext.Strings v2: quote, format; ext.Sets), with Kubernetes' function names, results and error texts.
// Namespaced functions (`ip.isCanonical`, `format.named`, `sets.contains`, `strings.quote`) are methods
// of a namespace constant, the way the engine itself declares `optional.of`.
import { rfc3339 } from "./standard-gaps.js";
import { Environment, Optional } from "@marcbachmann/cel-js";
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from "@orch/machinery";
import { type GoURL, escapedPath, hostname, parseRequestURI, port, query } from "./gourl.js";
import { type Addr, type Prefix, parseAddr, parsePrefix } from "./netip.js";
import { regexpFind, regexpFindAll } from "./re2.js";
import { celEquals } from "./values.js";

// ---------------------------------------------------------------------------------------------
// IP and CIDR (library/ip.go, cidr.go)
// ---------------------------------------------------------------------------------------------

/** A value of CEL type net.IP. */
export class IPValue {
  constructor(readonly addr: Addr) {}
  equals(other: IPValue): boolean {
    return this.addr.equals(other.addr);
  }
}

/** A value of CEL type net.CIDR. */
export class CIDRValue {
  constructor(readonly prefix: Prefix) {}
  equals(other: CIDRValue): boolean {
    return this.prefix.equals(other.prefix);
  }
}

/** library/ip.go parseIPAddr: Go's parser, no zones, no IPv4-mapped IPv6. */
function parseIPAddr(raw: string): Addr {
  let addr: Addr;
  try {
    addr = parseAddr(raw);
  } catch (e) {
    throw new Error(`IP Address ${JSON.stringify(raw)} parse error during conversion from string: ${(e as Error).message}`);
  }
  if (addr.zone !== "") throw new Error(`IP address ${JSON.stringify(raw)} with zone value is not allowed`);
  if (addr.is4In6()) throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  return addr;
}

/** library/cidr.go parseCIDR (its caller adds the same prefix again, as Kubernetes does). */
function parseCIDR(raw: string): Prefix {
  let prefix: Prefix;
  try {
    prefix = parsePrefix(raw);
  } catch (e) {
    throw new Error(`network address parse error during conversion from string: ${(e as Error).message}`);
  }
  if (prefix.addr.is4In6()) throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  return prefix;
}

const succeeds = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};

function stringToCIDR(s: string): CIDRValue {
  try {
    return new CIDRValue(parseCIDR(s));
  } catch (e) {
    throw new Error(`network address parse error during conversion from string: ${(e as Error).message}`);
  }
}

class IPNamespace {}
class FormatNamespace {}
class SetsNamespace {}
class StringsNamespace {}

function registerIPAndCIDR(env: Environment): void {
  const IP = "net.IP";
  const CIDR = "net.CIDR";
  env
    .registerType(IP, IPValue)
    .registerType(CIDR, CIDRValue)
    .registerType("kubernetes.IPNamespace", IPNamespace)
    .registerConstant("ip", "kubernetes.IPNamespace", new IPNamespace())
    .registerFunction(`ip(string): ${IP}`, (s: string) => new IPValue(parseIPAddr(s)))
    .registerFunction("isIP(string): bool", (s: string) => succeeds(() => parseIPAddr(s)))
    .registerFunction("kubernetes.IPNamespace.isCanonical(string): bool", (_: IPNamespace, s: string) => parseIPAddr(s).toString() === s)
    .registerFunction(`${IP}.family(): int`, (ip: IPValue) => (ip.addr.is4() ? 4n : 6n))
    .registerFunction(`${IP}.isUnspecified(): bool`, (ip: IPValue) => ip.addr.isUnspecified())
    .registerFunction(`${IP}.isLoopback(): bool`, (ip: IPValue) => ip.addr.isLoopback())
    .registerFunction(`${IP}.isLinkLocalMulticast(): bool`, (ip: IPValue) => ip.addr.isLinkLocalMulticast())
    .registerFunction(`${IP}.isLinkLocalUnicast(): bool`, (ip: IPValue) => ip.addr.isLinkLocalUnicast())
    .registerFunction(`${IP}.isGlobalUnicast(): bool`, (ip: IPValue) => ip.addr.isGlobalUnicast())
    .registerFunction(`string(${IP}): string`, (ip: IPValue) => ip.addr.toString())
    .registerOperator(`${IP} == ${IP}`, (a: IPValue, b: IPValue) => a.equals(b))
    .registerFunction(`cidr(string): ${CIDR}`, stringToCIDR)
    .registerFunction("isCIDR(string): bool", (s: string) => succeeds(() => parseCIDR(s)))
    .registerFunction(`${CIDR}.containsIP(string): bool`, (c: CIDRValue, s: string) => c.prefix.contains(parseIPAddr(s)))
    .registerFunction(`${CIDR}.containsIP(${IP}): bool`, (c: CIDRValue, ip: IPValue) => c.prefix.contains(ip.addr))
    .registerFunction(`${CIDR}.containsCIDR(string): bool`, (c: CIDRValue, s: string) => containsCIDR(c, stringToCIDR(s)))
    .registerFunction(`${CIDR}.containsCIDR(${CIDR}): bool`, containsCIDR)
    .registerFunction(`${CIDR}.ip(): ${IP}`, (c: CIDRValue) => new IPValue(c.prefix.addr))
    .registerFunction(`${CIDR}.prefixLength(): int`, (c: CIDRValue) => BigInt(c.prefix.bits))
    .registerFunction(`${CIDR}.masked(): ${CIDR}`, (c: CIDRValue) => new CIDRValue(c.prefix.masked()))
    .registerFunction(`string(${CIDR}): string`, (c: CIDRValue) => c.prefix.toString())
    .registerOperator(`${CIDR} == ${CIDR}`, (a: CIDRValue, b: CIDRValue) => a.equals(b));
  // The type names `net.IP` and `net.CIDR` (`type(ip(x)) == net.IP`): a constant `net` whose members
  // are the types, as the engine names google.protobuf.Timestamp.
  const typeOf = (expression: string) => env.evaluate(`type(${expression})`);
  env.registerConstant("net", "map<string, type>", { IP: typeOf("ip('0.0.0.0')"), CIDR: typeOf("cidr('0.0.0.0/0')") });
}

function containsCIDR(c: CIDRValue, other: CIDRValue): boolean {
  return c.prefix.overlaps(other.prefix) && c.prefix.bits <= other.prefix.bits;
}

// ---------------------------------------------------------------------------------------------
// URLs (library/urls.go)
// ---------------------------------------------------------------------------------------------

/** A value of CEL type kubernetes.URL: the URL without its fragment, and the fragment. */
export class URLValue {
  constructor(
    readonly url: GoURL,
    readonly fragment = "",
  ) {}
  equals(other: URLValue): boolean {
    return this.fragment === other.fragment && JSON.stringify(this.url) === JSON.stringify(other.url);
  }
}

/**
 * Kubernetes' url(): checked with ParseRequestURI (an absolute URI or path), then parsed as url.Parse
 * does, which cuts the `#fragment` first (ParseRequestURI would leave it in the path or the query).
 */
function stringToURL(s: string): URLValue {
  try {
    const checked = parseRequestURI(s);
    const hash = s.indexOf("#");
    return hash < 0 ? new URLValue(checked) : new URLValue(parseRequestURI(s.slice(0, hash)), s.slice(hash + 1));
  } catch (e) {
    throw new Error(`URL parse error during conversion from string: ${(e as Error).message}`);
  }
}

function registerURLs(env: Environment): void {
  const U = "kubernetes.URL";
  env
    .registerType(U, URLValue)
    .registerFunction(`url(string): ${U}`, stringToURL)
    .registerFunction("isURL(string): bool", (s: string) => succeeds(() => parseRequestURI(s)))
    .registerFunction(`${U}.getScheme(): string`, (u: URLValue) => u.url.scheme)
    .registerFunction(`${U}.getHost(): string`, (u: URLValue) => u.url.host)
    .registerFunction(`${U}.getHostname(): string`, (u: URLValue) => hostname(u.url))
    .registerFunction(`${U}.getPort(): string`, (u: URLValue) => port(u.url))
    .registerFunction(`${U}.getEscapedPath(): string`, (u: URLValue) => escapedPath(u.url))
    .registerFunction(`${U}.getQuery(): map<string, list<string>>`, (u: URLValue) => query(u.url))
    .registerOperator(`${U} == ${U}`, (a: URLValue, b: URLValue) => a.equals(b));
}

// ---------------------------------------------------------------------------------------------
// Named formats (library/format.go)
// ---------------------------------------------------------------------------------------------

/** A value of CEL type kubernetes.NamedFormat. */
export class NamedFormat {
  constructor(
    readonly name: string,
    readonly validate: (s: string) => string[],
  ) {}
}

/** apimachinery's maskTrailingDash: a prefix may end in a dash that generateName completes. */
const maskTrailingDash = (s: string): string => (s.length > 1 && s.endsWith("-") ? `${s.slice(0, -1)}a` : s);

const uuidPattern = /^(?:[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})$/i;
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;

function isDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function isDateTime(s: string): boolean {
  const m = /^([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/.exec(s);
  return m !== null && isDate(m[1] ?? "") && Number(m[2]) <= 23 && Number(m[3]) <= 59 && Number(m[4]) <= 60;
}

const namedFormats: Record<string, NamedFormat> = {
  dns1123Label: new NamedFormat("DNS1123Label", isDNS1123Label),
  dns1123Subdomain: new NamedFormat("DNS1123Subdomain", isDNS1123Subdomain),
  dns1035Label: new NamedFormat("DNS1035Label", isDNS1035Label),
  qualifiedName: new NamedFormat("QualifiedName", isQualifiedName),
  dns1123LabelPrefix: new NamedFormat("DNS1123LabelPrefix", (s) => isDNS1123Label(maskTrailingDash(s))),
  dns1123SubdomainPrefix: new NamedFormat("DNS1123SubdomainPrefix", (s) => isDNS1123Subdomain(maskTrailingDash(s))),
  dns1035LabelPrefix: new NamedFormat("DNS1035LabelPrefix", (s) => isDNS1035Label(maskTrailingDash(s))),
  labelValue: new NamedFormat("LabelValue", isValidLabelValue),
  uri: new NamedFormat("URI", (s) => {
    try {
      parseRequestURI(s);
      return [];
    } catch (e) {
      return [(e as Error).message];
    }
  }),
  uuid: new NamedFormat("uuid", (s) => (uuidPattern.test(s) ? [] : ["does not match the UUID format"])),
  byte: new NamedFormat("byte", (s) => (base64Pattern.test(s) ? [] : ["invalid base64"])),
  date: new NamedFormat("date", (s) => (isDate(s) ? [] : ["invalid date"])),
  datetime: new NamedFormat("datetime", (s) => (isDateTime(s) ? [] : ["invalid datetime"])),
};

function registerFormats(env: Environment): void {
  const F = "kubernetes.NamedFormat";
  const NS = "kubernetes.FormatNamespace";
  env
    .registerType(F, NamedFormat)
    .registerType(NS, FormatNamespace)
    .registerConstant("format", NS, new FormatNamespace())
    .registerFunction(`${NS}.named(string): optional<${F}>`, (_: FormatNamespace, name: string) => {
      const f = Object.hasOwn(namedFormats, name) ? namedFormats[name] : undefined;
      return f ? Optional.of(f) : Optional.none();
    })
    .registerFunction(`${F}.validate(string): optional<list<string>>`, (f: NamedFormat, s: string) => {
      const errs = f.validate(s);
      return errs.length === 0 ? Optional.none() : Optional.of(errs);
    })
    .registerOperator(`${F} == ${F}`, (a: NamedFormat, b: NamedFormat) => a.name === b.name);
  for (const [name, f] of Object.entries(namedFormats)) env.registerFunction(`${NS}.${name}(): ${F}`, () => f);
}

// ---------------------------------------------------------------------------------------------
// Sets (cel-go ext.Sets) and strings (ext.Strings v2: quote, format) and regex (library/regex.go)
// ---------------------------------------------------------------------------------------------

const includes = (list: readonly unknown[], x: unknown): boolean => list.some((y) => celEquals(x, y));

/** strings.quote: a double-quoted CEL string literal. */
export function quoteString(s: string): string {
  const escapes: Record<string, string> = {
    "\x07": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
  };
  // A lone surrogate is not a valid rune: Go writes utf8.RuneError in its place.
  return `"${s.replace(/[\x07\b\f\n\r\t\v\\"]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (c) => escapes[c] ?? "\uFFFD")}"`;
}

function registerSetsStringsRegex(env: Environment): void {
  env
    .registerType("kubernetes.SetsNamespace", SetsNamespace)
    .registerConstant("sets", "kubernetes.SetsNamespace", new SetsNamespace())
    .registerFunction("kubernetes.SetsNamespace.contains(list<A>, list<A>): bool", (_: SetsNamespace, a: unknown[], b: unknown[]) =>
      b.every((x) => includes(a, x)),
    )
    .registerFunction(
      "kubernetes.SetsNamespace.equivalent(list<A>, list<A>): bool",
      (_: SetsNamespace, a: unknown[], b: unknown[]) => b.every((x) => includes(a, x)) && a.every((x) => includes(b, x)),
    )
    .registerFunction("kubernetes.SetsNamespace.intersects(list<A>, list<A>): bool", (_: SetsNamespace, a: unknown[], b: unknown[]) =>
      b.some((x) => includes(a, x)),
    )
    .registerType("kubernetes.StringsNamespace", StringsNamespace)
    .registerConstant("strings", "kubernetes.StringsNamespace", new StringsNamespace())
    .registerFunction("kubernetes.StringsNamespace.quote(string): string", (_: StringsNamespace, s: string) => quoteString(s))
    .registerFunction("string.format(list<dyn>): string", formatString)
    .registerFunction("string.find(string): string", (s: string, p: string) => regexpFind(s, p))
    .registerFunction("string.findAll(string): list<string>", (s: string, p: string) => regexpFindAll(s, p))
    .registerFunction("string.findAll(string, int): list<string>", (s: string, p: string, n: bigint) => regexpFindAll(s, p, Number(n)));
}

// string.format (cel-go ext/formatting.go): %s %d %f %e %b %o %x %X %%, with an optional precision.

function formatDouble(d: number): string {
  if (Number.isNaN(d)) return "NaN";
  if (!Number.isFinite(d)) return d > 0 ? "+Inf" : "-Inf";
  return String(d);
}

/** The engine's uint (an object whose value is a bigint) as a bigint; anything else unchanged. */
const unsigned = (v: unknown): unknown =>
  typeof v === "object" && v !== null && typeof (v as { valueOf(): unknown }).valueOf() === "bigint" ? v.valueOf() : v;

/** The engine's class of type values (`type(x)`; not exported by the package). */
const TypeValue = (new Environment().evaluate("type(1)") as object).constructor;

function stringClause(v: unknown, quoted = false): string {
  if (v === null) return "null";
  v = unsigned(v);
  if (typeof v === "string") return quoted ? JSON.stringify(v) : v;
  if (typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (typeof v === "number") return formatDouble(v);
  if (v instanceof Uint8Array) return quoted ? `b${JSON.stringify(Buffer.from(v).toString())}` : Buffer.from(v).toString();
  if (v instanceof Date) return quoted ? `timestamp(${JSON.stringify(rfc3339(v))})` : rfc3339(v);
  if (Array.isArray(v)) return `[${v.map((x) => stringClause(x, true)).join(", ")}]`;
  // A map literal with string keys is a plain object in the engine.
  const entries =
    v instanceof Map
      ? [...v]
      : typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype
        ? Object.entries(v as Record<string, unknown>)
        : undefined;
  if (entries) {
    const pairs = entries
      .map(([k, x]) => [stringClause(k, true), stringClause(x, true)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${pairs.map(([k, x]) => `${k}:${x}`).join(", ")}}`;
  }
  // cel-go prints a type by its name (`string`, `null_type`), the engine as `Type<string>`.
  if (v instanceof TypeValue) {
    const name = (v as { name: string }).name;
    return name === "null" ? "null_type" : name;
  }
  if (typeof v === "object" && typeof (v as { toString?: unknown }).toString === "function") return String(v);
  throw new Error("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps");
}

const typeName = (v: unknown): string =>
  typeof v === "bigint"
    ? "int"
    : typeof v === "number"
      ? "double"
      : typeof v === "string"
        ? "string"
        : typeof v === "boolean"
          ? "bool"
          : v === null
            ? "null_type"
            : Array.isArray(v)
              ? "list"
              : v instanceof Map
                ? "map"
                : "dyn";

function integerClause(v: unknown, radix: number, clause: string, upper = false): string {
  v = unsigned(v);
  if (typeof v === "bigint") {
    const text = v < 0n ? `-${(-v).toString(radix)}` : v.toString(radix);
    return upper ? text.toUpperCase() : text;
  }
  if (radix === 2 && typeof v === "boolean") return v ? "1" : "0";
  if (radix === 16 && typeof v === "string") {
    const hex = Buffer.from(v).toString("hex");
    return upper ? hex.toUpperCase() : hex;
  }
  if (radix === 16 && v instanceof Uint8Array) {
    const hex = Buffer.from(v).toString("hex");
    return upper ? hex.toUpperCase() : hex;
  }
  throw new Error(`${clause}, was given ${typeName(v)}`);
}

function formatString(format: string, args: unknown[]): string {
  let out = "";
  let next = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== "%") {
      out += c;
      continue;
    }
    i++;
    if (format[i] === "%") {
      out += "%";
      continue;
    }
    let precision: number | undefined;
    if (format[i] === ".") {
      const m = /^\.([0-9]+)/.exec(format.slice(i));
      if (!m) throw new Error("could not parse formatting clause: unable to find end of precision specifier");
      precision = Number(m[1]);
      i += m[0].length;
    }
    const verb = format[i] ?? "";
    if (next >= args.length) throw new Error(`index ${next} out of range`);
    const arg = unsigned(args[next++]);
    switch (verb) {
      case "s":
        out += stringClause(arg);
        break;
      case "d":
        if (typeof arg !== "bigint")
          throw new Error(`error during formatting: decimal clause can only be used on integers, was given ${typeName(arg)}`);
        out += arg.toString();
        break;
      case "f":
      case "e": {
        const d = typeof arg === "number" ? arg : typeof arg === "bigint" ? Number(arg) : undefined;
        if (d === undefined) {
          const what = verb === "f" ? "fixed-point clause can only be used on doubles" : "scientific clause can only be used on doubles";
          throw new Error(`error during formatting: ${what}, was given ${typeName(arg)}`);
        }
        const digits = precision ?? 6;
        if (!Number.isFinite(d)) out += formatDouble(d);
        else if (verb === "f") out += goFixed(d, digits);
        else out += d.toExponential(digits).replace(/e([+-])(\d)$/, "e$10$2");
        break;
      }
      case "b":
        out += integerClause(arg, 2, "error during formatting: only integers and bools can be formatted as binary");
        break;
      case "o":
        out += integerClause(arg, 8, "error during formatting: octal clause can only be used on integers");
        break;
      case "x":
      case "X":
        out += integerClause(
          arg,
          16,
          "error during formatting: only integers, byte buffers, and strings can be formatted as hex",
          verb === "X",
        );
        break;
      default:
        throw new Error(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
    }
  }
  return out;
}

/** Registers the libraries of this file on `env`. */
export function registerExtensionLibraries(env: Environment): Environment {
  registerIPAndCIDR(env);
  registerURLs(env);
  registerFormats(env);
  registerSetsStringsRegex(env);
  return env;
}

/**
 * Go's %f: the double's exact value rounded to `digits` places, a tie to the even digit; JavaScript's
 * toFixed rounds a tie away from zero ("%.0f" of 2.5 is "2" in Go, "3" from toFixed). toFixed(100) is
 * the exact expansion of any double that can be a tie at fewer than 100 places.
 */
function goFixed(d: number, digits: number): string {
  const fixed = d.toFixed(digits);
  if (digits >= 100) return fixed;
  const exact = Math.abs(d).toFixed(100);
  const cut = exact.indexOf(".") + 1 + digits;
  if (!/^50*$/.test(exact.slice(cut))) return fixed;
  const truncated = exact.slice(0, digits === 0 ? cut - 1 : cut);
  if (Number(truncated.at(-1)) % 2 === 1) return fixed;
  return d < 0 || Object.is(d, -0) ? `-${truncated}` : truncated;
}
