// The runtime cost of CEL evaluations against the exact figures of outside tables:
// - cel-go v0.22 interpreter/runtimecost_test.go TestRuntimeCost (the cases without protobuf messages),
// - Kubernetes v1.32 k8s.io/apiserver/pkg/cel/library/cost_test.go (expectRuntimeCost of its library
//   cases, the ones orch's type checker accepts: it refuses mixed list literals as Kubernetes' does),
// both computed by cel-go without cel.OptOptimize (so `constantFolding: false` here), and
// - apiextensions-apiserver v0.32 pkg/apiserver/schema/cel/validation_test.go (expectedCost and the
//   budgets of TestMessageExpression), computed in the program Kubernetes builds (constants folded).
import { describe, expect, it } from "vitest";
import { compileCelExpression } from "../src/crd-rules.js";

type Vars = Record<string, string>;

function costOf(expression: string, vars: Vars = {}, activation: Record<string, unknown> = {}, constantFolding = true, limit?: number) {
  const compiled = compileCelExpression(expression, vars, { constantFolding });
  if (!compiled.ok) throw new Error(compiled.message);
  return compiled.program.evaluate(activation, limit);
}

const letters = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
const bytes = (n: number) => new Uint8Array(Buffer.from(letters(n)));

describe("cel-go TestRuntimeCost (v0.22, without OptOptimize)", () => {
  const nested = "map<string, map<string, dyn>>";
  const cases: [string, number, Vars?, Record<string, unknown>?][] = [
    [`"Hello World!"`, 0],
    ["input", 1, { input: "list<int>" }, { input: [1n, 2n] }],
    ["input['key']", 2, { input: "map<string, string>" }, { input: new Map([["key", "v"]]) }],
    ["input[0]", 2, { input: "list<string>" }, { input: ["v"] }],
    ["input['ke' + 'y']", 3, { input: "map<string, string>" }, { input: new Map([["key", "v"]]) }],
    ["input[3-3]", 3, { input: "list<string>" }, { input: ["v"] }],
    ["has(input.testAttr.nestedAttr)", 2, { input: nested }, { input: new Map([["testAttr", new Map([["nestedAttr", "0"]])]]) }],
    ["[1, 2, 3]", 10],
    [`{"a": 1, "b": 2, "c": 3}`, 30],
    ["input.all(x, true)", 2, { input: "list<dyn>" }, { input: [] }],
    ["input.all(x, x.all(y, true))", 2, { input: "list<list<dyn>>" }, { input: [] }],
    ["[1, 2, 3].all(x, true)", 20],
    ["input.matches('[0-9]')", 103, { input: "string" }, { input: letters(500) }],
    ["'123'.matches('[0-9]')", 2],
    ["false || false", 0],
    ["true || false", 0],
    ["a || b || c || d", 4, { a: "bool", b: "bool", c: "bool", d: "bool" }, { a: false, b: false, c: false, d: false }],
    ["true && false", 0],
    ["false && true", 0],
    ["a && b && c && d", 4, { a: "bool", b: "bool", c: "bool", d: "bool" }, { a: true, b: true, c: true, d: true }],
    ["1 < 2", 1],
    ["1 <= 2", 1],
    ["1 == 2", 1],
    ["2 > 1", 1],
    ["2 >= 1", 1],
    ["2 in [1, 2, 3]", 13],
    ["1 + 1", 1],
    ["1 - 1", 1],
    ["1 / 1", 1],
    ["1 * 1", 1],
    ["1 % 1", 1],
    ["true ? 1 : 2", 0],
    [`size("123")`, 1],
    ["'12345678901234567890' == '123456789012345678901234567890'", 2],
    ["string(input)", 51, { input: "bytes" }, { input: bytes(500) }],
    ["bytes(input)", 51, { input: "string" }, { input: letters(500) }],
    ["string(1)", 1],
    ["input.contains(arg1)", 2502, { input: "string", arg1: "string" }, { input: letters(500), arg1: letters(500) }],
    ["input.matches('\\\\d+a\\\\d+b')", 103, { input: "string" }, { input: letters(500) }],
    ["input.startsWith(arg1)", 3, { input: "string", arg1: "string" }, { input: "idc", arg1: letters(500) }],
    ["input.endsWith(arg1)", 3, { input: "string", arg1: "string" }, { input: "idc", arg1: letters(500) }],
    ["input.size()", 2, { input: "string" }, { input: "500" }],
    ["size(input)", 2, { input: "string" }, { input: "500" }],
    [
      "(x > 2 ? input1 : input2).all(y, true)",
      6,
      { x: "int", input1: "list<dyn>", input2: "list<dyn>" },
      { x: 1n, input1: [new Map()], input2: [new Map()] },
    ],
    ["true ? false : 1 > 3", 0],
    ["false ? false : 1 > 3", 1],
    [
      "input.all(k, input[k].single_int32 > 3)",
      9,
      { input: "map<string, map<string, int>>" },
      { input: new Map([["val", new Map([["single_int32", 0n]])]]) },
    ],
    ["input.all(k, input[k].all(x, true))", 2, { input: nested }, { input: new Map() }],
    ["input.all(k, k.contains(k))", 2, { input: nested }, { input: new Map() }],
    ["input.all(k, input[k].all(k, true) && k.contains(k))", 2, { input: nested }, { input: new Map() }],
    ["(list1 + list2).all(x, true)", 4, { list1: "list<int>", list2: "list<int>" }, { list1: [], list2: [] }],
    [`"abcdefg".contains(str1 + str2)`, 6, { str1: "string", str2: "string" }, { str1: "val1", str2: "val2222222" }],
    ["(1 > 2 ? 5 : 3) > 1", 2],
    ["(1 > 2 || 2 > 1) == true", 3],
    ["[{'k1': 1}, {'k2': 2}].all(x, true)", 77],
    ["[1,2,3,4,5].filter(x, x % 2 == 0)", 62],
    ["[1,2,3,4,5].map(x, x)", 86],
    ["[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)", 138],
    ["[1,2,3,4,5].map(x, x).exists(x, x == 5) == true", 118],
    ["[1,2,3,4,5].map(x, x).map(x, x)", 162],
    ["[1,2,3,4,5].map(x, [x, x]).filter(z, z.size() == 2)", 232],
    ["[1,2,3,4,5].map(x, [x, x]).all(y, y.all(y, y == 1))", 171],
    ["[1,2,3,4,5].map(x, x).map(x, x) + [1]", 173],
    ["[1,2,3].all(i, i in [1,2,3].map(j, j + j))", 86],
  ];
  for (const [expression, want, vars, activation] of cases) {
    it(`${expression} costs ${want}`, () => {
      const result = costOf(expression, vars, activation, false);
      expect(result.ok ? result.cost : result).toBe(want);
    });
  }

  it("a limit equal to the cost passes; one below it cancels the evaluation", () => {
    const vars = { str1: "string", str2: "string" };
    const input = { str1: "val1", str2: "val2222222" };
    const expression = `"abcdefg".contains(str1 + str2)`;
    expect(costOf(expression, vars, input, false, 6)).toMatchObject({ ok: true, cost: 6 });
    expect(costOf(expression, vars, input, false, 5)).toMatchObject({
      ok: false,
      reason: "cost",
      message: "operation cancelled: actual cost limit exceeded",
    });
  });
});

