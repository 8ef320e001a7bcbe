// Go measures and orders strings as UTF-8 bytes; JavaScript as UTF-16 code units. Limits such as
// "must be no more than 63 bytes" (Buffer.byteLength, which counts a lone surrogate as U+FFFD as Go
// does) and sort orders that Kubernetes exposes must use Go's view.

// UTF-16 puts U+E000..U+FFFF above the surrogates that encode astral characters; UTF-8 (and code point)
// order puts them below. Shifting both ranges makes code-unit comparison agree with Go's byte order.
const rank = (c: number) => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c);

/** Compares like Go's `a < b` on strings (UTF-8 byte order). */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/** The longest prefix of `s` that fits in `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length <= maxBytes && Buffer.byteLength(s) <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return s.slice(0, end);
}
