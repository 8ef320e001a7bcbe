// Kubernetes' CEL libraries in the CRD rule environment, against the table cases of
// k8s.io/apiserver v0.32 pkg/cel/library (ip_test.go, cidr_test.go, format_test.go) and cel-go's
// ext/sets and ext/strings, with their expected results and error texts.
import { describe, expect, it } from "vitest";
import { type RuleType, compileCrdRules } from "../src/index.js";

const anyType: RuleType = { kind: "dyn" };

/** Compiles `expr == expected` (expected a CEL literal) and reports the outcome. */
function evaluate(expr: string, self: unknown = null, type: RuleType = anyType): { value?: unknown; error?: string; compile?: string } {
  const [rule] = compileCrdRules(type, [{ rule: `(${expr}) == (${expr})` }]);
  if (rule?.error) return { compile: rule.error.detail };
  const [plain] = compileCrdRules(type, [{ rule: `[${expr}].size() == 1 && ${expr} == ${expr}` }]);
  const result = plain!.evaluate(self, undefined, 1_000_000);
  if (!result.ok) return { error: result.message };
  return { value: true };
}

/** Evaluates a boolean rule: true, false, or its runtime error. */
function check(rule: string, self: unknown = null, type: RuleType = anyType): boolean | string {
  const [compiled] = compileCrdRules(type, [{ rule }]);
  if (compiled?.error) return `compile: ${compiled.error.detail}`;
  const result = compiled!.evaluate(self, undefined, 1_000_000);
  return result.ok ? (result.value as boolean) : `error: ${result.message}`;
}

describe("IP library (ip_test.go)", () => {
  it.each([
    ['ip("192.168.0.1").family() == 4', true],
    ['isIP("192.168.0.1")', true],
    ['isIP("192.168.0.1.0")', false],
    ['ip.isCanonical("127.0.0.1")', true],
    ['ip("0.0.0.0").isUnspecified()', true],
    ['ip("127.0.0.1").isUnspecified()', false],
    ['ip("127.0.0.1").isLoopback()', true],
    ['ip("1.2.3.4").isLoopback()', false],
    ['ip("224.0.0.1").isLinkLocalMulticast()', true],
    ['ip("224.0.1.1").isLinkLocalMulticast()', false],
    ['ip("169.254.169.254").isLinkLocalUnicast()', true],
    ['ip("192.168.0.1").isLinkLocalUnicast()', false],
    ['ip("192.168.0.1").isGlobalUnicast()', true],
    ['ip("255.255.255.255").isGlobalUnicast()', false],
    ['ip("2001:db8::68") == ip("2001:0db8:0:0:0:0:0:68")', true],
    ['isIP("2001:db8::68")', true],
    ['isIP("2001:db8:::68")', false],
    ['ip.isCanonical("2001:db8::68")', true],
    ['ip.isCanonical("2001:DB8::68")', false],
    ['ip("2001:db8::68").family() == 6', true],
    ['ip("::").isUnspecified()', true],
    ['ip("::1").isUnspecified()', false],
    ['ip("::1").isLoopback()', true],
    ['ip("2001:db8::abcd").isLoopback()', false],
    ['ip("ff02::1").isLinkLocalMulticast()', true],
    ['ip("fd00::1").isLinkLocalMulticast()', false],
    ['ip("fe80::1").isLinkLocalUnicast()', true],
    ['ip("fd80::1").isLinkLocalUnicast()', false],
    ['ip("2001:db8::abcd").isGlobalUnicast()', true],
    ['ip("ff00::1").isGlobalUnicast()', false],
    ['string(ip("192.168.0.1")) == "192.168.0.1"', true],
    ['string(ip("2001:0db8:0000:0000:0000:0000:0000:0068")) == "2001:db8::68"', true],
  ])("%s", (rule, expected) => {
    expect(check(rule)).toBe(expected);
  });

  it("reports Go's parse errors", () => {
    expect(check('ip("192.168.0.1.0").family() == 4')).toBe(
      'error: IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long',
    );
    expect(check('ip.isCanonical("127.0.0.1.0")')).toBe(
      'error: IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long',
    );
    expect(check('ip("2001:db8:::68").family() == 6')).toBe(
      'error: IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
    );
    expect(check('isIP("fe80::1%eth0") || isIP("::ffff:1.2.3.4")')).toBe(false);
  });

  it("refuses a CIDR where an IP string is expected, at compile time", () => {
    expect(check('isIP(cidr("192.168.0.0/24"))')).toMatch(/^compile: .*found no matching overload/);
  });
});

