/** One PEM block; `start`/`end` are character offsets of `-----BEGIN` and just past the END line's `-----`. */
export interface PemBlock {
  type: string;
  headers: Record<string, string>;
  der: Uint8Array;
  start: number;
  end: number;
}

// RFC 7468 label: printable ASCII without "-", single inner "-" or space allowed.
const BEGIN = /-----BEGIN ((?:[\x21-\x2c\x2e-\x7e](?:[- ]?[\x21-\x2c\x2e-\x7e])*)?)-----/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Every well-formed PEM block in `text`, in order. Text between blocks is ignored and a malformed block
 * (no matching END, bad base64) is skipped, as Go's pem.Decode does. RFC 1421 headers (`Proc-Type`,
 * `DEK-Info`) are the leading `key: value` lines of a block; like Go, no folded header lines.
 */
export function pemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  const begin = new RegExp(BEGIN, "g");
  for (let m = begin.exec(text); m; m = begin.exec(text)) {
    const type = m[1] ?? "";
    const bodyStart = m.index + m[0].length;
    const endMarker = `-----END ${type}-----`;
    const endAt = text.indexOf(endMarker, bodyStart);
    if (endAt < 0) continue;
    const block = parseBody(text.slice(bodyStart, endAt));
    if (!block) continue; // resume right after this BEGIN: a nested valid block may follow
    const end = endAt + endMarker.length;
    blocks.push({ type, headers: block.headers, der: block.der, start: m.index, end });
    begin.lastIndex = end;
  }
  return blocks;
}

function parseBody(body: string): { headers: Record<string, string>; der: Uint8Array } | undefined {
  const lines = body.split(/\r\n|\r|\n/);
  // The BEGIN line itself must end after its marker.
  if ((lines.shift() ?? "").trim() !== "") return undefined;
  const headers: Record<string, string> = {};
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const colon = line.indexOf(":");
    if (colon < 0) break;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    i++;
  }
  const b64 = lines.slice(i).join("").replace(/[ \t]/g, "");
  if (!BASE64.test(b64) || b64.length % 4 !== 0) return undefined;
  return { headers, der: new Uint8Array(Buffer.from(b64, "base64")) };
}

/** PEM-encodes `der` with 64-column base64 lines and a trailing newline. */
export function toPem(type: string, der: Uint8Array): string {
  const b64 = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString("base64");
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.join("\n")}${lines.length ? "\n" : ""}-----END ${type}-----\n`;
}

/** DER of the first block of one of `types`, or a clear error naming what was expected. */
export function firstPemBlock(text: string, types: readonly string[], what: string): PemBlock {
  const block = pemBlocks(text).find((b) => types.includes(b.type));
  if (!block) throw new Error(`${what}: no ${types.join(" or ")} PEM block found`);
  return block;
}
