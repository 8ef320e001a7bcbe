// The label selector grammar, lexed and parsed exactly as k8s.io/apimachinery/pkg/labels.Parse does,
// including its quirks (a NUL character ends the input, `in`/`notin` are plain words inside a value
// list, `x in ()` means the empty value), because clients send the same strings to both.
//
//   <selector-syntax>         ::= <requirement> | <requirement> "," <selector-syntax>
//   <requirement>             ::= [!] KEY [ <set-based-restriction> | <exact-match-restriction> ]
//   <set-based-restriction>   ::= "" | ("in" | "notin") "(" <values> ")"
//   <exact-match-restriction> ::= ["=" | "==" | "!=" | ">" | "<"] VALUE
import {
  type LabelOperator,
  type LabelRequirement,
  labelBinaryOperators,
  labelKeyError,
  newLabelRequirement,
} from "./label-requirement.js";
import { SelectorError } from "./selector-error.js";
import { compareUtf8 } from "../values/utf8.js";

enum Token {
  Error,
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const literalTokens = new Map<string, Token>([
  [")", Token.ClosedPar],
  [",", Token.Comma],
  ["!", Token.DoesNotExist],
  ["==", Token.DoubleEquals],
  ["=", Token.Equals],
  [">", Token.GreaterThan],
  ["in", Token.In],
  ["<", Token.LessThan],
  ["!=", Token.NotEquals],
  ["notin", Token.NotIn],
  ["(", Token.OpenPar],
]);

interface Item {
  tok: Token;
  lit: string;
}

const isWhitespace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
// = ! ( ) , > <
const isSpecialSymbol = (c: number) => c === 0x3d || c === 0x21 || c === 0x28 || c === 0x29 || c === 0x2c || c === 0x3e || c === 0x3c;

class Lexer {
  private pos = 0;
  constructor(private readonly s: string) {}

  // Go's lexer returns byte 0 at the end, so a NUL in the input also reads as "end".
  private read(): number {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos++) : 0;
  }
  private unread(): void {
    this.pos--;
  }

  private scanIdOrKeyword(): Item {
    const start = this.pos;
    let end = start;
    for (;;) {
      const ch = this.read();
      if (ch === 0) break; // a NUL inside the input is consumed and ends the word
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        this.unread();
        break;
      }
      end = this.pos;
    }
    const lit = this.s.slice(start, end);
    return { tok: literalTokens.get(lit) ?? Token.Identifier, lit };
  }

  private scanSpecialSymbol(): Item {
    let last: Item | undefined;
    let buffer = "";
    for (;;) {
      const ch = this.read();
      if (ch === 0) break;
      if (!isSpecialSymbol(ch)) {
        this.unread();
        break;
      }
      buffer += String.fromCharCode(ch);
      const tok = literalTokens.get(buffer);
      if (tok !== undefined) last = { tok, lit: buffer };
      else if (last) {
        this.unread();
        break;
      }
    }
    return last ?? { tok: Token.Error, lit: `error expected: keyword found '${buffer}'` };
  }

  lex(): Item {
    let ch = this.read();
    while (isWhitespace(ch)) ch = this.read();
    if (ch === 0) return { tok: Token.EndOfString, lit: "" };
    this.unread();
    return isSpecialSymbol(ch) ? this.scanSpecialSymbol() : this.scanIdOrKeyword();
  }
}

enum Context {
  KeyAndOperator,
  Values,
}

const end: Item = { tok: Token.EndOfString, lit: "" };

class Parser {
  private readonly items: Item[] = [];
  private position = 0;

  constructor(input: string) {
    const lexer = new Lexer(input);
    for (;;) {
      const item = lexer.lex();
      this.items.push(item);
      if (item.tok === Token.EndOfString) break;
    }
  }

