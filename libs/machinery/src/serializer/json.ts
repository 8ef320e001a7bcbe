// JSON bodies as Kubernetes' decoder takes them: nested at most MAX_NESTING_DEPTH levels (encoding/json's
// limit, which bounds every recursive step that follows), and refused in encoding/json's words.
import { goQuote } from "../values/go-format.js";

/** The deepest nesting of objects and arrays a body may have, in JSON and in YAML (Kubernetes' 10,000). */
export const MAX_NESTING_DEPTH = 10_000;

/** A body that cannot be decoded; the message says why as Kubernetes' decoders do. */
export class DecodeError extends Error {}
/** Nested deeper than the limit. */
export class TooDeepError extends DecodeError {}

/**
 * Parses JSON text. Nesting is counted before parsing, so a too-deep body costs one scan and is never
 * handed to code that recurses over it.
 */
export function decodeJson(text: string, maxDepth = MAX_NESTING_DEPTH): unknown {
  // Each level opens with a bracket of its own: a text no longer than the limit cannot pass it (most
  // bodies, which then skip the scan).
  const deep = text.length > maxDepth ? tooDeepAt(text, maxDepth) : -1;
  if (deep >= 0) throw new TooDeepError(`invalid character ${quoteChar(text[deep]!)} exceeded max depth`);
  try {
    return JSON.parse(text);
  } catch {
    throw new DecodeError(goSyntaxError(text));
  }
}

/** Where the first bracket opening level `maxDepth + 1` is, or -1; strings are skipped, the text need not be valid. */
function tooDeepAt(text: string, maxDepth: number): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return -1;
}

/** The index of the quote closing the string that opens at `start` (the text's end when unterminated). */
export function stringEnd(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i < 0) return text.length;
    // A quote preceded by an odd run of backslashes is escaped.
    let slashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === 0x5c; j--) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

/** encoding/json's quoteChar: `'x'`, with Go escapes. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  return `'${goQuote(c).slice(1, -1)}'`;
}

/**
 * The first syntax error in `text` as Go's JSON scanner words it. Recursive, over text whose nesting
 * decodeJson has already bounded.
 */
function goSyntaxError(text: string): string {
  let i = 0;
  const end = "unexpected end of JSON input";
  const fail = (context: string): never => {
    throw new SyntaxError(i >= text.length ? end : `invalid character ${quoteChar(text[i]!)} ${context}`);
  };
  const space = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const digits = () => {
    while (i < text.length && text[i]! >= "0" && text[i]! <= "9") i++;
  };
  const isDigit = () => i < text.length && text[i]! >= "0" && text[i]! <= "9";
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail("");
      const c = text[i]!;
      if (c === '"') return void i++;
      if (c === "\\") {
        i++;
        if (i >= text.length) fail("");
        if ('"\\/bfnrt'.includes(text[i]!)) i++;
        else if (text[i] === "u") {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail("in \\u hexadecimal character escape");
        } else fail("in string escape code");
      } else if (c < " ") fail("in string literal");
      else i++;
    }
  };
  const number = () => {
    if (text[i] === "-") {
      i++;
      if (!isDigit()) fail("in numeric literal");
    }
    if (text[i] === "0") i++;
    else digits();
    if (text[i] === ".") {
      i++;
      if (!isDigit()) fail("after decimal point in numeric literal");
      digits();
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (!isDigit()) fail("in exponent of numeric literal");
      digits();
    }
  };
  const literal = (word: string) => {
    for (let k = 1, start = i; k < word.length; k++) {
      i = start + k;
      if (text[i] !== word[k]) fail(`in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    }
    i++;
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      space();
      if (text[i] === "}") return void i++;
      for (;;) {
        space();
        if (text[i] !== '"') fail("looking for beginning of object key string");
        string();
        space();
        if (text[i] !== ":") fail("after object key");
        i++;
        value();
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else fail("after object key:value pair");
      }
    }
    if (c === "[") {
      i++;
      space();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else fail("after array element");
      }
    }
    if (c === '"') return string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return number();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    fail("looking for beginning of value");
  };
  try {
    value();
    space();
    if (i < text.length) fail("after top-level value");
    return end;
  } catch (e) {
    return (e as Error).message;
  }
}
