// IP addresses and prefixes as Go's net/netip parses and prints them (ParseAddr, ParsePrefix,
// Addr.String), so that Kubernetes' IP and CIDR CEL libraries accept, refuse and word errors alike.

const quote = (s: string): string => JSON.stringify(s);

class ParseAddrError extends Error {
  constructor(input: string, msg: string, at = "") {
    super(at ? `ParseAddr(${quote(input)}): ${msg} (at ${quote(at)})` : `ParseAddr(${quote(input)}): ${msg}`);
  }
}

/** An address: 4 or 16 bytes, and an IPv6 zone. */
export class Addr {
  constructor(
    readonly bytes: Uint8Array,
    readonly zone = "",
  ) {}

  is4(): boolean {
    return this.bytes.length === 4;
  }

  is6(): boolean {
    return this.bytes.length === 16;
  }

  /** An IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
  is4In6(): boolean {
    const b = this.bytes;
    return this.is6() && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  }

  bitLen(): number {
    return this.bytes.length * 8;
  }

  private unmapped(): Addr {
    return this.is4In6() ? new Addr(this.bytes.slice(12)) : this;
  }

  private word(i: number): number {
    return ((this.bytes[2 * i] ?? 0) << 8) | (this.bytes[2 * i + 1] ?? 0);
  }

  isUnspecified(): boolean {
    return this.bytes.every((x) => x === 0);
  }

  isLoopback(): boolean {
    const ip = this.unmapped();
    if (ip.is4()) return ip.bytes[0] === 127;
    return ip.bytes.slice(0, 15).every((x) => x === 0) && ip.bytes[15] === 1;
  }

  isMulticast(): boolean {
    const ip = this.unmapped();
    return ip.is4() ? ((ip.bytes[0] ?? 0) & 0xf0) === 0xe0 : ip.bytes[0] === 0xff;
  }

  isLinkLocalUnicast(): boolean {
    const ip = this.unmapped();
    if (ip.is4()) return ip.bytes[0] === 169 && ip.bytes[1] === 254;
    return (ip.word(0) & 0xffc0) === 0xfe80;
  }

  isLinkLocalMulticast(): boolean {
    const ip = this.unmapped();
    if (ip.is4()) return ip.bytes[0] === 224 && ip.bytes[1] === 0 && ip.bytes[2] === 0;
    return (ip.word(0) & 0xff0f) === 0xff02;
  }

  isGlobalUnicast(): boolean {
    const ip = this.unmapped();
    if (ip.is4() && (ip.isUnspecified() || ip.bytes.every((x) => x === 255))) return false;
    return !ip.isUnspecified() && !ip.isLoopback() && !ip.isMulticast() && !ip.isLinkLocalUnicast();
  }

  equals(other: Addr): boolean {
    return this.zone === other.zone && this.bytes.length === other.bytes.length && this.bytes.every((x, i) => x === other.bytes[i]);
  }

  /** Addr.String: dotted quad, or RFC 5952 (lower case, longest run of two or more zero words as ::). */
  toString(): string {
    if (this.is4()) return this.bytes.join(".");
    if (this.is4In6()) return `::ffff:${this.bytes.slice(12).join(".")}${this.zone ? `%${this.zone}` : ""}`;
    let bestStart = -1;
    let bestLen = 0;
    for (let i = 0; i < 8; ) {
      let j = i;
      while (j < 8 && this.word(j) === 0) j++;
      if (j - i > bestLen && j - i >= 2) {
        bestStart = i;
        bestLen = j - i;
      }
      i = j === i ? i + 1 : j;
    }
    let out = "";
    for (let i = 0; i < 8; i++) {
      if (i === bestStart) {
        out += "::";
        i += bestLen - 1;
        continue;
      }
      if (out !== "" && !out.endsWith(":")) out += ":";
      out += this.word(i).toString(16);
    }
    return this.zone ? `${out}%${this.zone}` : out;
  }
}

function parseIPv4(s: string): Addr {
  const fields = new Uint8Array(4);
  let val = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits === 1 && val === 0) throw new ParseAddrError(s, "IPv4 field has octet with leading zero");
      val = val * 10 + (c - 48);
      digits++;
      if (val > 255) throw new ParseAddrError(s, "IPv4 field has value >255");
    } else if (s[i] === ".") {
      if (i === 0 || i === s.length - 1 || s[i - 1] === ".") {
        throw new ParseAddrError(s, "IPv4 field must have at least one digit", s.slice(i));
      }
      if (pos === 3) throw new ParseAddrError(s, "IPv4 address too long");
      fields[pos++] = val;
      val = 0;
      digits = 0;
    } else {
      throw new ParseAddrError(s, "unexpected character", s.slice(i));
    }
  }
  if (pos < 3) throw new ParseAddrError(s, "IPv4 address too short");
  fields[3] = val;
  return new Addr(fields);
}

