// A reader of protobuf text format, as far as cel-spec's conformance test data uses it: messages
// (`name { … }`, `name: { … }`, `name < … >`), repeated fields, lists `[a, b]`, strings with C escapes
// (bytes: octal and hex escapes are raw bytes), numbers kept as written, enum identifiers, Any
// expansions (`[type.googleapis.com/x.Y] { … }`) and `#` comments. Without the .proto schema every
// field is a list of its occurrences; the caller knows which are scalar.

/** A scalar as written: strings as bytes, numbers and identifiers as their text. */
export type Scalar = { readonly kind: "string"; readonly bytes: Uint8Array } | { readonly kind: "word"; readonly text: string };
export type Field = Scalar | Message;
export interface Message {
  readonly kind: "message";
  readonly fields: ReadonlyMap<string, readonly Field[]>;
}

const utf8 = new TextEncoder();
const utf8Decode = new TextDecoder("utf-8", { fatal: false });

class Reader {
  private at = 0;
  constructor(private readonly text: string) {}

  private fail(what: string): never {
    const line = this.text.slice(0, this.at).split("\n").length;
    throw new Error(`textproto: ${what} at line ${line}`);
  }

  private skip(): void {
    for (;;) {
      const c = this.text[this.at];
      if (c === "#") {
        const end = this.text.indexOf("\n", this.at);
        this.at = end < 0 ? this.text.length : end + 1;
      } else if (c !== undefined && /\s/.test(c)) this.at++;
      else return;
    }
  }

  private peek(): string | undefined {
    this.skip();
    return this.text[this.at];
  }

  private eat(c: string): boolean {
    if (this.peek() !== c) return false;
    this.at++;
    return true;
  }

  private word(): string {
    this.skip();
    const rest = this.text.slice(this.at);
    const m =
      /^[-+]?(?:0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)[fFuU]?(?![A-Za-z0-9_])/.exec(rest) ??
      /^-?[A-Za-z_][A-Za-z0-9_.]*/.exec(rest);
    if (!m) this.fail("expected a name or number");
    this.at += m[0].length;
    return m[0];
  }

  message(end?: string): Message {
    const fields = new Map<string, Field[]>();
    for (;;) {
      const c = this.peek();
      if (c === undefined) {
        if (end) this.fail(`expected '${end}'`);
        break;
      }
      if (c === end) {
        this.at++;
        break;
      }
      let name: string;
      if (c === "[") {
        const close = this.text.indexOf("]", this.at);
        name = this.text.slice(this.at, close + 1);
        this.at = close + 1;
      } else name = this.word();
      const colon = this.eat(":");
      const values = fields.get(name) ?? [];
      fields.set(name, values);
      if (colon && this.eat("[")) {
        while (!this.eat("]")) {
          values.push(this.value());
          this.eat(",");
        }
      } else values.push(this.value());
      if (!this.eat(",")) this.eat(";");
    }
    return { kind: "message", fields };
  }

  private value(): Field {
    const c = this.peek();
    if (c === "{") {
      this.at++;
      return this.message("}");
    }
    if (c === "<") {
      this.at++;
      return this.message(">");
    }
    if (c === '"' || c === "'") {
      const parts: number[] = [];
      // Adjacent strings concatenate.
      while (this.peek() === '"' || this.peek() === "'") parts.push(...this.string());
      return { kind: "string", bytes: Uint8Array.from(parts) };
    }
    return { kind: "word", text: this.word() };
  }

  private string(): number[] {
    const quote = this.text[this.at++]!;
    const out: number[] = [];
    for (;;) {
      const c = this.text[this.at++];
      if (c === undefined) this.fail("unterminated string");
      if (c === quote) return out;
      if (c !== "\\") {
        const cp = this.text.codePointAt(this.at - 1)!;
        if (cp > 0xffff) this.at++;
        out.push(...utf8.encode(String.fromCodePoint(cp)));
        continue;
      }
      const e = this.text[this.at++]!;
      const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, "\\": 92, "'": 39, '"': 34, "?": 63 };
      if (e in simple) out.push(simple[e]!);
      else if (/[0-7]/.test(e)) {
        let digits = e;
        while (digits.length < 3 && /[0-7]/.test(this.text[this.at] ?? "")) digits += this.text[this.at++];
        out.push(Number.parseInt(digits, 8) & 0xff);
      } else if (e === "x" || e === "X") {
        let digits = "";
        while (digits.length < 2 && /[0-9a-fA-F]/.test(this.text[this.at] ?? "")) digits += this.text[this.at++];
        out.push(Number.parseInt(digits, 16));
      } else if (e === "u" || e === "U") {
        const n = e === "u" ? 4 : 8;
        const hex = this.text.slice(this.at, this.at + n);
        this.at += n;
        out.push(...utf8.encode(String.fromCodePoint(Number.parseInt(hex, 16))));
      } else this.fail(`unknown escape \\${e}`);
    }
  }
}

export function parseTextproto(text: string): Message {
  return new Reader(text).message();
}

/** The fields named `name` (a repeated field), or none. */
export const all = (m: Message, name: string): readonly Field[] => m.fields.get(name) ?? [];

/** The last occurrence of a field (proto semantics for a singular field). */
export function one(m: Message, name: string): Field | undefined {
  const values = m.fields.get(name);
  return values?.[values.length - 1];
}

export function message(m: Message, name: string): Message | undefined {
  const f = one(m, name);
  return f?.kind === "message" ? f : undefined;
}

/** A string field decoded as UTF-8. */
export function text(m: Message, name: string): string | undefined {
  const f = one(m, name);
  if (f === undefined) return undefined;
  if (f.kind === "string") return utf8Decode.decode(f.bytes);
  if (f.kind === "word") return f.text;
  throw new Error(`textproto: ${name} is a message`);
}

export function bytes(m: Message, name: string): Uint8Array | undefined {
  const f = one(m, name);
  return f?.kind === "string" ? f.bytes : undefined;
}

export function bool(m: Message, name: string): boolean {
  const f = one(m, name);
  return f?.kind === "word" && (f.text === "true" || f.text === "1");
}
