// Query parameters converted as Kubernetes converts them, for every verb: the ParameterCodec's string
// conversions (k8s.io/apimachinery pkg/apis/meta/v1/conversion.go), `pretty` (responsewriters'
// isPrettyPrint) and `timeout` (filters.WithRequestDeadline). One place, so that `watch=True` from the
// Python client means here what it means to the Go server.
import { errors, goQuote } from "@orch/machinery";

/**
 * A boolean option (`watch`, `allowWatchBookmarks`, `sendInitialEvents`, `force`, `orphanDependents`):
 * absent is undefined; "0" and any case of "false" are false; every other value, "" included, is true
 * (Convert_Slice_string_To_bool and _To_Pointer_bool read the first value only).
 */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  return !(value === "0" || value.toLowerCase() === "false");
}

/** Whether a collection GET is a watch, as request info and the list handler decide it. */
export const watchRequested = (query: URLSearchParams) => queryBool(query, "watch") === true;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An int64 option (`limit`, `timeoutSeconds`, `gracePeriodSeconds`): absent is undefined; otherwise
 * strconv.ParseInt(value, 10, 64), whose error the handlers answer as a 400 with its text
 * (`strconv.ParseInt: parsing "x": invalid syntax`). An empty value is a syntax error, as in Go.
 */
export function queryInt64(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  const parsed = parseGoInt64(value);
  if (typeof parsed === "string") throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(value)}: ${parsed}`);
  return parsed;
}

/** strconv.ParseInt(s, 10, 64): the number, or the reason Go gives ("invalid syntax", "value out of range"). */
export function parseGoInt64(text: string): number | "invalid syntax" | "value out of range" {
  // Base 10 given explicitly: an optional sign and decimal digits, no underscores, no spaces.
  if (!/^[+-]?[0-9]+$/.test(text)) return "invalid syntax";
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) return "value out of range";
  return Number(value);
}

/** strconv.ParseBool: undefined for anything else. */
export function parseGoBool(text: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false;
  return undefined;
}

/**
 * isPrettyPrint: a non-empty `pretty` decides with strconv.ParseBool (a value it refuses is false);
 * without one, browsers and command-line HTTP tools get indented JSON.
 */
export function prettyRequested(query: URLSearchParams, userAgent: string | undefined): boolean {
  const pretty = query.get("pretty");
  if (pretty) return parseGoBool(pretty) ?? false;
  const agent = userAgent ?? "";
  return agent.startsWith("curl") || agent.startsWith("Wget") || agent.startsWith("Mozilla/5.0");
}

/**
 * The request's own deadline from `timeout` (a Go duration such as `32s`, which client-go sends when a
 * timeout is set), in milliseconds; undefined when absent or empty. A value Go cannot parse is a 400.
 */
export function requestTimeoutMs(query: URLSearchParams): number | undefined {
  const value = query.get("timeout");
  if (!value) return undefined;
  const parsed = parseGoDuration(value);
  if (typeof parsed === "string") throw errors.badRequest(`invalid timeout specified in the request URL - ${parsed}`);
  return parsed / 1e6;
}

const NANOSECONDS_PER_UNIT: Record<string, number> = {
  ns: 1,
  us: 1e3,
  "\u00b5s": 1e3,
  "\u03bcs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
const MAX_DURATION_NS = 2 ** 63 - 1;

/** time.ParseDuration: nanoseconds, or Go's error text (`time: invalid duration "x"`). */
export function parseGoDuration(text: string): number | string {
  const invalid = `time: invalid duration ${goQuote(text)}`;
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") return invalid;
  let total = 0;
  while (rest !== "") {
    const number = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest)!;
    const [whole = "", fraction] = [number[1], number[2]];
    // At least one digit before or after the point.
    if (whole === "" && (fraction === undefined || fraction === "")) return invalid;
    rest = rest.slice(number[0].length);
    const unit = /^[^0-9.]*/.exec(rest)![0];
    if (unit === "") return `time: missing unit in duration ${goQuote(text)}`;
    const scale = NANOSECONDS_PER_UNIT[unit];
    if (scale === undefined) return `time: unknown unit ${goQuote(unit)} in duration ${goQuote(text)}`;
    rest = rest.slice(unit.length);
    total += Number(`${whole || "0"}.${fraction || "0"}`) * scale;
    if (total > MAX_DURATION_NS) return invalid;
  }
  return sign * total;
}
