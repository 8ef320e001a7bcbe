// URLs as Go's net/url parses them with ParseRequestURI (an absolute URI or an absolute path, no
// fragment), which Kubernetes' URL CEL library uses: same acceptance, same error texts
// (`parse "https://a:b:c/": invalid port ":c" after host`), same accessors.

export interface GoURL {
  readonly scheme: string;
  readonly opaque: string;
  /** host[:port], IPv6 literals in brackets. */
  readonly host: string;
  readonly path: string;
  readonly rawPath: string;
  readonly rawQuery: string;
}

const quote = (s: string): string => JSON.stringify(s);

class URLError extends Error {
  constructor(url: string, message: string) {
    super(`parse ${quote(url)}: ${message}`);
  }
}

type Mode = "path" | "host" | "zone" | "userinfo" | "query";

const unreserved = (c: string): boolean => /^[A-Za-z0-9\-_.~]$/.test(c);

/** url.shouldEscape. */
function shouldEscape(c: string, mode: Mode): boolean {
  if (unreserved(c)) return false;
  if (mode === "host" || mode === "zone") {
    if ("!$&'()*+,;=:[]<>\"".includes(c)) return false;
  }
  if ("$&+,/:;=?@".includes(c)) {
    switch (mode) {
      case "path":
        return c === "?";
      case "userinfo":
        return c === "@" || c === "/" || c === "?" || c === ":";
      case "query":
        return true;
      default:
        return false;
    }
  }
  return true;
}

/** url.unescape: decodes %XX (and + in queries); throws Go's error for a bad escape. */
function urlUnescape(s: string, mode: Mode): string {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < s.length; ) {
    const c = s[i] ?? "";
    if (c === "%") {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
        let bad = s.slice(i);
        if (bad.length > 3) bad = bad.slice(0, 3);
        throw new Error(`invalid URL escape ${quote(bad)}`);
      }
      // Only %25 may appear in a host as an escape, and only inside an IPv6 zone.
      if (mode === "host" && Number.parseInt(hex, 16) < 0x80 && hex !== "25") {
        throw new Error(`invalid URL escape ${quote(s.slice(i, i + 3))}`);
      }
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
      continue;
    }
    if (c === "+" && mode === "query") bytes.push(0x20);
    else {
      if ((mode === "host" || mode === "zone") && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode)) {
        throw new Error(`invalid character ${quote(c)} in host name`);
      }
      const cp = s.codePointAt(i) ?? 0;
      const ch = String.fromCodePoint(cp);
      bytes.push(...encoder.encode(ch));
      i += ch.length;
      continue;
    }
    i++;
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** url.escape in path mode. */
function escapePath(s: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && !shouldEscape(c, "path") ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** url.validEncoded in path mode: the raw path only uses characters a path may carry unescaped. */
function validEncodedPath(s: string): boolean {
  for (const c of s) {
    if ("!$&'()*+,;=:@[]%".includes(c)) continue;
    if (shouldEscape(c, "path")) return false;
  }
  return true;
}

function validOptionalPort(port: string): boolean {
  return port === "" || /^:[0-9]*$/.test(port);
}

function parseHost(host: string): string {
  if (host.startsWith("[")) {
    const end = host.lastIndexOf("]");
    if (end < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(end + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${quote(colonPort)} after host`);
    const zone = host.slice(0, end).indexOf("%25");
    if (zone >= 0) {
      const host1 = urlUnescape(host.slice(0, zone), "host");
      const host2 = urlUnescape(host.slice(zone, end), "zone");
      const host3 = urlUnescape(host.slice(end), "host");
      return host1 + host2 + host3;
    }
  } else {
    const colon = host.lastIndexOf(":");
    if (colon !== -1) {
      const colonPort = host.slice(colon);
      if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${quote(colonPort)} after host`);
    }
  }
  return urlUnescape(host, "host");
}

function validUserinfo(s: string): boolean {
  for (const c of s) {
    if (/^[A-Za-z0-9]$/.test(c) || "-._:~!$&'()*+,;=%@".includes(c)) continue;
    return false;
  }
  return true;
}

/** url.ParseRequestURI. */
export function parseRequestURI(raw: string): GoURL {
  const fail = (message: string): never => {
    throw new URLError(raw, message);
  };
  if (/[\x00-\x1f\x7f]/.test(raw)) fail("net/url: invalid control character in URL");
  if (raw === "") fail("empty url");
  if (raw === "*") return { scheme: "", opaque: "", host: "", path: "*", rawPath: "", rawQuery: "" };

  let scheme = "";
  let rest = raw;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] ?? "";
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ":") {
      if (i === 0) fail("missing protocol scheme");
      scheme = raw.slice(0, i).toLowerCase();
      rest = raw.slice(i + 1);
    }
    break;
  }

  let rawQuery = "";
  if (rest.endsWith("?") && rest.split("?").length === 2) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf("?");
    if (q >= 0) {
      rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }

  if (!rest.startsWith("/")) {
    if (scheme !== "") return { scheme, opaque: rest, host: "", path: "", rawPath: "", rawQuery };
    fail("invalid URI for request");
  }

  let host = "";
  if (scheme !== "" && rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? "" : rest.slice(slash);
    const at = authority.lastIndexOf("@");
    try {
      if (at >= 0 && !validUserinfo(authority.slice(0, at))) throw new Error("net/url: invalid userinfo");
      host = parseHost(at < 0 ? authority : authority.slice(at + 1));
    } catch (e) {
      fail((e as Error).message);
    }
  }

  let path = "";
  try {
    path = urlUnescape(rest, "path");
  } catch (e) {
    fail((e as Error).message);
  }
  const rawPath = escapePath(path) === rest ? "" : rest;
  return { scheme, opaque: "", host, path, rawPath, rawQuery };
}

/** URL.Hostname: the host without port, IPv6 without brackets. */
export function hostname(u: GoURL): string {
  const host = u.host;
  const colon = host.lastIndexOf(":");
  const bracket = host.lastIndexOf("]");
  const withoutPort = colon > bracket ? host.slice(0, colon) : host;
  return withoutPort.startsWith("[") && withoutPort.endsWith("]") ? withoutPort.slice(1, -1) : withoutPort;
}

/** URL.Port: the digits after the host's last colon, "" without one. */
export function port(u: GoURL): string {
  const host = u.host;
  const colon = host.lastIndexOf(":");
  if (colon < 0 || colon < host.lastIndexOf("]")) return "";
  const digits = host.slice(colon + 1);
  return /^[0-9]*$/.test(digits) ? digits : "";
}

/** URL.EscapedPath. */
export function escapedPath(u: GoURL): string {
  if (u.rawPath !== "" && validEncodedPath(u.rawPath)) {
    try {
      if (urlUnescape(u.rawPath, "path") === u.path) return u.rawPath;
    } catch {
      // fall through to the escaped form
    }
  }
  if (u.path === "*") return "*";
  return escapePath(u.path);
}

/** URL.Query: url.ParseQuery, pairs with bad escapes or a semicolon skipped, keys in first-seen order. */
export function query(u: GoURL): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of u.rawQuery.split("&")) {
    if (pair === "" || pair.includes(";")) continue;
    const eq = pair.indexOf("=");
    try {
      const key = urlUnescape(eq < 0 ? pair : pair.slice(0, eq), "query");
      const value = urlUnescape(eq < 0 ? "" : pair.slice(eq + 1), "query");
      const list = out.get(key);
      if (list) list.push(value);
      else out.set(key, [value]);
    } catch {
      // url.ParseQuery keeps going past a pair it cannot decode.
    }
  }
  return out;
}