describe("CIDR library (cidr_test.go)", () => {
  it.each([
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', true],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', false],
    ['cidr("192.168.0.0/24").containsIP("192.168.0.1")', true],
    ['cidr("192.168.0.0/24").containsIP("192.168.1.1")', false],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', true],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))', true],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', false],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.169.0.1/32"))', false],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', true],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', false],
    ['cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', true],
    ['cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', true],
    ['cidr("192.168.0.0/24").prefixLength() == 24', true],
    ['cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', true],
    ['cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', false],
    ['cidr("2001:db8::/32").containsIP("2001:db8::1")', true],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', true],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', false],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', true],
    ['cidr("2001:db8::/32").ip() == ip("2001:db8::")', true],
    ['cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', true],
    ['cidr("2001:db8::/32").prefixLength() == 32', true],
    ['string(cidr("192.168.0.0/24")) == "192.168.0.0/24"', true],
    ['isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0") && !isCIDR("10.0.0.0/33") && !isCIDR("10.0.0.0/08")', true],
  ])("%s", (rule, expected) => {
    expect(check(rule)).toBe(expected);
  });

  it("reports Go's parse errors, wrapped twice as Kubernetes does", () => {
    expect(check('cidr("192.168.0.0/").prefixLength() == 0')).toBe(
      'error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""',
    );
    expect(check('cidr("2001:db8::/").prefixLength() == 0')).toBe(
      'error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""',
    );
  });
});

describe("URL library (urls.go, its documented examples)", () => {
  it.each([
    ['isURL("https://user:pass@example.com:80/path?query=val#fragment")', true],
    ['isURL("/absolute-path")', true],
    ['isURL("https://a:b:c/")', false],
    ['isURL("../relative-path")', false],
    ['url("/path").getScheme() == ""', true],
    // url.Parse cuts the fragment off before the query and path; it still tells URLs apart.
    ['url("https://example.com/p?k=a#frag").getQuery() == {"k": ["a"]}', true],
    ['url("https://example.com/p#frag").getEscapedPath() == "/p"', true],
    ['url("https://example.com/p#a") == url("https://example.com/p#b")', false],
    ['url("https://example.com/").getScheme() == "https"', true],
    ['url("https://example.com:80/").getHost() == "example.com:80"', true],
    ['url("https://[::1]:80/").getHost() == "[::1]:80"', true],
    ['url("https://[::1]/").getHost() == "[::1]"', true],
    ['url("/path").getHost() == ""', true],
    ['url("https://example.com:80/").getHostname() == "example.com"', true],
    ['url("https://127.0.0.1:80/").getHostname() == "127.0.0.1"', true],
    ['url("https://[::1]:80/").getHostname() == "::1"', true],
    ['url("https://example.com:80/").getPort() == "80"', true],
    ['url("https://example.com/").getPort() == ""', true],
    ['url("https://example.com/path").getEscapedPath() == "/path"', true],
    ['url("https://example.com/path with spaces/").getEscapedPath() == "/path%20with%20spaces/"', true],
    ['url("https://example.com").getEscapedPath() == ""', true],
    ['url("https://example.com/path?k1=a&k2=b&k2=c").getQuery() == {"k1": ["a"], "k2": ["b", "c"]}', true],
    ['url("https://example.com/path?key with spaces=value with spaces").getQuery() == {"key with spaces": ["value with spaces"]}', true],
    ['url("https://example.com/path?").getQuery().size() == 0', true],
  ])("%s", (rule, expected) => {
    expect(check(rule)).toBe(expected);
  });

  it("reports Go's parse errors", () => {
    expect(check('url("https://a:b:c/").getHost() == ""')).toBe(
      'error: URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host',
    );
    expect(check('url("../relative-path").getHost() == ""')).toBe(
      'error: URL parse error during conversion from string: parse "../relative-path": invalid URI for request',
    );
  });
});

describe("format library (format_test.go)", () => {
  it.each([
    'format.dns1123Label().validate("my-label-name")',
    'format.dns1123Subdomain().validate("apiextensions.k8s.io")',
    'format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")',
    'format.dns1123LabelPrefix().validate("my-label-prefix-")',
    'format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")',
    'format.dns1035LabelPrefix().validate("my-label-prefix-")',
    'format.uri().validate("http://example.com")',
    'format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")',
    'format.byte().validate("aGVsbG8=")',
    'format.date().validate("2021-01-01")',
    'format.datetime().validate("2021-01-01T00:00:00Z")',
    'format.labelValue().validate("my-cool-label-Value")',
  ])("%s is none", (expr) => {
    expect(check(`!${expr}.hasValue()`)).toBe(true);
  });

  it.each([
    [
      'format.dns1123Label().validate("contains a space")',
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ],
    [
      'format.dns1123SubdomainPrefix().validate("contains a space-")',
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ],
    [
      'format.dns1035Label().validate("contains a space")',
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ],
    [
      'format.qualifiedName().validate("contains a space")',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ],
    ['format.byte().validate("aGVsbG8")', "invalid base64"],
    ['format.date().validate("2020-01-32")', "invalid date"],
    ['format.datetime().validate("2020-01-32T00:00:00Z")', "invalid datetime"],
  ])("%s has Kubernetes' message", (expr, message) => {
    expect(check(`${expr}.value() == [${JSON.stringify(message)}]`)).toBe(true);
  });

  it("names formats; two different formats are not equal", () => {
    expect(check('format.named("unknown").hasValue()')).toBe(false);
    expect(check('format.named("dns1123Label").value() == format.dns1123Label()')).toBe(true);
    expect(check("format.dns1123Label() == format.dns1035Label()")).toBe(false);
  });
});

