// Expected values were produced by running Kubernetes' fields.ParseSelector (k8s.io/apimachinery v0.36.3)
// on each input; the inputs include pkg/fields/selector_test.go's cases.
import { describe, expect, it } from "vitest";
import {
  escapeFieldSelectorValue,
  fieldSelectorIsEverything,
  fieldSelectorMatches,
  fieldSelectorRequiresExactMatch,
  fieldSelectorString,
  oneTermEqualFieldSelector,
  parseFieldSelector,
  transformFieldSelector,
  unescapeFieldSelectorValue,
} from "../src/selectors/field-selector.js";
import { SelectorError } from "../src/selectors/selector-error.js";

type Outcome = { text: string; empty: boolean } | { error: string };

const parseCases: [string, Outcome][] = [
  ["", { text: "", empty: true }],
  ["a=b", { text: "a=b", empty: false }],
  ["a==b", { text: "a=b", empty: false }],
  ["a!=b", { text: "a!=b", empty: false }],
  ["a=b,c=d", { text: "a=b,c=d", empty: false }],
  ["c=d,a=b", { text: "a=b,c=d", empty: false }],
  ["b!=x,a=y", { text: "a=y,b!=x", empty: false }],
  ["a=", { text: "a=", empty: false }],
  ["a==", { text: "a=", empty: false }],
  ["=b", { text: "=b", empty: false }],
  ["=", { text: "", empty: true }],
  ["!=", { text: "", empty: true }],
  ["==", { text: "", empty: true }],
  [",", { text: "", empty: true }],
  [",,", { text: "", empty: true }],
  ["a=b,", { text: "a=b", empty: false }],
  [",a=b", { text: "a=b", empty: false }],
  ["foo", { error: "invalid selector: 'foo'; can't understand 'foo'" }],
  ["a=b,foo", { error: "invalid selector: 'a=b,foo'; can't understand 'foo'" }],
  ["foo,a=b", { error: "invalid selector: 'foo,a=b'; can't understand 'foo'" }],
  ["a", { error: "invalid selector: 'a'; can't understand 'a'" }],
  ["a=b=c", { error: "invalid field selector: unescaped character in value: 61" }],
  ["a=b\\=c", { text: "a=b\\=c", empty: false }],
  ["a=b\\,c", { text: "a=b\\,c", empty: false }],
  ["a=b\\\\c", { text: "a=b\\\\c", empty: false }],
  ["a=b\\", { error: "invalid field selector: invalid escape sequence: \\" }],
  ["a=b\\x", { error: "invalid field selector: invalid escape sequence: \\x" }],
  ["a=b,c", { error: "invalid selector: 'a=b,c'; can't understand 'c'" }],
  ["x=a\\,b,y=c", { text: "x=a\\,b,y=c", empty: false }],
  ["metadata.name=my-pod", { text: "metadata.name=my-pod", empty: false }],
  ["spec.nodeName=", { text: "spec.nodeName=", empty: false }],
  ["status.phase!=Running,spec.nodeName=node-1", { text: "spec.nodeName=node-1,status.phase!=Running", empty: false }],
  ["a!=b=c", { error: "invalid field selector: unescaped character in value: 61" }],
  ["a!==b", { error: "invalid field selector: unescaped character in value: 61" }],
  ["a=!=b", { error: "invalid field selector: unescaped character in value: 61" }],
  ["a!b=c", { text: "a!b=c", empty: false }],
  ["a = b", { text: "a = b", empty: false }],
  [" a=b", { text: " a=b", empty: false }],
  ["a=b ", { text: "a=b ", empty: false }],
  ["a=\u00e4", { text: "a=\u00e4", empty: false }],
  ["\u00e4=b", { text: "\u00e4=b", empty: false }],
  ["a=b\\\u00e4", { error: "invalid field selector: invalid escape sequence: \\\u00e4" }],
  ["z=1,\u00e4=2,\ufb01=3,\ud83d\ude00=4", { text: "z=1,\u00e4=2,\ufb01=3,\ud83d\ude00=4", empty: false }],
  ["a=b\\,,c=d", { text: "a=b\\,,c=d", empty: false }],
  ["involvedObject.kind=Pod,involvedObject.name=x", { text: "involvedObject.kind=Pod,involvedObject.name=x", empty: false }],
  ["a\\=b=c", { error: "invalid field selector: unescaped character in value: 61" }],
  ["a\\,b=c", { text: "a\\,b=c", empty: false }],
];

