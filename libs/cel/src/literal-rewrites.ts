// Literals cel-go parses and @marcbachmann/cel-js 8 does not (or reads otherwise), rewritten before
// parsing into forms the engine reads as cel-go does: a raw bytes literal `br'\d'` becomes `b'\\d'` (its
// backslashes escaped), a non-ASCII character in a bytes literal the octal escapes of its UTF-8 bytes
// (`b'ÿ'` is `b'\303\277'`; the engine took Latin-1), and a double without a leading digit `.99` becomes
// `0.99`.
import { type Edit, type Rewritten, applyEdits, endsOperand, tokens } from "./optional-entries.js";

const BYTES = /^[bB]([rR]?)('''|"""|'|")/;

/** A character as the octal escapes of its UTF-8 bytes. */
const utf8Escapes = (c: string): string => [...Buffer.from(c, "utf8")].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("");

/** The edits of one bytes literal token. */
function bytesLiteralEdits(src: string, start: number, end: number): Edit[] {
  const prefix = BYTES.exec(src.slice(start, end));
  if (!prefix) return [];
  const raw = prefix[1] !== "";
  const edits: Edit[] = raw ? [{ at: start + 1, remove: 1, insert: "" }] : [];
  const bodyEnd = end - prefix[2]!.length;
  for (let at = start + prefix[0].length; at < bodyEnd; ) {
    const c = String.fromCodePoint(src.codePointAt(at)!);
    if (raw && c === "\\") edits.push({ at, remove: 0, insert: "\\" });
    else if (c.codePointAt(0)! > 0x7f) edits.push({ at, remove: c.length, insert: utf8Escapes(c) });
    at += c.length;
  }
  return edits;
}

/** The source with these literals rewritten, or undefined when it has none. */
export function rewriteLiterals(src: string): Rewritten | undefined {
  const edits: Edit[] = [];
  const all = tokens(src);
  all.forEach((t, i) => {
    if (t.text === "string") {
      edits.push(...bytesLiteralEdits(src, t.start, t.end));
    } else if (t.text === "." && !endsOperand(all[i - 1])) {
      const next = all[i + 1];
      if (next?.text === "operand" && next.start === t.end && /^[0-9]/.test(src[next.start]!))
        edits.push({ at: t.start, remove: 0, insert: "0" });
    }
  });
  return applyEdits(src, edits);
}