describe("sets and strings extensions (cel-go ext)", () => {
  it.each([
    ["sets.contains([], [])", true],
    ["sets.contains([1, 2, 3, 4], [2, 3])", true],
    ["sets.contains([1, 2, 3], [3, 4])", false],
    ["sets.equivalent([1, 2, 3], [3, 2, 1, 1])", true],
    ["sets.equivalent([1, 2], [1, 2, 3])", false],
    ["sets.intersects([1], [1, 2])", true],
    ["sets.intersects([1], [])", false],
    ["sets.contains([[1], [2]], [[2]])", true],
    ['strings.quote("first\\nsecond") == "\\"first\\\\nsecond\\""', true],
    ['strings.quote("\\"quoted\\"") == "\\"\\\\\\"quoted\\\\\\"\\""', true],
    ['"%s is %d years, %.2f%% done, %x".format(["x", 42, 12.345, 255]) == "x is 42 years, 12.35% done, ff"', true],
    ['"%s".format([[1, "a"]]) == "[1, \\"a\\"]"', true],
    // cel-go prints a type value by its name.
    ['"%s %s %s".format([type("a"), type(null), type(type(1))]) == "string null_type type"', true],
    // Go's %f rounds a tie to the even digit, whatever toFixed does.
    ['"%.0f %.0f %.0f %.2f %.2f %.1f".format([2.5, 3.5, -2.5, 0.125, 0.375, 0.25]) == "2 4 -2 0.12 0.38 0.2"', true],
    ['"abc 123 def 456".find("[0-9]+") == "123"', true],
    ['"abc 123 def 456".findAll("[0-9]+") == ["123", "456"]', true],
    ['"abc 123 def 456".findAll("[0-9]+", 1) == ["123"]', true],
  ])("%s", (rule, expected) => {
    expect(check(rule)).toBe(expected);
  });

  it("string.format refuses a clause of the wrong type", () => {
    expect(check('"%d".format(["a"]) == ""')).toMatch(/decimal clause can only be used on integers, was given string/);
  });
});

describe("regular expressions are Go's RE2", () => {
  const str: RuleType = { kind: "string" };
  it.each([
    ['self.matches("^(?i)(abort|warn)?$")', "WARN", true],
    ['self.matches("^a\\\\z")', "az", false],
    ['self.matches("^a\\\\z")', "a", true],
    ['self.matches("^[[:alpha:]]+$")', "abc", true],
    ['self.matches("^[[:alpha:]]+$")', "abé", false],
    ['self.matches("^\\\\pL+$")', "héllo", true],
    ['self.matches("(?s)a.b")', "a\nb", true],
    ['self.matches("a.b")', "a\nb", false],
    ['self.matches("^\\\\d+$")', "١٢", false],
  ])("%s on %j", (rule, self, expected) => {
    expect(check(rule, self, str)).toBe(expected);
  });

  it("refuses a constant pattern RE2 refuses, at compile time, with cel-go's message", () => {
    expect(check('self.matches("(a)\\\\1")', "", str)).toBe(
      'compile: compilation failed: ERROR: <input>:1:14: invalid matches argument\n | self.matches("(a)\\\\1")\n | .............^',
    );
    expect(check('self.matches("a(?=b)")', "", str)).toMatch(/invalid matches argument/);
    expect(check('duration("1x") > duration("0s")', "", str)).toMatch(/invalid duration argument/);
  });

  it("reports a computed pattern RE2 refuses when evaluated, with Go's message", () => {
    const obj: RuleType = { kind: "object", fields: [{ name: "re", type: str }] };
    expect(check('"aa".matches(self.re)', { re: "[a" }, obj)).toBe("error: error parsing regexp: missing closing ]: `[a`");
  });

  it("runs in linear time: a pattern that makes a backtracking engine explode", () => {
    const started = Date.now();
    expect(check('self.matches("^(a+)+$")', `${"a".repeat(5000)}!`, str)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

// A helper that compiles both `expr` and `[expr]` keeps evaluate() honest about every library
// returning a value the engine can hold in a list.
describe("library values are ordinary CEL values", () => {
  it.each(['ip("10.0.0.1")', 'cidr("10.0.0.0/8")', 'url("https://example.com")', "format.dns1123Label()"])("%s", (expr) => {
    expect(evaluate(expr)).toEqual({ value: true });
  });
});