describe("parseFieldSelector", () => {
  it.each(parseCases)("%j", (input, want) => {
    let got: Outcome;
    try {
      const s = parseFieldSelector(input);
      got = { text: fieldSelectorString(s), empty: fieldSelectorIsEverything(s) };
    } catch (e) {
      expect(e).toBeInstanceOf(SelectorError);
      got = { error: (e as Error).message };
    }
    expect(got).toEqual(want);
  });

  it("normalises == to = and unescapes values", () => {
    expect(parseFieldSelector("b==x\\\\y\\,z,a!=q\\=r").requirements).toEqual([
      { field: "a", operator: "!=", value: "q=r" },
      { field: "b", operator: "=", value: "x\\y,z" },
    ]);
  });
});

const matchCases: [string, Record<string, string>, boolean][] = [
  ["a=b", { a: "b" }, true],
  ["a=b", { a: "c" }, false],
  ["a=b", {}, false],
  ["a=", {}, true],
  ["a!=", {}, false],
  ["a!=b", {}, true],
  ["a!=b", { a: "b" }, false],
  ["a=b,c!=d", { a: "b", c: "e" }, true],
  ["a=b,c!=d", { a: "b", c: "d" }, false],
  ["", { x: "y" }, true],
  ["a=x\\,y", { a: "x,y" }, true],
];

describe("fieldSelectorMatches", () => {
  it.each(matchCases)("%j on %j: %s", (selector, fields, want) => {
    const get = (f: string) => (Object.hasOwn(fields, f) ? fields[f] : undefined);
    expect(fieldSelectorMatches(parseFieldSelector(selector), get)).toBe(want);
  });
});

describe("escaping (TestEscapeValue)", () => {
  it.each<[string, string]>([
    ["", ""],
    ["a", "a"],
    ["=", "\\="],
    [",", "\\,"],
    ["\\", "\\\\"],
    ["\\=\\,\\", "\\\\\\=\\\\\\,\\\\"],
  ])("%j ⇄ %j", (raw, escaped) => {
    expect(escapeFieldSelectorValue(raw)).toBe(escaped);
    expect(unescapeFieldSelectorValue(escaped)).toBe(raw);
  });

  it.each<[string, string]>([
    ["\\", "invalid field selector: invalid escape sequence: \\"],
    ["\\a", "invalid field selector: invalid escape sequence: \\a"],
    ["=", "invalid field selector: unescaped character in value: 61"],
    [",", "invalid field selector: unescaped character in value: 44"],
  ])("rejects %j", (value, message) => {
    expect(() => unescapeFieldSelectorValue(value)).toThrow(message);
  });
});

describe("helpers", () => {
  it("finds the exact match used for single-object requests", () => {
    const s = parseFieldSelector("metadata.name!=a,metadata.name=b,metadata.namespace=c");
    expect(fieldSelectorRequiresExactMatch(s, "metadata.name")).toBe("b");
    expect(fieldSelectorRequiresExactMatch(s, "spec.nodeName")).toBeUndefined();
    expect(fieldSelectorRequiresExactMatch(oneTermEqualFieldSelector("metadata.name", "x"), "metadata.name")).toBe("x");
  });

  it("transforms field labels and drops emptied terms", () => {
    const s = parseFieldSelector("name=a,drop=x,b!=c");
    const t = transformFieldSelector(s, (f, v) => (f === "drop" ? ["", ""] : f === "name" ? ["metadata.name", v] : [f, v]));
    expect(fieldSelectorString(t)).toBe("b!=c,metadata.name=a");
    expect(() =>
      transformFieldSelector(s, (f) => {
        throw new Error(`field label not supported: ${f}`);
      }),
    ).toThrow("field label not supported: b");
  });
});
