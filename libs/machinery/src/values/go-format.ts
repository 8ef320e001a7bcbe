// Renders values the way Go's fmt and encoding/json do. Kubernetes error texts embed values through
// strconv.Quote (`%q`) and json.Marshal, and clients compare those texts, so the escaping must match
// byte for byte — JSON.stringify alone differs for control characters, DEL, `<`, `>` and `&`.

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

export function isGoPrintable(codePoint: number): boolean {
  if (codePoint < 0x80) return codePoint >= 0x20 && codePoint < 0x7f;
  return printable.test(String.fromCodePoint(codePoint));
}

const shortEscapes: Record<number, string> = {
  0x07: "\\a",
  0x08: "\\b",
  0x0c: "\\f",
  0x0a: "\\n",
  0x0d: "\\r",
  0x09: "\\t",
  0x0b: "\\v",
};

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** strconv.Quote: a double-quoted Go string literal. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    let cp = ch.codePointAt(0) ?? 0;
    // A lone surrogate cannot come from UTF-8; Go would have decoded it as U+FFFD.
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp === 0x22 || cp === 0x5c) out += `\\${String.fromCodePoint(cp)}`;
    else if (isGoPrintable(cp)) out += String.fromCodePoint(cp);
    else if (shortEscapes[cp] !== undefined) out += shortEscapes[cp];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

/** json.Marshal with Go's default HTML escaping; `undefined` and `null` become `null` like a nil slice. */
export function goJSON(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);
}

/** How field.Error prints a bad value: `%q` for strings, `%v` for numbers and booleans, JSON otherwise. */
export function goBadValue(value: unknown): string {
  if (typeof value === "string") return goQuote(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return goJSON(value);
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several deduplicated inside brackets. */
export function goAggregate(messages: readonly string[]): string {
  if (messages.length === 1) return messages[0] ?? "";
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] ?? "") : `[${unique.join(", ")}]`;
}
