// Expected values were produced by running Kubernetes' own code (k8s.io/apimachinery v0.36.3:
// labels.Parse, labels.NewRequirement, metav1.LabelSelectorAsSelector) on each input; the inputs include
// every case of pkg/labels/selector_test.go (TestSelectorParse, TestSelectorMatches,
// TestSetSelectorParser, TestRequirementConstructor, TestToString, TestRequiresExactMatch).
import { describe, expect, it } from "vitest";
import {
  type LabelOperator,
  type LabelSelectorObject,
  addLabelRequirements,
  everythingLabelSelector,
  labelRequirementMatches,
  labelSelectorFromObject,
  labelSelectorFromSet,
  labelSelectorIsEverything,
  labelSelectorMatches,
  labelSelectorRequiresExactMatch,
  labelSelectorString,
  newLabelRequirement,
  nothingLabelSelector,
  parseLabelSelector,
} from "../src/selectors/labels.js";
import { SelectorError } from "../src/selectors/selector-error.js";

const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const labelNameMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const labelKeySlashesMsg = `a valid label key ${labelNameMsg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;

type Outcome = { text: string; empty?: boolean } | { error: string };

function outcome(run: () => { text: string; empty?: boolean }): Outcome {
  try {
    return run();
  } catch (e) {
    expect(e).toBeInstanceOf(SelectorError);
    return { error: (e as Error).message };
  }
}

const parseCases: [string, Outcome][] = [
  ["x=a,y=b,z=c", { text: "x=a,y=b,z=c", empty: false }],
  ["", { text: "", empty: true }],
  ["x!=a,y=b", { text: "x!=a,y=b", empty: false }],
  ["x=", { text: "x=", empty: false }],
  ["x= ", { text: "x=", empty: false }],
  ["x=,z= ", { text: "x=,z=", empty: false }],
  ["x= ,z= ", { text: "x=,z=", empty: false }],
  ["!x", { text: "!x", empty: false }],
  ["x>1", { text: "x>1", empty: false }],
  ["x>1,z<5", { text: "x>1,z<5", empty: false }],
  ["x=a||y=b", { error: `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${labelValueMsg}` }],
  ["x==a==b", { error: "found '==', expected: ',' or 'end of string'" }],
  ["!x=a", { error: "found '=', expected: ',' or 'end of string'" }],
  [
    "x<a",
    { error: "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer" },
  ],
  ["x=a,a=x", { text: "a=x,x=a", empty: false }],
  ["a=x,x=a", { text: "a=x,x=a", empty: false }],
  ["\rx", { text: "x", empty: false }],
  ["this-is-a-dns.domain.com/key-with-dash", { text: "this-is-a-dns.domain.com/key-with-dash", empty: false }],
  [
    "this-is-another-dns.domain.com/key-with-dash in (so,what)",
    { text: "this-is-another-dns.domain.com/key-with-dash in (so,what)", empty: false },
  ],
  ["0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", { text: "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)", empty: false }],
  ["foo  in\t (abc)", { text: "foo in (abc)", empty: false }],
  ["x notin\n (abc)", { text: "x notin (abc)", empty: false }],
  ["x  notin\t\t\t(abc,def)", { text: "x notin (abc,def)", empty: false }],
  ["x in (abc,def)", { text: "x in (abc,def)", empty: false }],
  ["x in (abc,)", { text: "x in (,abc)", empty: false }],
  ["x in (abc,abc)", { text: "x in (abc)", empty: false }],
  ["x in ()", { text: "x in ()", empty: false }],
  ["x in (a,,)", { text: "x in (,a)", empty: false }],
  ["x in (a,,,)", { text: "x in (,a)", empty: false }],
  ["x in (a,,,,,,)", { text: "x in (,a)", empty: false }],
  ["x in (a,,a,,a,,a,,)", { text: "x in (,a)", empty: false }],
  ["x notin (abc,,def),bar,z in (),w", { text: "bar,w,x notin (,abc,def),z in ()", empty: false }],
  ["x,y in (a)", { text: "x,y in (a)", empty: false }],
  ["x=a", { text: "x=a", empty: false }],
  ["x>1", { text: "x>1", empty: false }],
  ["x<7", { text: "x<7", empty: false }],
  ["x=a,y!=b", { text: "x=a,y!=b", empty: false }],
  ["x=a,y!=b,z in (h,i,j)", { text: "x=a,y!=b,z in (h,i,j)", empty: false }],
  ["x,,y", { error: "found ',', expected: identifier after ','" }],
  [",x,y", { error: "found ',', expected: !, identifier, or 'end of string'" }],
  ["x nott in (y)", { error: "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt" }],
  ["x notin ( )", { text: "x notin ()", empty: false }],
  ["x notin (, a)", { text: "x notin (,a)", empty: false }],
  ["a in (xyz),", { error: "found '', expected: identifier after ','" }],
  ["a in (xyz)b notin ()", { error: "found 'b', expected: ',' or 'end of string'" }],
  ["a ", { text: "a", empty: false }],
  ["a in (x,y,notin, z,in)", { text: "a in (in,notin,x,y,z)", empty: false }],
  ["a in (xyz abc)", { error: "unable to parse requirement: found 'abc', expected: ',' or ')'" }],
  ["a notin(", { error: "unable to parse requirement: found '', expected: ',', ')' or identifier" }],
  ["a (", { error: "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt" }],
  ["(", { error: "found '(', expected: !, identifier, or 'end of string'" }],
  ["a b", { error: "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt" }],
  ["x/y/z", { error: `unable to parse requirement: <nil>: Invalid value: "x/y/z": ${labelKeySlashesMsg}` }],
  ["a,", { error: "found '', expected: identifier after ','" }],
  ["!", { error: "unable to parse requirement: found '', expected: identifier" }],
  ["!!a", { error: "unable to parse requirement: found '!', expected: identifier" }],
  ["a=b=c", { error: "found '=', expected: ',' or 'end of string'" }],
  ["a==", { text: "a==", empty: false }],
  ["a!=b,c", { text: "a!=b,c", empty: false }],
  ["k=v v", { error: "found 'v', expected: ',' or 'end of string'" }],
  ["k in a", { error: "unable to parse requirement: found 'a' expected: '('" }],
  ["k in (a b)", { error: "unable to parse requirement: found 'b', expected: ',' or ')'" }],
  ["k in (a", { error: "unable to parse requirement: found '', expected: ',' or ')'" }],
  ["k in (a,", { error: "unable to parse requirement: found '', expected: ',', or identifier" }],
  ["=a", { error: "found '=', expected: !, identifier, or 'end of string'" }],
  [
    "a>b",
    { error: "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer" },
  ],
  ["a<-5", { error: `unable to parse requirement: values[0][a]: Invalid value: "-5": ${labelValueMsg}` }],
  ["a>+5", { error: `unable to parse requirement: values[0][a]: Invalid value: "+5": ${labelValueMsg}` }],
  [
    "a>99999999999999999999",
    {
      error:
        "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for 'Gt', 'Lt' operators, the value must be an integer",
    },
  ],
  [
    `a=${"v".repeat(64)}`,
    { error: `unable to parse requirement: values[0][a]: Invalid value: "${"v".repeat(64)}": must be no more than 63 bytes` },
  ],
  ["A_B.c-d=Ok", { text: "A_B.c-d=Ok", empty: false }],
  ["/a", { error: 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty' }],
  ["a/", { error: `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; name part ${labelNameMsg}` }],
  ["a/b/c", { error: `unable to parse requirement: <nil>: Invalid value: "a/b/c": ${labelKeySlashesMsg}` }],
  ["-a", { error: `unable to parse requirement: <nil>: Invalid value: "-a": name part ${labelNameMsg}` }],
  [".a", { error: `unable to parse requirement: <nil>: Invalid value: ".a": name part ${labelNameMsg}` }],
  ["a-", { error: `unable to parse requirement: <nil>: Invalid value: "a-": name part ${labelNameMsg}` }],
  [
    `example.com/${"n".repeat(64)}`,
    {
      error: `unable to parse requirement: <nil>: Invalid value: "example.com/${"n".repeat(64)}": name part must be no more than 63 bytes`,
    },
  ],
  [
    `${"x".repeat(254)}/a`,
    { error: `unable to parse requirement: <nil>: Invalid value: "${"x".repeat(254)}/a": prefix part must be no more than 253 bytes` },
  ],
  ["a=b c", { error: "found 'c', expected: ',' or 'end of string'" }],
  ["in", { text: "in", empty: false }],
  ["notin", { text: "notin", empty: false }],
  ["in in (in)", { text: "in in (in)", empty: false }],
  ["notin=in", { text: "notin=in", empty: false }],
  ["a,!b,c in (d),e notin (f),g!=h,i==j,k>1,l<2", { text: "a,!b,c in (d),e notin (f),g!=h,i==j,k>1,l<2", empty: false }],
  ["a\u0000b", { error: "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt" }],
  ["a,\u0000b", { text: "a,b", empty: false }],
  ["a=\u0000", { text: "a=", empty: false }],
  ["\u00e4=b", { error: `unable to parse requirement: <nil>: Invalid value: "\u00e4": name part ${labelNameMsg}` }],
  ["a=\u00e4", { error: `unable to parse requirement: values[0][a]: Invalid value: "\u00e4": ${labelValueMsg}` }],
  ["a in (b,\u00e4)", { error: `unable to parse requirement: values[1][a]: Invalid value: "\u00e4": ${labelValueMsg}` }],
  ["a\tin\t(b)", { text: "a in (b)", empty: false }],
  ["a in(b)", { text: "a in (b)", empty: false }],
  ["a=(", { error: "unable to parse requirement: found '(', expected: identifier" }],
  ["a=)", { error: "unable to parse requirement: found ')', expected: identifier" }],
  ["a in ((b))", { error: "unable to parse requirement: found '(', expected: ',', ')' or identifier" }],
  ["!a=b", { error: "found '=', expected: ',' or 'end of string'" }],
  ["!a in (b)", { error: "found 'in', expected: ',' or 'end of string'" }],
  ["a!b", { error: "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt" }],
  ["a=!b", { error: "unable to parse requirement: found '!', expected: identifier" }],
  ["a>=1", { error: "unable to parse requirement: found '=', expected: identifier" }],
  ["a<=1", { error: "unable to parse requirement: found '=', expected: identifier" }],
  ["a<>1", { error: "unable to parse requirement: found '>', expected: identifier" }],
  ["a>1,a<5", { text: "a>1,a<5", empty: false }],
];

describe("parseLabelSelector", () => {
  it.each(parseCases)("%j", (input, want) => {
    expect(
      outcome(() => {
        const s = parseLabelSelector(input);
        return { text: labelSelectorString(s), empty: labelSelectorIsEverything(s) };
      }),
    ).toEqual(want);
  });

  it("is deterministic whatever the order of requirements", () => {
    expect(labelSelectorString(parseLabelSelector("x=a,a=x"))).toBe(labelSelectorString(parseLabelSelector("a=x,x=a")));
  });

  it("keeps requirement structure: sorted keys, sorted unique values", () => {
    expect(parseLabelSelector("x notin (abc,,def),bar,z in (),w").requirements).toEqual([
      { key: "bar", operator: "exists", values: [] },
      { key: "w", operator: "exists", values: [] },
      { key: "x", operator: "notin", values: ["", "abc", "def"] },
      { key: "z", operator: "in", values: [""] },
    ]);
  });
});

const matchCases: [string, Record<string, string>, boolean][] = [
  ["", { x: "y" }, true],
  ["x=y", { x: "y" }, true],
  ["x=y,z=w", { x: "y", z: "w" }, true],
  ["x!=y,z!=w", { x: "z", z: "a" }, true],
  ["notin=in", { notin: "in" }, true],
  ["x", { x: "z" }, true],
  ["!x", { y: "z" }, true],
  ["x>1", { x: "2" }, true],
  ["x<1", { x: "0" }, true],
  ["x=z", {}, false],
  ["x=y", { x: "z" }, false],
  ["x=y,z=w", { x: "w", z: "w" }, false],
  ["x!=y,z!=w", { x: "z", z: "w" }, false],
  ["x", { y: "z" }, false],
  ["!x", { x: "z" }, false],
  ["x>1", { x: "0" }, false],
  ["x<1", { x: "2" }, false],
  ["foo=bar", { foo: "bar", baz: "blah" }, true],
  ["baz=blah", { foo: "bar", baz: "blah" }, true],
  ["foo=bar,baz=blah", { foo: "bar", baz: "blah" }, true],
  ["foo=blah", { foo: "bar", baz: "blah" }, false],
  ["baz=bar", { foo: "bar", baz: "blah" }, false],
  ["foo=bar,foobar=bar,baz=blah", { foo: "bar", baz: "blah" }, false],
  ["x in (foo),y notin (alpha)", { x: "foo", y: "baz" }, true],
  ["x in (foo),y in (alpha)", { x: "foo", y: "baz" }, false],
  ["x notin (),y", { y: "" }, true],
  ["!x,y", { y: "" }, true],
  ["x notin (),!y", { y: "" }, false],
  ["x in ()", { y: "baz" }, false],
  ["x in ()", { x: "" }, true],
  ["z>1", { z: "2" }, true],
  ["z>1", { z: "v2" }, false],
  ["z<10", { z: "-3" }, true],
  ["z>1", { z: "99999999999999999999" }, false],
  ["z>9223372036854775806", { z: "9223372036854775807" }, true],
  ["x=", { x: "" }, true],
  ["x=", {}, false],
  ["x!=", {}, true],
  ["x!=a", {}, true],
  ["constructor", {}, false],
  ["!constructor", {}, true],
  ["toString=a", {}, false],
];

describe("labelSelectorMatches", () => {
  it.each(matchCases)("%j matches %j: %s", (selector, labels, want) => {
    expect(labelSelectorMatches(parseLabelSelector(selector), labels)).toBe(want);
  });

  it("treats missing labels as an empty set", () => {
    expect(labelSelectorMatches(parseLabelSelector("!a"), undefined)).toBe(true);
    expect(labelSelectorMatches(parseLabelSelector("a"), null)).toBe(false);
  });

  it("compares integers beyond 2^53 exactly, and rejects what ParseInt rejects", () => {
    const gt = newLabelRequirement("n", "gt", ["9007199254740992"]);
    expect(labelRequirementMatches(gt, { n: "9007199254740993" })).toBe(true);
    expect(labelRequirementMatches(newLabelRequirement("n", "lt", ["10"]), { n: "+3" })).toBe(true);
    expect(labelRequirementMatches(newLabelRequirement("n", "lt", ["10"]), { n: "3.0" })).toBe(false);
    expect(labelRequirementMatches(newLabelRequirement("n", "lt", ["10"]), { n: "0x3" })).toBe(false);
  });

  it("everything matches all, nothing matches none", () => {
    expect(labelSelectorMatches(everythingLabelSelector, { x: "y" })).toBe(true);
    expect(labelSelectorIsEverything(everythingLabelSelector)).toBe(true);
    expect(labelSelectorMatches(nothingLabelSelector, {})).toBe(false);
    expect(labelSelectorIsEverything(nothingLabelSelector)).toBe(false);
  });
});

const requirementCases: [string, string, string[], Outcome][] = [
  ["x1", "in", [], { error: "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty" }],
  ["x2", "notin", [], { error: "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty" }],
  ["x3", "in", ["foo"], { text: "x3 in (foo)" }],
  ["x5", "=", ["bar", "foo"], { error: 'values: Invalid value: ["bar","foo"]: exact-match compatibility requires one single value' }],
  ["x6", "exists", [], { text: "x6" }],
  ["x7", "!", [], { text: "!x7" }],
  ["x8", "exists", ["foo"], { error: 'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist' }],
  ["x11", "gt", ["1"], { text: "x11>1" }],
  ["x13", "gt", [], { error: "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required" }],
  ["x14", "gt", ["bar"], { error: "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer" }],
  ["x15", "lt", ["bar"], { error: "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer" }],
  ["a".repeat(254), "exists", [], { error: `key: Invalid value: "${"a".repeat(254)}": name part must be no more than 63 bytes` }],
  ["x16", "=", ["a".repeat(254)], { error: `values[0][x16]: Invalid value: "${"a".repeat(254)}": must be no more than 63 bytes` }],
  ["x17", "=", ["a b"], { error: `values[0][x17]: Invalid value: "a b": ${labelValueMsg}` }],
  [
    "x18",
    "unsupportedOp",
    [],
    { error: 'operator: Unsupported value: "unsupportedOp": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"' },
  ],
  ["x19", "gt", ["1", "2"], { error: "values: Invalid value: [\"1\",\"2\"]: for 'Gt', 'Lt' operators, exactly one value is required" }],
  [
    "bad key",
    "in",
    ["a b", "c"],
    { error: `[key: Invalid value: "bad key": name part ${labelNameMsg}, values[0][bad key]: Invalid value: "a b": ${labelValueMsg}]` },
  ],
  ["x20", "in", ["b", "a", "b"], { text: "x20 in (a,b,b)" }],
  ["x21", "notin", ["a"], { text: "x21 notin (a)" }],
  ["x22", "==", ["v"], { text: "x22==v" }],
  ["x23", "!=", [""], { text: "x23!=" }],
  ["k<x>", "exists", [], { error: `key: Invalid value: "k<x>": name part ${labelNameMsg}` }],
  ["k", "=", ["\u0001<&>"], { error: `values[0][k]: Invalid value: "\\x01<&>": ${labelValueMsg}` }],
  [
    "x",
    "gt",
    ["a", "b"],
    {
      error:
        "[values: Invalid value: [\"a\",\"b\"]: for 'Gt', 'Lt' operators, exactly one value is required, values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer, values[1]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer]",
    },
  ],
];

describe("newLabelRequirement", () => {
  it.each(requirementCases)("%j %s %j", (key, op, values, want) => {
    expect(
      outcome(() => ({
        text: labelSelectorString(addLabelRequirements(everythingLabelSelector, newLabelRequirement(key, op as LabelOperator, values))),
      })),
    ).toEqual(want);
  });

  it("prints a nil value list as null", () => {
    expect(() => newLabelRequirement("x", "in")).toThrow(
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    );
  });
});

describe("labelSelectorString (TestToString)", () => {
  const r = newLabelRequirement;
  it.each<[string, ReturnType<typeof r>[]]>([
    ["x in (abc,def),y notin (jkl),z", [r("x", "in", ["abc", "def"]), r("y", "notin", ["jkl"]), r("z", "exists", [])]],
    ["x notin (abc,def),y!=jkl,!z", [r("x", "notin", ["abc", "def"]), r("y", "!=", ["jkl"]), r("z", "!", [])]],
    ["x notin (abc),y in (jkl,mno),z notin ()", [r("x", "notin", ["abc"]), r("y", "in", ["jkl", "mno"]), r("z", "notin", [""])]],
    ["x=abc,y==jkl,z!=a,z", [r("x", "=", ["abc"]), r("y", "==", ["jkl"]), r("z", "!=", ["a"]), r("z", "exists", [])]],
    ["x>2,y<8,z", [r("x", "gt", ["2"]), r("y", "lt", ["8"]), r("z", "exists", [])]],
    ["x in (a,b)", [r("x", "in", ["b", "a"])]],
  ])("%s", (want, reqs) => {
    expect(labelSelectorString({ requirements: reqs, matchesNothing: false })).toBe(want);
  });
});

describe("labelSelectorRequiresExactMatch", () => {
  it.each<[string, string, string | undefined]>([
    ["key in (value)", "key", "value"],
    ["key in (value,value2)", "key", undefined],
    ["key in (value,value1),key2 in (value2)", "key2", "value2"],
    ["key=value", "key", "value"],
    ["key==value", "key", "value"],
    ["key!=value", "key", undefined],
    ["key in (value),key2 in (value2)", "key", "value"],
    ["other=value", "key", undefined],
  ])("%s requires %s = %s", (selector, key, want) => {
    expect(labelSelectorRequiresExactMatch(parseLabelSelector(selector), key)).toBe(want);
  });
});

const objectCases: [LabelSelectorObject | null, Outcome][] = [
  [null, { text: "", empty: false }],
  [{}, { text: "", empty: true }],
  [{ matchLabels: {} }, { text: "", empty: true }],
  [{ matchLabels: { b: "2", a: "1" } }, { text: "a=1,b=2", empty: false }],
  [
    {
      matchLabels: { a: "1" },
      matchExpressions: [
        { key: "c", operator: "In", values: ["y", "x"] },
        { key: "b", operator: "DoesNotExist" },
      ],
    },
    { text: "a=1,!b,c in (x,y)", empty: false },
  ],
  [
    { matchExpressions: [{ key: "x", operator: "In" }] },
    { error: "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty" },
  ],
  [
    { matchExpressions: [{ key: "x", operator: "In", values: [] }] },
    { error: "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty" },
  ],
  [
    { matchExpressions: [{ key: "x", operator: "NotIn" }] },
    { error: "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty" },
  ],
  [
    { matchExpressions: [{ key: "x", operator: "Exists", values: ["a"] }] },
    { error: 'values: Invalid value: ["a"]: values set must be empty for exists and does not exist' },
  ],
  [
    { matchExpressions: [{ key: "x", operator: "DoesNotExist", values: ["a", "b"] }] },
    { error: 'values: Invalid value: ["a","b"]: values set must be empty for exists and does not exist' },
  ],
  [{ matchExpressions: [{ key: "x", operator: "Foo" }] }, { error: '"Foo" is not a valid label selector operator' }],
  [{ matchExpressions: [{ key: "x", operator: "in", values: ["a"] }] }, { error: '"in" is not a valid label selector operator' }],
  [{ matchExpressions: [{ key: "x", operator: "" }] }, { error: '"" is not a valid label selector operator' }],
  [{ matchLabels: { a: "not valid" } }, { error: `values[0][a]: Invalid value: "not valid": ${labelValueMsg}` }],
  [{ matchLabels: { "a/b/c": "v" } }, { error: `key: Invalid value: "a/b/c": ${labelKeySlashesMsg}` }],
  [
    { matchExpressions: [{ key: "a b", operator: "In" }] },
    {
      error: `[key: Invalid value: "a b": name part ${labelNameMsg}, values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty]`,
    },
  ],
  [
    {
      matchExpressions: [
        { key: "x", operator: "Exists" },
        { key: "x", operator: "NotIn", values: ["a"] },
      ],
    },
    { text: "x,x notin (a)", empty: false },
  ],
];

describe("labelSelectorFromObject", () => {
  it.each(objectCases)("%j", (object, want) => {
    expect(
      outcome(() => {
        const s = labelSelectorFromObject(object);
        return { text: labelSelectorString(s), empty: labelSelectorIsEverything(s) };
      }),
    ).toEqual(want);
  });

  it("selects nothing for a missing selector and everything for an empty one", () => {
    expect(labelSelectorMatches(labelSelectorFromObject(undefined), { a: "b" })).toBe(false);
    expect(labelSelectorMatches(labelSelectorFromObject({}), { a: "b" })).toBe(true);
    const s = labelSelectorFromObject({
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }],
    });
    expect(labelSelectorMatches(s, { app: "web", tier: "fe" })).toBe(true);
    expect(labelSelectorMatches(s, { app: "web", tier: "db" })).toBe(false);
  });
});

describe("labelSelectorFromSet", () => {
  it.each<[Record<string, string> | undefined, string]>([
    [undefined, ""],
    [{}, ""],
    [{ app: "foo" }, "app=foo"],
    [{ app: "foo", a: "b" }, "a=b,app=foo"],
  ])("%j → %s", (set, want) => {
    expect(labelSelectorString(labelSelectorFromSet(set))).toBe(want);
  });
  it("matches its own set and supersets", () => {
    expect(labelSelectorMatches(labelSelectorFromSet({ foo: "bar" }), { foo: "bar", baz: "blah" })).toBe(true);
    expect(labelSelectorMatches(labelSelectorFromSet({ foo: "bar", x: "y" }), { foo: "bar" })).toBe(false);
  });
});
