// Expected messages were produced by running Kubernetes' validators (k8s.io/apimachinery v0.36.3) on each
// input; the inputs are those of pkg/util/validation/validation_test.go and pkg/api/validate/content's tests.
import { describe, expect, it } from "vitest";
import { generateName, maxGeneratedNameBaseLength, nameSuffixAlphabet, randomNameSuffix } from "../src/validation/generate-name.js";
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
  maskTrailingDash,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameIsPathSegment,
} from "../src/validation/names.js";

const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const dns1123LabelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const dns1035LabelMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const labelNameMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const labelKeySlashesMsg = `a valid label key ${labelNameMsg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const tables: [string, (value: string) => string[], [string, string[]][]][] = [
  [
    "isDNS1123Subdomain",
    isDNS1123Subdomain,
    [
      ["a", []],
      ["ab", []],
      ["abc", []],
      ["a1", []],
      ["a-1", []],
      ["a--1--2--b", []],
      ["0", []],
      ["01", []],
      ["012", []],
      ["1a", []],
      ["1-a", []],
      ["1--a--b--2", []],
      ["a.a", []],
      ["ab.a", []],
      ["abc.a", []],
      ["a1.a", []],
      ["a-1.a", []],
      ["a--1--2--b.a", []],
      ["a.1", []],
      ["ab.1", []],
      ["abc.1", []],
      ["a1.1", []],
      ["a-1.1", []],
      ["a--1--2--b.1", []],
      ["0.a", []],
      ["01.a", []],
      ["012.a", []],
      ["1a.a", []],
      ["1-a.a", []],
      ["1--a--b--2", []],
      ["0.1", []],
      ["01.1", []],
      ["012.1", []],
      ["1a.1", []],
      ["1-a.1", []],
      ["1--a--b--2.1", []],
      ["a.b.c.d.e", []],
      ["aa.bb.cc.dd.ee", []],
      ["1.2.3.4.5", []],
      ["11.22.33.44.55", []],
      ["a".repeat(253), []],
      ["", [`${subdomainMsg}`]],
      ["A", [`${subdomainMsg}`]],
      ["ABC", [`${subdomainMsg}`]],
      ["aBc", [`${subdomainMsg}`]],
      ["A1", [`${subdomainMsg}`]],
      ["A-1", [`${subdomainMsg}`]],
      ["1-A", [`${subdomainMsg}`]],
      ["-", [`${subdomainMsg}`]],
      ["a-", [`${subdomainMsg}`]],
      ["-a", [`${subdomainMsg}`]],
      ["1-", [`${subdomainMsg}`]],
      ["-1", [`${subdomainMsg}`]],
      ["_", [`${subdomainMsg}`]],
      ["a_", [`${subdomainMsg}`]],
      ["_a", [`${subdomainMsg}`]],
      ["a_b", [`${subdomainMsg}`]],
      ["1_", [`${subdomainMsg}`]],
      ["_1", [`${subdomainMsg}`]],
      ["1_2", [`${subdomainMsg}`]],
      [".", [`${subdomainMsg}`]],
      ["a.", [`${subdomainMsg}`]],
      ["_a", [`${subdomainMsg}`]],
      ["a..b", [`${subdomainMsg}`]],
      ["a.-b", [`${subdomainMsg}`]],
      ["a-.b", [`${subdomainMsg}`]],
      ["a b", [`${subdomainMsg}`]],
      [" a", [`${subdomainMsg}`]],
      ["a ", [`${subdomainMsg}`]],
      ["a@b", [`${subdomainMsg}`]],
      ["a,b", [`${subdomainMsg}`]],
      ["a_b", [`${subdomainMsg}`]],
      ["a*b", [`${subdomainMsg}`]],
      ["a".repeat(254), ["must be no more than 253 characters"]],
      [`${"a".repeat(300)}A`, ["must be no more than 253 characters", `${subdomainMsg}`]],
      ["\u00c4", [`${subdomainMsg}`]],
    ],
  ],
  [
    "isDNS1123Label",
    isDNS1123Label,
    [
      ["a", []],
      ["ab", []],
      ["abc", []],
      ["a1", []],
      ["a-1", []],
      ["a--1--2--b", []],
      ["0", []],
      ["01", []],
      ["012", []],
      ["1a", []],
      ["1-a", []],
      ["1--a--b--2", []],
      ["a".repeat(63), []],
      ["", [`${dns1123LabelMsg}`]],
      ["A", [`${dns1123LabelMsg}`]],
      ["ABC", [`${dns1123LabelMsg}`]],
      ["aBc", [`${dns1123LabelMsg}`]],
      ["A1", [`${dns1123LabelMsg}`]],
      ["A-1", [`${dns1123LabelMsg}`]],
      ["1-A", [`${dns1123LabelMsg}`]],
      ["-", [`${dns1123LabelMsg}`]],
      ["a-", [`${dns1123LabelMsg}`]],
      ["-a", [`${dns1123LabelMsg}`]],
      ["1-", [`${dns1123LabelMsg}`]],
      ["-1", [`${dns1123LabelMsg}`]],
      ["_", [`${dns1123LabelMsg}`]],
      ["a_", [`${dns1123LabelMsg}`]],
      ["_a", [`${dns1123LabelMsg}`]],
      ["a_b", [`${dns1123LabelMsg}`]],
      ["1_", [`${dns1123LabelMsg}`]],
      ["_1", [`${dns1123LabelMsg}`]],
      ["1_2", [`${dns1123LabelMsg}`]],
      [".", [`${dns1123LabelMsg}`]],
      ["a.", [`${dns1123LabelMsg}`]],
      ["_a", [`${dns1123LabelMsg}`]],
      ["a.b", ["must not contain dots"]],
      ["a..b", [`${dns1123LabelMsg}`]],
      ["a".repeat(64), ["must be no more than 63 characters"]],
      [`a.b${"c".repeat(70)}`, ["must be no more than 63 characters", "must not contain dots"]],
      ["A".repeat(64), ["must be no more than 63 characters", `${dns1123LabelMsg}`]],
    ],
  ],
  [
    "isDNS1035Label",
    isDNS1035Label,
    [
      ["a", []],
      ["ab", []],
      ["abc", []],
      ["a1", []],
      ["a-1", []],
      ["a--1--2--b", []],
      ["a".repeat(63), []],
      ["0", [`${dns1035LabelMsg}`]],
      ["01", [`${dns1035LabelMsg}`]],
      ["012", [`${dns1035LabelMsg}`]],
      ["1a", [`${dns1035LabelMsg}`]],
      ["1-a", [`${dns1035LabelMsg}`]],
      ["1--a--b--2", [`${dns1035LabelMsg}`]],
      ["", [`${dns1035LabelMsg}`]],
      ["A", [`${dns1035LabelMsg}`]],
      ["ABC", [`${dns1035LabelMsg}`]],
      ["aBc", [`${dns1035LabelMsg}`]],
      ["A1", [`${dns1035LabelMsg}`]],
      ["A-1", [`${dns1035LabelMsg}`]],
      ["1-A", [`${dns1035LabelMsg}`]],
      ["-", [`${dns1035LabelMsg}`]],
      ["a-", [`${dns1035LabelMsg}`]],
      ["-a", [`${dns1035LabelMsg}`]],
      ["1-", [`${dns1035LabelMsg}`]],
      ["-1", [`${dns1035LabelMsg}`]],
      ["_", [`${dns1035LabelMsg}`]],
      ["a_", [`${dns1035LabelMsg}`]],
      ["_a", [`${dns1035LabelMsg}`]],
      ["a_b", [`${dns1035LabelMsg}`]],
      ["1_", [`${dns1035LabelMsg}`]],
      ["_1", [`${dns1035LabelMsg}`]],
      ["1_2", [`${dns1035LabelMsg}`]],
      [".", [`${dns1035LabelMsg}`]],
      ["a.", [`${dns1035LabelMsg}`]],
      [".a", [`${dns1035LabelMsg}`]],
      ["a.b", [`${dns1035LabelMsg}`]],
      ["1.2", [`${dns1035LabelMsg}`]],
      ["a".repeat(64), ["must be no more than 63 characters"]],
      ["1".repeat(64), ["must be no more than 63 characters", `${dns1035LabelMsg}`]],
    ],
  ],
  [
    "isQualifiedName",
    isQualifiedName,
    [
      ["simple", []],
      ["now-with-dashes", []],
      ["1-starts-with-num", []],
      ["1234", []],
      ["simple/simple", []],
      ["now-with-dashes/simple", []],
      ["now-with-dashes/now-with-dashes", []],
      ["now.with.dots/simple", []],
      ["now-with.dashes-and.dots/simple", []],
      ["1-num.2-num/3-num", []],
      ["1234/5678", []],
      ["1.2.3.4/5678", []],
      ["Uppercase_Is_OK_123", []],
      ["example.com/Uppercase_Is_OK_123", []],
      ["requests.storage-foo", []],
      ["a".repeat(63), []],
      [`${"a".repeat(253)}/${"b".repeat(63)}`, []],
      ["", ["name part must be non-empty", `name part ${labelNameMsg}`]],
      ["nospecialchars%^=@", [`name part ${labelNameMsg}`]],
      ["cantendwithadash-", [`name part ${labelNameMsg}`]],
      ["-cantstartwithadash-", [`name part ${labelNameMsg}`]],
      ["only/one/slash", [`${labelKeySlashesMsg}`]],
      ["Example.com/abc", [`prefix part ${subdomainMsg}`]],
      ["example_com/abc", [`prefix part ${subdomainMsg}`]],
      ["example.com/", ["name part must be non-empty", `name part ${labelNameMsg}`]],
      ["/simple", ["prefix part must be non-empty"]],
      ["a".repeat(64), ["name part must be no more than 63 bytes"]],
      [`${"a".repeat(254)}/abc`, ["prefix part must be no more than 253 bytes"]],
      ["a/b/c", [`${labelKeySlashesMsg}`]],
      ["/", ["prefix part must be non-empty", "name part must be non-empty", `name part ${labelNameMsg}`]],
      ["//", [`${labelKeySlashesMsg}`]],
      ["\u00c4/b", [`prefix part ${subdomainMsg}`]],
      ["a/\u00c4", [`name part ${labelNameMsg}`]],
    ],
  ],
  [
    "isValidLabelValue",
    isValidLabelValue,
    [
      ["simple", []],
      ["now-with-dashes", []],
      ["1-starts-with-num", []],
      ["end-with-num-1", []],
      ["1234", []],
      ["a".repeat(63), []],
      ["", []],
      ["Uppercase", []],
      ["1.2.3", []],
      ["a_b", []],
      ["nospecialchars%^=@", [`${labelValueMsg}`]],
      ["Tama-nui-te-r\u0101.is.M\u0101ori.sun", [`${labelValueMsg}`]],
      ["\\backslashes\\are\\bad", [`${labelValueMsg}`]],
      ["-starts-with-dash", [`${labelValueMsg}`]],
      ["ends-with-dash-", [`${labelValueMsg}`]],
      [".starts.with.dot", [`${labelValueMsg}`]],
      ["ends.with.dot.", [`${labelValueMsg}`]],
      ["a".repeat(64), ["must be no more than 63 bytes"]],
      [
        "\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4",
        ["must be no more than 63 bytes", `${labelValueMsg}`],
      ],
      [
        "\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4\u00e4",
        [`${labelValueMsg}`],
      ],
    ],
  ],
  [
    "isValidPathSegmentName",
    isValidPathSegmentName,
    [
      ["", []],
      [".", ["may not be '.'"]],
      ["..", ["may not be '..'"]],
      ["...", []],
      ["a", []],
      ["a/b", ["may not contain '/'"]],
      ["a%b", ["may not contain '%'"]],
      ["%/", ["may not contain '/'", "may not contain '%'"]],
      ["a.b", []],
      ["..a", []],
    ],
  ],
];

describe.each(tables)("%s", (_name, validate, cases) => {
  it.each(cases)("%j", (value, messages) => {
    expect(validate(value)).toEqual(messages);
  });
});

describe("name validators for generateName", () => {
  it("masks a trailing dash the way Kubernetes does (dropping two characters)", () => {
    expect(maskTrailingDash("foo-")).toBe("foa");
    expect(maskTrailingDash("a-")).toBe("a");
    expect(maskTrailingDash("-")).toBe("-");
    expect(maskTrailingDash("foo")).toBe("foo");
  });
  it("accepts a trailing dash only as a prefix", () => {
    expect(nameIsDNSSubdomain("foo-", true)).toEqual([]);
    expect(nameIsDNSSubdomain("foo-", false)).toEqual([subdomainMsg]);
    expect(nameIsDNSLabel("my-pod-", true)).toEqual([]);
    // The character before the dash is never checked.
    expect(nameIsDNSSubdomain("foo.-", true)).toEqual([]);
    expect(nameIsPathSegment("..", true)).toEqual([]);
    expect(nameIsPathSegment("..", false)).toEqual(["may not be '..'"]);
  });
});

describe("generateName", () => {
  it("appends five characters from the vowel-free alphabet", () => {
    const name = generateName("web-");
    expect(name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
  it("truncates the base to 58 bytes so the result fits a DNS label", () => {
    const name = generateName("a".repeat(100), () => "xxxxx");
    expect(name).toBe(`${"a".repeat(58)}xxxxx`);
    expect(maxGeneratedNameBaseLength).toBe(58);
  });
  it("never splits a multi-byte character", () => {
    expect(generateName(`${"a".repeat(57)}é`, () => "")).toBe("a".repeat(57));
  });
  it("draws every alphabet character", () => {
    const seen = new Set(Array.from({ length: 400 }, () => randomNameSuffix()).join(""));
    expect([...seen].sort().join("")).toBe([...nameSuffixAlphabet].sort().join(""));
  });
});
