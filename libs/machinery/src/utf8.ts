// Go measures and orders strings as UTF-8 bytes; JavaScript as UTF-16 code units. Limits such as
// "must be no more than 63 bytes" and sort orders that Kubernetes exposes must use Go's view.

/** The length of `s` encoded as UTF-8 (a lone surrogate counts as U+FFFD, three bytes). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

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
  if (s.length <= maxBytes && utf8Length(s) <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const size = utf8Length(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return s.slice(0, end);
}