function parseIPv6(input: string): Addr {
  let s = input;
  let zone = "";
  const percent = s.indexOf("%");
  if (percent !== -1) {
    zone = s.slice(percent + 1);
    s = s.slice(0, percent);
    if (zone === "") throw new ParseAddrError(input, "zone must be a non-empty string");
  }
  const ip = new Uint8Array(16);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ":" && s[1] === ":") {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return new Addr(ip, zone);
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const digit = Number.parseInt(s[off] ?? "", 16);
      if (Number.isNaN(digit)) break;
      acc = acc * 16 + digit;
      if (acc > 0xffff) throw new ParseAddrError(input, "IPv6 field has value >=2^16", s);
    }
    if (off === 0) throw new ParseAddrError(input, "each colon-separated field must have at least one digit", s);
    if (off < s.length && s[off] === ".") {
      if (ellipsis < 0 && i !== 12) {
        throw new ParseAddrError(input, "embedded IPv4 address must replace the final 2 fields of the address", s);
      }
      if (i + 4 > 16) throw new ParseAddrError(input, "too many hex fields to fit an embedded IPv4 at the end of the address", s);
      let v4: Addr;
      try {
        v4 = parseIPv4(s);
      } catch (e) {
        throw new ParseAddrError(input, (e as Error).message, s);
      }
      ip.set(v4.bytes, i);
      s = "";
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ":") throw new ParseAddrError(input, "unexpected character, want colon", s);
    if (s.length === 1) throw new ParseAddrError(input, "colon must be followed by more characters", s);
    s = s.slice(1);
    if (s[0] === ":") {
      if (ellipsis >= 0) throw new ParseAddrError(input, "multiple :: in address", s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw new ParseAddrError(input, "trailing garbage after address", s);
  if (i < 16) {
    if (ellipsis < 0) throw new ParseAddrError(input, "address string too short");
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j] ?? 0;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) {
    throw new ParseAddrError(input, "the :: must expand to at least one field of zeros");
  }
  return new Addr(ip, zone);
}

/** netip.ParseAddr: throws with Go's message. */
export function parseAddr(s: string): Addr {
  for (const c of s) {
    if (c === ".") return parseIPv4(s);
    if (c === ":") return parseIPv6(s);
    if (c === "%") throw new ParseAddrError(s, "missing IPv6 address");
  }
  throw new ParseAddrError(s, "unable to parse IP");
}

/** An address and a prefix length. */
export class Prefix {
  constructor(
    readonly addr: Addr,
    readonly bits: number,
  ) {}

  /** Prefix.Masked: the address with the bits past the prefix cleared. */
  masked(): Prefix {
    const bytes = this.addr.bytes.map((b, i) => {
      const keep = Math.max(0, Math.min(8, this.bits - i * 8));
      return b & ((0xff << (8 - keep)) & 0xff);
    });
    return new Prefix(new Addr(bytes), this.bits);
  }

  contains(ip: Addr): boolean {
    if (ip.zone !== "" || ip.bytes.length !== this.addr.bytes.length) return false;
    return new Prefix(ip, this.bits).masked().addr.equals(this.masked().addr);
  }

  /** Prefix.Overlaps: same family and either contains the other's masked address. */
  overlaps(other: Prefix): boolean {
    if (this.addr.bytes.length !== other.addr.bytes.length) return false;
    const bits = Math.min(this.bits, other.bits);
    return new Prefix(this.addr, bits).masked().addr.equals(new Prefix(other.addr, bits).masked().addr);
  }

  equals(other: Prefix): boolean {
    return this.bits === other.bits && this.addr.equals(other.addr);
  }

  toString(): string {
    return `${this.addr.toString()}/${this.bits}`;
  }
}

/** netip.ParsePrefix: throws with Go's message. */
export function parsePrefix(s: string): Prefix {
  const fail = (msg: string): never => {
    throw new Error(`netip.ParsePrefix(${quote(s)}): ${msg}`);
  };
  const slash = s.lastIndexOf("/");
  if (slash < 0) fail("no '/'");
  let addr: Addr | undefined;
  try {
    addr = parseAddr(s.slice(0, slash));
  } catch (e) {
    fail((e as Error).message);
  }
  const ip = addr as Addr;
  if (ip.is6() && ip.zone !== "") fail("IPv6 zones cannot be present in a prefix");
  const bitsText = s.slice(slash + 1);
  // strconv.Atoi would accept a sign and leading zeros; ParsePrefix does not.
  if (!/^(0|[1-9][0-9]*)$/.test(bitsText)) fail(`bad bits after slash: ${quote(bitsText)}`);
  const bits = Number(bitsText);
  if (bits > ip.bitLen()) fail("prefix length out of range");
  return new Prefix(ip, bits);
}