describe("Kubernetes' library cost table (k8s.io/apiserver v0.32 library/cost_test.go, without OptOptimize)", () => {
  const intList = "[1, 2, 3, 4, 5]";
  const uintList = "[uint(1), uint(2), uint(3), uint(4), uint(5)]";
  const doubleList = "[1.0, 2.0, 3.0, 4.0, 5.0]";
  const boolList = "[false, true, false, true, false]";
  const stringList = "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']";
  const bytesList = "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]";
  const durationList = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]";
  const timestampList =
    "[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), " +
    "timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), " +
    "timestamp('2011-01-05T00:00:00.000+01:00')]";
  const stringLiteral = "'01234567890123456789012345678901234567890123456789'";
  const ipv4 = "ip('192.168.0.1')";
  const ipv6 = "ip('2001:db8:3333:4444:5555:6666:7777:8888')";
  const cidr4 = "cidr('192.168.0.0/16')";
  const cidr6 = "cidr('2001:db8::/32')";
  const url = "url('https:://kubernetes.io/')";

  const cases: [string, number][] = [
    // TestListsCost
    ...[intList, doubleList, durationList].flatMap((l): [string, number][] => [[`${l}.sum()`, l === durationList ? 20 : 15]]),
    [`${uintList}.sum()`, 20],
    ...[".isSorted()", ".max()", ".min()"].flatMap((op): [string, number][] => [
      [`${intList}${op}`, 15],
      [`${uintList}${op}`, 20],
      [`${doubleList}${op}`, 15],
      [`${boolList}${op}`, 15],
      [`${stringList}${op}`, 15],
      [`${bytesList}${op}`, 25],
      [`${durationList}${op}`, 20],
      [`${timestampList}${op}`, 20],
    ]),
    // TestIndexOfCost
    ...[".indexOf", ".lastIndexOf"].flatMap((op): [string, number][] => [
      [`${intList}${op}(3)`, 15],
      [`${uintList}${op}(uint(3))`, 21],
      [`${doubleList}${op}(3.0)`, 15],
      [`${boolList}${op}(true)`, 15],
      [`${stringList}${op}('x')`, 15],
      [`${bytesList}${op}(bytes('x'))`, 26],
      [`${durationList}${op}(duration('3s'))`, 21],
      [`${timestampList}${op}(timestamp('2011-01-03T00:00:00.000+01:00'))`, 21],
      [`${stringLiteral}${op}('123')`, 5],
    ]),
    // TestURLsCost
    ...[".getScheme()", ".getHostname()", ".getHost()", ".getPort()", ".getEscapedPath()", ".getQuery()"].map((op): [string, number] => [
      `${url}${op}`,
      4,
    ]),
    [`${url} == url('https:://kubernetes.io/')`, 7],
    [`${url} == url('http://x.b')`, 5],
    // TestIPCost
    [ipv4, 2],
    [ipv6, 4],
    ...[".family()", ".isUnspecified()", ".isLoopback()", ".isLinkLocalMulticast()", ".isLinkLocalUnicast()", ".isGlobalUnicast()"].flatMap(
      (op): [string, number][] => [
        [`${ipv4}${op}`, 3],
        [`${ipv6}${op}`, 5],
      ],
    ),
    [`${ipv4} == ip('192.168.0.1')`, 5],
    [`${ipv6} == ip('192.168.0.1')`, 7],
    // TestIPIsCanonicalCost
    ["ip.isCanonical('192.168.0.1')", 3],
    ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8],
    ["ip.isCanonical('2001:db8::abcd')", 3],
    // TestCIDRCost
    ...[cidr4, cidr6].flatMap((c): [string, number][] => [
      [c, 2],
      [`${c}.ip()`, 3],
      [`${c}.prefixLength()`, 3],
      [`${c}.masked()`, 3],
      [`${c} == cidr('2001:db8::/32')`, 5],
    ]),
    [`${cidr4}.containsCIDR(cidr('192.0.0.0/30'))`, 7],
    [`${cidr4}.containsCIDR(cidr('192.168.0.0/16'))`, 7],
    [`${cidr4}.containsCIDR('192.0.0.0/30')`, 7],
    [`${cidr4}.containsCIDR('192.168.0.0/16')`, 7],
    [`${cidr4}.containsIP(ip('192.0.0.1'))`, 4],
    [`${cidr4}.containsIP(ip('192.169.0.1'))`, 5],
    [`${cidr4}.containsIP(ip('192.169.169.250'))`, 5],
    [`${cidr4}.containsIP('192.0.0.1')`, 4],
    [`${cidr4}.containsIP('192.169.0.1')`, 5],
    [`${cidr6}.containsCIDR(cidr('2001:db8::/126'))`, 7],
    [`${cidr6}.containsCIDR(cidr('2001:db8::/32'))`, 7],
    [`${cidr6}.containsCIDR('2001:db8::/126')`, 7],
    [`${cidr6}.containsCIDR('2001:db8::/32')`, 7],
    [`${cidr6}.containsIP(ip('2001:db8:3333:4444:5555:6666:7777:8888'))`, 7],
    [`${cidr6}.containsIP(ip('2001:db8::1'))`, 5],
    [`${cidr6}.containsIP('2001:db8:3333:4444:5555:6666:7777:8888')`, 7],
    [`${cidr6}.containsIP('2001:db8::1')`, 5],
    // TestStringLibrary
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3],
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9],
    ["'ABCDEFGHIJ abcdefghij'.upperAscii()", 3],
    ["'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()", 9],
    ["strings.quote('ABCDEFGHIJ abcdefghij')", 3],
    ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 9],
    ["'abc 123 def 123'.replace('123', '456')", 3],
    ["'abc 123 def 123'.replace('', 'x')", 3],
    ["'abc 123 def 123'.replace('123', '')", 3],
    ["'abc 123 def 123'.replace('123', '456', 1)", 3],
    ["'abc 123 def 123'.split(' ')", 3],
    ["'abc 123 def 123'.split(' ', 1)", 3],
    ["'abc 123 def 123'.substring(5)", 2],
    ["'abc 123 def 123'.substring(5, 8)", 2],
    ["'  abc 123 def 123  '.trim()", 2],
    ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", 15],
    ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", 13],
    ["'abc 123 def 123'.find('123')", 2],
    ["'abc 123 def 123'.findAll('123')", 2],
    ["'abc 123 def 123'.findAll('123', 1)", 2],
    // TestQuantityCost
    [`quantity("12Mi")`, 1],
    [`isQuantity("20")`, 1],
    [`isQuantity("20M")`, 1],
    [`quantity("200M") == quantity("200M")`, 3],
    [`quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")`, 6],
    [`quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")`, 9],
    [`quantity("50M").isLessThan(quantity("50Mi"))`, 3],
    [`quantity("50Mi").isGreaterThan(quantity("50M"))`, 3],
    [`quantity("200M").compareTo(quantity("0.2G")) > 0`, 4],
    [`quantity("50k").add(quantity("20")) == quantity("50.02k")`, 5],
    [`quantity("50k").sub(quantity("20")) == quantity("49.98k")`, 5],
    [`quantity("50k").sub(20) == quantity("49980")`, 4],
    [`quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0`, 6],
    [`quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0`, 7],
    [`quantity("50k").asInteger() > 0`, 3],
    [`quantity("50").isInteger()`, 2],
    [`quantity("50.703k").asApproximateFloat() > 0.0`, 3],
    // TestNameFormatCost
    [`format.named("dns1123subdomain")`, 1],
    [`format.named("dns1123Subdomain").value().validate("my-name")`, 17],
    [`format.named("dns1123Label").value().validate("my-name")`, 10],
    [`format.named("dns1123Label").value() == format.named("dns1123Label").value()`, 5],
    // TestSetsCost (homogeneous cases)
    ["sets.contains([], [])", 21],
    ["sets.contains([1], [])", 21],
    ["sets.contains([1], [1])", 22],
    ["sets.contains([1], [1, 1])", 23],
    ["sets.contains([1, 1], [1])", 23],
    ["sets.contains([2, 1], [1])", 23],
    ["sets.contains([1, 2, 3, 4], [2, 3])", 29],
    ["!sets.contains([1], [2])", 23],
    ["!sets.contains([1], [1, 2])", 24],
    ["sets.equivalent([], [])", 21],
    ["sets.equivalent([1], [1])", 23],
    ["sets.equivalent([1], [1, 1])", 25],
    ["sets.equivalent([1, 1], [1])", 25],
    ["!sets.equivalent([2, 1], [1])", 26],
    ["!sets.equivalent([1], [1, 2])", 26],
    ["sets.intersects([1], [1])", 22],
    ["sets.intersects([1], [1, 1])", 23],
    ["sets.intersects([1, 1], [1])", 23],
    ["sets.intersects([2, 1], [1])", 23],
    ["sets.intersects([1], [1, 2])", 23],
    ["!sets.intersects([], [])", 22],
    ["!sets.intersects([1], [])", 22],
    ["!sets.intersects([1], [2])", 23],
  ];
  for (const [expression, want] of cases) {
    it(`${expression} costs ${want}`, () => {
      const result = costOf(expression, {}, {}, false);
      expect(result.ok ? result.cost : result).toBe(want);
    });
  }
});

