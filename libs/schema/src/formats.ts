// The string formats Kubernetes validates in custom resources: kube-openapi's strfmt.Default registry
// (pkg/validation/strfmt/default.go, date.go, time.go, duration.go, bson.go) and the govalidator
// checks it calls, restricted to apiextensions' supported list. Names are normalized (`date-time`).
import { isIPv6 } from "node:net";
import { normalizeFormat } from "./structural.js";

function isIPv4Sloppy(s: string): boolean {
  const parts = s.split(".");
  return parts.length === 4 && parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255);
}

/** Go's net.ParseIP (with k8s.io/utils/net's leading-zero tolerance): no zones, no brackets. */
const parseIP = (s: string): boolean => isIPv4Sloppy(s) || (!s.includes("%") && isIPv6(s));

function isCIDR(s: string): boolean {
  const slash = s.indexOf("/");
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bits)) return false;
  const max = isIPv4Sloppy(ip) ? 32 : 128;
  return parseIP(ip) && Number(bits) <= max;
}

/** net.ParseMAC: 6, 8 or 20 octets, `:` or `-` separated, or dotted groups of four hex digits. */
function isMAC(s: string): boolean {
  const octets = (n: number, sep: string) => new RegExp(`^[0-9a-fA-F]{2}(${sep}[0-9a-fA-F]{2}){${n - 1}}$`).test(s);
  const dotted = (n: number) => new RegExp(`^[0-9a-fA-F]{4}(\\.[0-9a-fA-F]{4}){${n / 2 - 1}}$`).test(s);
  return [6, 8, 20].some((n) => octets(n, ":") || octets(n, "-") || dotted(n));
}

/** url.ParseRequestURI: an absolute URI or an absolute path, no control characters, valid escapes. */
function isRequestURI(s: string): boolean {
  if (s === "" || /[\u0000-\u001f\u007f]/.test(s)) return false;
  if (/%(?![0-9a-fA-F]{2})/.test(s.split("#")[0] ?? "")) return false;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(s);
  if (scheme) return true;
  if (s.startsWith(":")) return false;
  return s.startsWith("/");
}

/** net/mail.ParseAddress, for the common forms: `local@domain` and `Name <local@domain>`. */
function isEmail(s: string): boolean {
  const atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
  const local = `(${atom}(\\.${atom})*|"([^"\\\\]|\\\\.)*")`;
  const domain = `(${atom}(\\.${atom})*|\\[[^\\[\\]\\\\]*\\])`;
  const addr = `${local}@${domain}`;
  return new RegExp(`^\\s*(${addr}|([^<>]*\\s*)?<${addr}>)\\s*$`).test(s);
}

const hostnamePattern =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;

function isHostname(s: string): boolean {
  return hostnamePattern.test(s) && Buffer.byteLength(s) <= 255 && s.split(".").every((p) => Buffer.byteLength(p) <= 63);
}

function isISBN10(s: string): boolean {
  const d = s.replace(/[\s-]+/g, "");
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
  sum += 10 * (d[9] === "X" ? 10 : Number(d[9]));
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const d = s.replace(/[\s-]+/g, "");
  if (!/^[0-9]{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(d[i]);
  return Number(d[12]) - ((10 - (sum % 10)) % 10) === 0;
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]+/g, "");
  if (
    !/^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(
      d,
    )
  ) {
    return false;
  }
  let sum = 0;
  let double = false;
  for (let i = d.length - 1; i >= 0; i--) {
    let n = Number(d[i]);
    if (double) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
    double = !double;
  }
  return sum % 10 === 0;
}

/** time.Parse("2006-01-02"): two-digit month and day, a day that exists in that month. */
function isDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split("t");
  if (parts.length < 2 || !isDate(parts[0] ?? "")) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1] ?? "");
  return m !== null && (m[1] ?? "") <= "23" && (m[2] ?? "") <= "59" && (m[3] ?? "") <= "59";
}

const goDuration = /^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/;
const scalaUnits = [
  ["ns", "nano"],
  ["us", "µs", "micro"],
  ["ms", "milli"],
  ["s", "sec"],
  ["m", "min"],
  ["h", "hr", "hour"],
  ["d", "day"],
  ["w", "wk", "week"],
];

/** strfmt.ParseDuration: Go's time.ParseDuration, else Scala-style `3 days`. */
function isDuration(s: string): boolean {
  if (goDuration.test(s)) return true;
  for (const match of s.matchAll(/((\d+)\s*([A-Za-zµ]+))/g)) {
    const unit = (match[3] ?? "").trim().toLowerCase();
    for (const variants of scalaUnits) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

const uuidAny = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const uuid5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;

const validators: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => parseIP(s) && s.includes("."),
  ipv6: (s) => parseIP(s) && s.includes(":"),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => uuidAny.test(s),
  uuid3: (s) => uuid3.test(s),
  uuid4: (s) => uuid4.test(s),
  uuid5: (s) => uuid5.test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) =>
    /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(
      s,
    ),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** Whether `value` is valid for the (supported) `format`. */
export function validatesFormat(format: string, value: string): boolean {
  const check = validators[normalizeFormat(format)];
  return check ? check(value) : true;
}
