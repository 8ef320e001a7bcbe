// Literals cel-go parses and @marcbachmann/cel-js 8 does not, rewritten before parsing into forms the
// engine reads the same: a raw bytes literal `br'\d'` becomes `b'\\d'` (its backslashes escaped), and a
// double without a leading digit `.99` becomes `0.99`.
import { type Edit, type Rewritten, applyEdits, endsOperand, tokens } from "./optional-entries.js";

const RAW_BYTES = /^[bB]([rR])('''|"""|'|")/;

/** The source with these literals rewritten, or undefined when it has none. */
export function rewriteLiterals(src: string): Rewritten | undefined {
  const edits: Edit[] = [];
  const all = tokens(src);
  all.forEach((t, i) => {
    if (t.text === "string") {
      const raw = RAW_BYTES.exec(src.slice(t.start, t.end));
      if (!raw) return;
      edits.push({ at: t.start + 1, remove: 1, insert: "" });
      const quote = raw[2]!.length;
      for (let at = t.start + raw[0].length; at < t.end - quote; at++) if (src[at] === "\\") edits.push({ at, remove: 0, insert: "\\" });
    } else if (t.text === "." && !endsOperand(all[i - 1])) {
      const next = all[i + 1];
      if (next?.text === "operand" && next.start === t.end && /^[0-9]/.test(src[next.start]!))
        edits.push({ at: t.start, remove: 0, insert: "0" });
    }
  });
  return applyEdits(src, edits);
}
