// Go's base64.StdEncoding.Decode, as encoding/json runs it on a `[]byte` field: padding required, line
// breaks skipped, and the first bad byte reported by its offset. Kubernetes refuses such a body with the
// decoder's text (`illegal base64 data at input byte 4`), so orch needs the same offset.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const SIXBITS = new Map([...ALPHABET].map((c, i) => [c.charCodeAt(0), i]));
const PAD = 0x3d; // '='
const isLineBreak = (b: number | undefined) => b === 0x0a || b === 0x0d;

/** Go's CorruptInputError text for a `[]byte` field's JSON string, or undefined when it decodes. */
export function goBase64Error(text: string): string | undefined {
  const offset = corruptOffset(Buffer.from(text, "utf8"));
  return offset === undefined ? undefined : `illegal base64 data at input byte ${offset}`;
}

/** Decodes quantum by quantum as Go's decodeQuantum does; the offset of the first corrupt byte. */
function corruptOffset(src: Uint8Array): number | undefined {
  let si = 0;
  while (si < src.length) {
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return undefined;
        // A partial quantum without padding: StdEncoding requires it.
        return si - j;
      }
      const byte = src[si++]!;
      if (SIXBITS.has(byte)) continue;
      if (isLineBreak(byte)) {
        j--;
        continue;
      }
      if (byte !== PAD || j < 2) return si - 1;
      if (j === 2) {
        // "==" expected; the first one is consumed.
        while (si < src.length && isLineBreak(src[si])) si++;
        if (si === src.length) return src.length;
        if (src[si] !== PAD) return si - 1;
        si++;
      }
      while (si < src.length && isLineBreak(src[si])) si++;
      // Anything after the padding is trailing garbage.
      return si < src.length ? si : undefined;
    }
  }
  return undefined;
}
