// Optional entries in list and map literals, `[a, ?b]` and `{?'k': v}` (cel-go's OptionalTypes, which
// Kubernetes enables since 1.28): an element or entry whose optional value is none is left out. The
// engine does not parse them, so the source is rewritten first: `?b` in a list becomes
// `__optionalEntry(b)`, `?'k': v` in a map becomes `'k': __optionalEntry(v)`. The function unwraps a
// present value and marks an absent one, and the literal drops what is marked (afterCheck). Only a `?`
// that starts an element or entry is rewritten: elsewhere it is the conditional operator, and after an
// operand (`x[?0]`) it is the optional index, which the engine has.

export const OPTIONAL_ENTRY_FUNCTION = "__optionalEntry";

/** What `__optionalEntry` returns for an absent value: dropped by the enclosing literal. */
export const ABSENT_ENTRY: unique symbol = Symbol("absent optional entry");

export interface Token {
  /** The character of a punctuation token, or `string` or `operand`. */
  text: string;
  start: number;
  end: number;
}

/** CEL tokens, as far as brackets go: strings and comments are skipped whole. */
export function tokens(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    const start = i;
    // String and bytes literals, with r/b prefixes and triple quotes.
    const prefix = /^(?:[rR][bB]?|[bB][rR]?)?(?:'''|"""|'|")/.exec(src.slice(i));
    if (prefix && (prefix[0].length > 1 || c === "'" || c === '"')) {
      const quote = prefix[0].replace(/^[rRbB]+/, "");
      const raw = /[rR]/.test(prefix[0]);
      i += prefix[0].length;
      while (i < src.length && !src.startsWith(quote, i)) i += !raw && src[i] === "\\" ? 2 : 1;
      i += quote.length;
      out.push({ text: "string", start, end: i });
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*|^[0-9][0-9a-zA-Z.]*/.exec(src.slice(i));
    if (word) {
      i += word[0].length;
      out.push({ text: "operand", start, end: i });
      continue;
    }
    i++;
    out.push({ text: c, start, end: i });
  }
  return out;
}

/** Whether a token ends an operand: what follows it is an operator, an index or a selection. */
export const endsOperand = (t: Token | undefined): boolean =>
  t !== undefined && (t.text === "operand" || t.text === "string" || ")]}".includes(t.text));

interface Frame {
  kind: "list" | "index" | "map" | "paren";
  /** At the start of an element or entry. */
  atStart: boolean;
  /** A `__optionalEntry(` is open and closes at the end of this element or entry. */
  open: boolean;
  /** An optional map entry whose value is not reached yet. */
  optionalKey: boolean;
  /** Conditional operators whose `:` is still to come. */
  ternaries: number;
}

/** The rewritten source, and where an offset in it was in the original (for error positions). */
export interface Rewritten {
  text: string;
  originalOffset(offset: number): number;
}

/** The source with optional entries rewritten, or undefined when it has none. */
export function rewriteOptionalEntries(src: string): Rewritten | undefined {
  if (!src.includes("?")) return undefined;
  const edits: Edit[] = [];
  const stack: Frame[] = [];
  let previous: Token | undefined;
  const close = (frame: Frame | undefined, at: number) => {
    if (frame?.open) {
      edits.push({ at, remove: 0, insert: ")" });
      frame.open = false;
    }
  };
  for (const t of tokens(src)) {
    const top = stack.at(-1);
    const atStart = top?.atStart ?? false;
    if (top) top.atStart = false;
    switch (t.text) {
      case "[":
        stack.push({ kind: endsOperand(previous) ? "index" : "list", atStart: true, open: false, optionalKey: false, ternaries: 0 });
        break;
      case "{":
        stack.push({ kind: "map", atStart: true, open: false, optionalKey: false, ternaries: 0 });
        break;
      case "(":
        stack.push({ kind: "paren", atStart: false, open: false, optionalKey: false, ternaries: 0 });
        break;
      case "]":
      case "}":
      case ")":
        close(top, t.start);
        stack.pop();
        break;
      case ",":
        close(top, t.start);
        if (top && (top.kind === "list" || top.kind === "map")) Object.assign(top, { atStart: true, optionalKey: false, ternaries: 0 });
        break;
      case "?":
        if (atStart && top?.kind === "list") {
          edits.push({ at: t.start, remove: 1, insert: `${OPTIONAL_ENTRY_FUNCTION}(` });
          top.open = true;
        } else if (atStart && top?.kind === "map") {
          edits.push({ at: t.start, remove: 1, insert: "" });
          top.optionalKey = true;
        } else if (top && previous?.text !== "." && !(previous?.text === "[" && top.kind === "index")) top.ternaries++;
        break;
      case ":":
        if (top?.ternaries) top.ternaries--;
        else if (top?.kind === "map" && top.optionalKey) {
          edits.push({ at: t.end, remove: 0, insert: `${OPTIONAL_ENTRY_FUNCTION}(` });
          top.optionalKey = false;
          top.open = true;
        }
        break;
    }
    previous = t;
  }
  return applyEdits(src, edits);
}

/** A change to a source text: at `at`, `remove` characters replaced by `insert`. */
export interface Edit {
  at: number;
  remove: number;
  insert: string;
}

/** The source with `edits` applied, or undefined when there are none. */
export function applyEdits(src: string, edits: Edit[]): Rewritten | undefined {
  if (edits.length === 0) return undefined;
  edits.sort((a, b) => a.at - b.at);
  let text = "";
  let from = 0;
  // Per edit: where its inserted text lies in the new text, and how far the new text is ahead after it.
  const spans: { start: number; end: number; original: number; shift: number }[] = [];
  for (const e of edits) {
    text += src.slice(from, e.at);
    const start = text.length;
    text += e.insert;
    from = e.at + e.remove;
    spans.push({ start, end: text.length, original: e.at, shift: text.length - from });
  }
  text += src.slice(from);
  return {
    text,
    originalOffset: (offset) => {
      let shift = 0;
      for (const span of spans) {
        if (offset < span.start) break;
        if (offset < span.end) return span.original;
        shift = span.shift;
      }
      return offset - shift;
    },
  };
}

/** Drops the absent entries of a list or map literal's value. */
export function dropAbsentEntries(value: unknown): unknown {
  if (Array.isArray(value)) return value.includes(ABSENT_ENTRY) ? value.filter((x) => x !== ABSENT_ENTRY) : value;
  if (value instanceof Map) {
    for (const [k, v] of value) if (v === ABSENT_ENTRY) value.delete(k);
    return value;
  }
  if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) if (v === ABSENT_ENTRY) delete (value as Record<string, unknown>)[k];
  }
  return value;
}