  // Inside a value list "in" and "notin" are ordinary words: `x in (in,notin)` is valid.
  private lookahead(ctx: Context): Item {
    const item = this.items[this.position] ?? end;
    return ctx === Context.Values && (item.tok === Token.In || item.tok === Token.NotIn) ? { tok: Token.Identifier, lit: item.lit } : item;
  }
  private consume(ctx: Context): Item {
    const item = this.lookahead(ctx);
    this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(Context.Values);
      switch (tok) {
        case Token.Identifier:
        case Token.DoesNotExist: {
          let r: LabelRequirement;
          try {
            r = this.parseRequirement();
          } catch (e) {
            if (e instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${e.message}`);
            throw e;
          }
          requirements.push(r);
          const next = this.consume(Context.Values);
          if (next.tok === Token.EndOfString) return requirements;
          if (next.tok !== Token.Comma) {
            throw new SelectorError(`found '${next.lit}', expected: ',' or 'end of string'`);
          }
          const after = this.lookahead(Context.Values);
          if (after.tok !== Token.Identifier && after.tok !== Token.DoesNotExist) {
            throw new SelectorError(`found '${after.lit}', expected: identifier after ','`);
          }
          break;
        }
        case Token.EndOfString:
          return requirements;
        default:
          throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    const [key, inferred] = this.parseKeyAndInferOperator();
    if (inferred === "exists" || inferred === "!") return newLabelRequirement(key, inferred, []);
    const operator = this.parseOperator();
    const values = operator === "in" || operator === "notin" ? this.parseValues() : this.parseExactValue();
    // Values pass through a string set: sorted, deduplicated.
    return newLabelRequirement(key, operator, [...values].sort(compareUtf8));
  }

  /** A bare key (followed by `,` or the end) means "exists". */
  private parseKeyAndInferOperator(): [string, LabelOperator | undefined] {
    let operator: LabelOperator | undefined;
    let item = this.consume(Context.Values);
    if (item.tok === Token.DoesNotExist) {
      operator = "!";
      item = this.consume(Context.Values);
    }
    if (item.tok !== Token.Identifier) throw new SelectorError(`found '${item.lit}', expected: identifier`);
    // The parser validates keys with a nil field path, which Go prints as "<nil>".
    const keyErr = labelKeyError(item.lit, "<nil>");
    if (keyErr) throw new SelectorError(keyErr);
    const next = this.lookahead(Context.Values).tok;
    if ((next === Token.EndOfString || next === Token.Comma) && operator !== "!") operator = "exists";
    return [item.lit, operator];
  }

  private parseOperator(): LabelOperator {
    const { tok, lit } = this.consume(Context.KeyAndOperator);
    switch (tok) {
      case Token.In:
        return "in";
      case Token.Equals:
        return "=";
      case Token.DoubleEquals:
        return "==";
      case Token.GreaterThan:
        return "gt";
      case Token.LessThan:
        return "lt";
      case Token.NotIn:
        return "notin";
      case Token.NotEquals:
        return "!=";
      default:
        throw new SelectorError(`found '${lit}', expected: ${labelBinaryOperators.join(", ")}`);
    }
  }

  /** `(a,b)`; empty entries such as `()`, `(a,)` or `(,a)` contribute the empty value. */
  private parseValues(): Set<string> {
    const open = this.consume(Context.Values);
    if (open.tok !== Token.OpenPar) throw new SelectorError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(Context.Values);
    switch (tok) {
      case Token.Identifier:
      case Token.Comma: {
        const values = this.parseIdentifiersList();
        if (this.consume(Context.Values).tok !== Token.ClosedPar) {
          throw new SelectorError(`found '${lit}', expected: ')'`);
        }
        return values;
      }
      case Token.ClosedPar:
        this.consume(Context.Values);
        return new Set([""]);
      default:
        throw new SelectorError(`found '${lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(Context.Values);
      switch (tok) {
        case Token.Identifier: {
          values.add(lit);
          const next = this.lookahead(Context.Values);
          if (next.tok === Token.Comma) continue;
          if (next.tok === Token.ClosedPar) return values;
          throw new SelectorError(`found '${next.lit}', expected: ',' or ')'`);
        }
        case Token.Comma: {
          if (values.size === 0) values.add(""); // "(,"
          const next = this.lookahead(Context.Values).tok;
          if (next === Token.ClosedPar) {
            values.add(""); // ",)"
            return values;
          }
          if (next === Token.Comma) values.add(""); // ",,"
          break;
        }
        default:
          throw new SelectorError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  /** `x=` and `x=,y` select the empty value. */
  private parseExactValue(): Set<string> {
    const next = this.lookahead(Context.Values).tok;
    if (next === Token.EndOfString || next === Token.Comma) return new Set([""]);
    const { tok, lit } = this.consume(Context.Values);
    if (tok === Token.Identifier) return new Set([lit]);
    throw new SelectorError(`found '${lit}', expected: identifier`);
  }
}

/** The requirements of `text` in the order written; throws SelectorError with Kubernetes' message. */
export function parseLabelRequirements(text: string): LabelRequirement[] {
  return new Parser(text).parse();
}
