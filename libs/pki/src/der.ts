// A small DER writer and reader for issuing certificates. pkijs builds an object tree, re-parses it and
// walks schemas to encode one certificate; issuing the dozen a first start needs took most of the start's
// PKI time (docs/benchmarks.md). Writing the bytes directly does the same in microseconds. Parsing
// untrusted input stays with pkijs/asn1js, which check far more than this reader does.

/** Tag bytes used here (X.690 8.1.2): universal types, constructed where so, and context-specific ones. */
export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** One TLV: definite length, short form below 128 bytes (X.690 10.1). */
export function tlv(tag: number, ...content: Uint8Array[]): Uint8Array {
  const length = content.reduce((sum, part) => sum + part.length, 0);
  const lengthBytes: number[] = [];
  if (length < 0x80) lengthBytes.push(length);
  else {
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest & 0xff);
    lengthBytes.unshift(0x80 | lengthBytes.length);
  }
  const out = new Uint8Array(1 + lengthBytes.length + length);
  out[0] = tag;
  out.set(lengthBytes, 1);
  let at = 1 + lengthBytes.length;
  for (const part of content) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export const sequence = (...items: Uint8Array[]) => tlv(TAG.sequence, ...items);
export const set = (...items: Uint8Array[]) => tlv(TAG.set, ...items);
export const octetString = (bytes: Uint8Array) => tlv(TAG.octetString, bytes);
export const utf8String = (text: string) => tlv(TAG.utf8String, Buffer.from(text, "utf8"));
/** Only ASCII reaches here (checked by the caller); `tag` is 0x16 or an implicit context tag. */
export const ia5String = (text: string, tag: number = TAG.ia5String) => tlv(tag, Buffer.from(text, "latin1"));
export const booleanTrue = () => tlv(TAG.boolean, Uint8Array.of(0xff));
export const nullValue = () => tlv(TAG.null);
/** `[n] EXPLICIT` around one element. */
export const explicit = (n: number, inner: Uint8Array) => tlv(0xa0 | n, inner);
/** A BIT STRING of whole bytes or with `unusedBits` trailing bits. */
export const bitString = (bytes: Uint8Array, unusedBits = 0) => tlv(TAG.bitString, Uint8Array.of(unusedBits), bytes);

/** A non-negative INTEGER from its big-endian magnitude: leading zeros dropped, one added when the top bit is set. */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const trimmed = magnitude.subarray(i);
  return tlv(TAG.integer, (trimmed[0] ?? 0) & 0x80 ? Uint8Array.of(0, ...trimmed) : trimmed);
}

/** An OBJECT IDENTIFIER from dotted form (X.690 8.19). */
export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const base128 = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) base128.unshift(0x80 | (value & 0x7f));
    bytes.push(...base128);
  }
  return tlv(TAG.oid, Uint8Array.from(bytes));
}

/** RFC 5280 4.1.2.5: UTCTime (YYMMDDHHMMSSZ) through 2049, GeneralizedTime (YYYYMMDDHHMMSSZ) after. */
export function time(date: Date): Uint8Array {
  const digits = date.toISOString().replace(/\.\d+/, "").replace(/[-:T]/g, "");
  return date.getUTCFullYear() < 2050
    ? tlv(TAG.utcTime, Buffer.from(digits.slice(2), "latin1"))
    : tlv(TAG.generalizedTime, Buffer.from(digits, "latin1"));
}

/** One element read from DER: its tag, where its content lies, and where it ends. */
export interface Element {
  tag: number;
  /** The whole element, header included. */
  bytes: Uint8Array;
  content: Uint8Array;
}

/** The element at `offset` of `der`; throws on a truncated or indefinite-length one. */
export function readElement(der: Uint8Array, offset = 0): Element {
  const tag = der[offset];
  let length = der[offset + 1];
  if (tag === undefined || length === undefined) throw new Error("DER: truncated element");
  let header = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new Error("DER: unsupported length");
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (der[offset + 2 + i] ?? Number.NaN);
    header += count;
  }
  const end = offset + header + length;
  if (!(end <= der.length)) throw new Error("DER: truncated element");
  return { tag, bytes: der.subarray(offset, end), content: der.subarray(offset + header, end) };
}

/** The elements inside a constructed element's content, in order. */
export function children(content: Uint8Array): Element[] {
  const out: Element[] = [];
  for (let offset = 0; offset < content.length; ) {
    const element = readElement(content, offset);
    out.push(element);
    offset += element.bytes.length;
  }
  return out;
}
