// Field selectors (k8s.io/apimachinery/pkg/fields): `a=b`, `a==b`, `a!=b`, comma-separated, where a value
// escapes `\`, `,` and `=` with a backslash. Field names are not validated here: which fields a kind
// supports is the kind's business (ConvertFieldLabel), see transformFieldSelector.
//
// A bad `?fieldSelector=` makes the apiserver answer 400 BadRequest whose message is exactly the
// SelectorError message thrown here (fields.ParseSelector's error, wrapped by errors.NewBadRequest), e.g.
// `?fieldSelector=foo` → invalid selector: 'foo'; can't understand 'foo'
// `?fieldSelector=a=b=c` → invalid field selector: unescaped character in value: 61
// `?fieldSelector=a=b\x` → invalid field selector: invalid escape sequence: \x
import { SelectorError } from "./selector-error.js";
import { compareUtf8 } from "../values/utf8.js";

/** `==` parses to `=`, as selection.Equals. */
export type FieldOperator = "=" | "!=";

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

export interface FieldSelector {
  /** All must match, in the (sorted) order Kubernetes keeps them. */
  readonly requirements: readonly FieldRequirement[];
}

export const everythingFieldSelector: FieldSelector = Object.freeze({ requirements: Object.freeze([]) });

/** EscapeValue: backslash-escape `\`, `,` and `=` so any literal can be a value. */
export const escapeFieldSelectorValue = (s: string): string => s.replace(/[\\,=]/g, (c) => `\\${c}`);

/** UnescapeValue. Throws SelectorError on `\x` or on a bare `,`/`=`. */
export function unescapeFieldSelectorValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = "";
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== "\\" && c !== "," && c !== "=") {
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
    } else if (c === "\\") {
      inSlash = true;
    } else if (c === "," || c === "=") {
      // Go prints the rune with %v: its code point in decimal.
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw new SelectorError("invalid field selector: invalid escape sequence: \\");
  return out;
}

/** splitTerms: split on commas that are not backslash-escaped; escapes stay in the terms. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector.charCodeAt(i);
    if (inSlash) inSlash = false;
    else if (c === 0x5c) inSlash = true;
    else if (c === 0x2c) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

// `!=` and `==` are tried before `=` so that no `=` is left at the start of the value.
const termOperators = ["!=", "==", "="] as const;

/** splitTerm: the field has no escaping, so the first operator anywhere splits the term. */
function splitTerm(term: string): [string, (typeof termOperators)[number], string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** fields.ParseSelector. Throws SelectorError whose message is the apiserver's 400 message. */
export function parseFieldSelector(selector: string): FieldSelector {
  // Kubernetes sorts the raw terms (Go byte order), which fixes both String() and which error wins.
  const parts = splitTerms(selector).sort(compareUtf8);
  const requirements: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === "") continue;
    const split = splitTerm(part);
    if (!split) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${part}'`);
    const [field, op, rhs] = split;
    const value = unescapeFieldSelectorValue(rhs);
    requirements.push({ field, operator: op === "!=" ? "!=" : "=", value });
  }
  // ParseSelector ends with an identity Transform, which drops terms whose field and value are both empty.
  return { requirements: requirements.filter((r) => r.field !== "" || r.value !== "") };
}

/** Reads a field of the object being matched; a missing field reads as "" as in fields.Set.Get. */
export type FieldAccessor = (field: string) => string | undefined;

export function fieldSelectorMatches(selector: FieldSelector, get: FieldAccessor): boolean {
  return selector.requirements.every((r) => ((get(r.field) ?? "") === r.value) === (r.operator === "="));
}

/** Selector.Empty(). */
export const fieldSelectorIsEverything = (selector: FieldSelector): boolean => selector.requirements.length === 0;

/** Selector.String(): `a=b,c!=d` with values escaped. */
export const fieldSelectorString = (selector: FieldSelector): string =>
  selector.requirements.map((r) => `${r.field}${r.operator}${escapeFieldSelectorValue(r.value)}`).join(",");

/** RequiresExactMatch: the value of the first `field=value` term, e.g. `metadata.name` for a single-object watch. */
export function fieldSelectorRequiresExactMatch(selector: FieldSelector, field: string): string | undefined {
  return selector.requirements.find((r) => r.operator === "=" && r.field === field)?.value;
}

/** OneTermEqualSelector. */
export const oneTermEqualFieldSelector = (field: string, value: string): FieldSelector => ({
  requirements: [{ field, operator: "=", value }],
});

/**
 * Selector.Transform: rewrite each term's field and value (field label conversion, e.g. rejecting
 * unsupported fields by throwing); a term rewritten to an empty field and value is dropped.
 */
export function transformFieldSelector(
  selector: FieldSelector,
  fn: (field: string, value: string) => readonly [field: string, value: string],
): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const r of selector.requirements) {
    const [field, value] = fn(r.field, r.value);
    if (field !== "" || value !== "") requirements.push({ field, operator: r.operator, value });
  }
  return { requirements };
}