describe("Kubernetes' CRD validation costs (apiextensions-apiserver v0.32 validation_test.go, constants folded)", () => {
  const cases: [string, number, Vars?, Record<string, unknown>?][] = [
    // TestValidationExpressions "cost for extended lib calculated correctly"
    ["[1,2,3,4].isSorted()", 4],
    ["url('https:://kubernetes.io/').getHostname() != 'test'", 4],
    ["size('abc 123 def 123'.split(' ')) > 0", 5],
    ["size(['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')) > 0", 7],
    // TestMessageExpression: what the messageExpression took from the budget (50 - remaining).
    [`"str1 " + self.str`, 4, { self: "map<string, string>" }, { self: new Map([["str", "a string"]]) }],
  ];
  for (const [expression, want, vars, activation] of cases) {
    it(`${expression} costs ${want}`, () => {
      const result = costOf(expression, vars, activation);
      expect(result.ok ? result.cost : result).toBe(want);
    });
  }

  it("a failed evaluation keeps what it cost until the error (TestMessageExpression: 3)", () => {
    const result = costOf(`"str1 " + ["a", "b", "c", "d"][4]`);
    expect(result).toMatchObject({ ok: false, message: "index out of bounds: 4", cost: 3 });
  });

  it("folds constant literals and conversions, and looks up `in` a constant list of scalars for free", () => {
    expect(costOf("[1, 2, 3].all(x, true)").cost).toBe(10);
    expect(costOf("2 in [1, 2, 3]").cost).toBe(0);
    expect(costOf("x in [1, 2, 3]", { x: "int" }, { x: 2n }).cost).toBe(1);
    expect(costOf("x in l", { x: "int", l: "list<int>" }, { x: 2n, l: [1n, 2n, 3n] }).cost).toBe(5);
    expect(costOf("[duration('1s'), duration('2s')].sum() == duration('3s')").cost).toBe(3);
    expect(costOf("[1, 2, 3].map(x, x * 2)").cost).toBe(3 * 14 + 1);
    expect(costOf("[1, 2, 3].map(x, 1)").cost).toBe(3 * 2 + 1);
  });

  it("a ?: branch that is a variable or a selection resolves without its variable's cost", () => {
    const vars = { c: "bool", a: "map<string, string>", b: "map<string, string>" };
    const input = { c: true, a: new Map([["x", "1"]]), b: new Map([["x", "2"]]) };
    expect(costOf("c ? a : b", vars, input).cost).toBe(1);
    expect(costOf("(c ? a : b).x", vars, input).cost).toBe(2);
    expect(costOf("c ? a.x : b.x", vars, input).cost).toBe(2);
    expect(costOf("c ? a.x + 'y' : b.x", vars, input).cost).toBe(4);
  });

  it("all and exists pay the loop condition once more when they stop early", () => {
    const vars = { l: "list<int>" };
    const input = { l: [1n, 2n, 3n, 4n] };
    // all: l 1; per element 3 + (x 1, > 1); stops after the 2nd: +2; result 1.
    expect(costOf("l.all(x, x < 2)", vars, input).cost).toBe(1 + 2 * 5 + 2 + 1);
    // exists: per element 4 + 2; stops after the 1st: +3; result 1.
    expect(costOf("l.exists(x, x > 0)", vars, input).cost).toBe(1 + 6 + 3 + 1);
    // exists_one: per element the predicate, +2 per match; result 2.
    expect(costOf("l.exists_one(x, x > 3)", vars, input).cost).toBe(1 + 4 * 2 + 2 + 2);
    // filter keeps 2 of 4: 13 each; map over a map visits its keys.
    expect(costOf("l.filter(x, x > 2)", vars, input).cost).toBe(1 + 4 * 2 + 2 * 13 + 1);
    expect(costOf("m.map(k, k)", { m: "map<string, int>" }, { m: new Map([["a", 1n]]) }).cost).toBe(1 + 13 + 1);
  });

  // cel-go keeps errors as values: the step of map(), filter() and exists_one() turns the accumulator
  // into the error and the loop (condition `true`) runs to the end, the result read included.
  it("map(), filter() and exists_one() cost every element even after one fails", () => {
    const vars = { l: "list<int>" };
    const input = { l: [1n, 0n, 20n, 5n] };
    // l 1; per element 10 / x 2 + accu 1, [..] 10, + 1; result 1.
    expect(costOf("l.map(x, 10 / x)", vars, input)).toMatchObject({ ok: false, message: "division by zero", cost: 1 + 4 * 14 + 1 });
    // Per element the predicate 3; 1 and 5 are kept (13 each), after the error too; result 1.
    expect(costOf("l.filter(x, 10 / x > 1)", vars, input)).toMatchObject({ ok: false, cost: 1 + 4 * 3 + 2 * 13 + 1 });
    expect(costOf("l.map(x, 10 / x > 1, x)", vars, input)).toMatchObject({ ok: false, cost: 1 + 4 * 3 + 2 * 13 + 1 });
    // Per element the predicate 3, +2 per match (1 and 5); the result `accu == 1` 2.
    expect(costOf("l.exists_one(x, 10 / x > 1)", vars, input)).toMatchObject({ ok: false, cost: 1 + 4 * 3 + 2 * 2 + 2 });
    // An inner failure fails the outer step, and the outer loop goes on: per outer element 12 + inner
    // (y 1, 2 elements of 14, result 1).
    expect(costOf("[[1, 0], [2, 3]].map(y, y.map(x, 10 / x))")).toMatchObject({ ok: false, cost: 2 * (12 + 30) + 1 });
  });

  it("the elements after an error can exhaust the cost limit", () => {
    const vars = { l: "list<int>" };
    const input = { l: [1n, 0n, 20n, 5n] };
    expect(costOf("l.map(x, 10 / x)", vars, input, true, 58)).toMatchObject({ ok: false, message: "division by zero" });
    expect(costOf("l.map(x, 10 / x)", vars, input, true, 57)).toMatchObject({ ok: false, reason: "cost" });
  });

  it("all() and exists() that end in an error still read their result", () => {
    const vars = { l: "list<int>" };
    const input = { l: [1n, 0n, 2n] };
    // l 1; per element the condition and accumulator 3 + the predicate 3; result 1.
    expect(costOf("l.all(x, 10 / x > 0)", vars, input)).toMatchObject({ ok: false, cost: 1 + 3 * 6 + 1 });
    expect(costOf("l.exists(x, 10 / x < 0)", vars, input)).toMatchObject({ ok: false, cost: 1 + 3 * 7 + 1 });
  });

  it("a binary operator or two-argument call evaluates its right operand after the left one failed", () => {
    const vars = { x: "int", l: "list<int>", s: "string" };
    const input = { x: 0n, l: [1n, 2n], s: "abc" };
    // x 1, / 1; l 1, size() 1; == 1.
    expect(costOf("10 / x == l.size()", vars, input)).toMatchObject({ ok: false, message: "division by zero", cost: 5 });
    // x 1, / 1, string() 1; s 1; startsWith 1 (a tenth of the error's size 1).
    expect(costOf("string(10 / x).startsWith(s)", vars, input)).toMatchObject({ ok: false, cost: 5 });
    // A call of three arguments stops at the first error, as cel-go's evalVarArgs does, and is then not
    // priced (its cost tracker finds no value for `s`): x 1, / 1, string() 1.
    expect(costOf("'abc'.replace(string(10 / x), s)", vars, input)).toMatchObject({ ok: false, cost: 3 });
    // A list likewise, from its first element: s 1, x 1, / 1; the list 10 (l.size() never runs).
    expect(costOf("[s, string(10 / x), string(l.size())]", vars, input)).toMatchObject({ ok: false, cost: 1 + 3 + 10 });
    expect(costOf("[s, string(10 / x), string(l.size())]", vars, { ...input, x: 1n })).toMatchObject({ ok: true, cost: 1 + 3 + 3 + 10 });
  });

  it("has() costs its operand; cel.bind() its value and body; or/orValue skip an unused alternative", () => {
    const vars = { m: "map<string, map<string, string>>" };
    const input = { m: new Map([["a", new Map([["b", "x"]])]]) };
    expect(costOf("has(m.a)", vars, input).cost).toBe(1);
    expect(costOf("has(m.a.b)", vars, input).cost).toBe(2);
    expect(costOf("cel.bind(v, m.a, v.b + v.b)", vars, input).cost).toBe(2 + 2 + 2 + 1);
    // A bound value the body never reads is never evaluated; `x in []` is the constant false.
    expect(costOf("cel.bind(v, m.a.b + m.a.b, true)", vars, input).cost).toBe(0);
    expect(costOf("cel.bind(v, m.a.b + m.a.b, true)", vars, input, false).cost).toBe(10);
    expect(costOf("m.a.b in []", vars, input).cost).toBe(0);
    expect(costOf("m.?a.orValue(m.a)", vars, input).cost).toBe(2);
    // An optional selection of an absent field is not observed: m 1, then the alternative m.a 2.
    expect(costOf("m.?z.orValue(m.a)", vars, input).cost).toBe(1 + 2);
    expect(costOf("m[?'z'].orValue(m.a)", vars, input).cost).toBe(1 + 2);
    expect(costOf("m.?a.?z.hasValue()", vars, input).cost).toBe(2 + 1);
  });
});
