// Rules and patterns of real CRDs that used to be refused or to mean something else: has() on an
// indexed element, self == oldSelf on objects, set and map lists compared and concatenated by their
// x-kubernetes-list-type, preserve-unknown-fields objects (after apiextensions-apiserver's
// validation_test.go "preserve unknown fields"), and schema patterns in Go's RE2 syntax.
import { type JSONSchemaProps, crdSchemaFor } from "@orch/api";
import { fieldErrorText } from "@orch/machinery";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { compileSchema } from "../src/index.js";

const compile = (raw: unknown) =>
  compileSchema(v.parse(crdSchemaFor("x-kubernetes").JSONSchemaProps, raw) as JSONSchemaProps, { extensionPrefix: "x-kubernetes" });
const withSpec = (spec: unknown) => ({ type: "object", properties: { spec } });
const rule = (r: string) => ({ "x-kubernetes-validations": [{ rule: r }] });

/** The errors of `value` (and `old`) under a spec schema carrying `rules` on `spec`. */
function errorsOf(spec: Record<string, unknown>, rules: string[], value: unknown, old?: unknown): string[] {
  const schema = compile(withSpec({ ...spec, "x-kubernetes-validations": rules.map((r) => ({ rule: r })) }));
  return schema.validate({ spec: value }, old === undefined ? undefined : { spec: old }).map(fieldErrorText);
}

describe("has() on any field selection (cel-go)", () => {
  const spec = {
    type: "object",
    properties: { rules: { type: "array", items: { type: "object", properties: { matches: { type: "string" } } } } },
  };
  it("compiles and tests the field of an indexed list element", () => {
    expect(errorsOf(spec, ["has(self.rules[0].matches)"], { rules: [{ matches: "a" }] })).toEqual([]);
    expect(errorsOf(spec, ["has(self.rules[0].matches)"], { rules: [{}] })).toEqual([
      'spec: Invalid value: "object": failed rule: has(self.rules[0].matches)',
    ]);
    expect(errorsOf(spec, ["self.rules.all(r, has(r.matches) || size(self.rules) > 1)"], { rules: [{ matches: "x" }] })).toEqual([]);
  });
});

describe("equality of objects and lists as Kubernetes defines it", () => {
  const spec = {
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      ordered: { type: "array", items: { type: "string" } },
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: { type: "object", required: ["name"], properties: { name: { type: "string" }, port: { type: "integer" } } },
      },
      extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
  };
  it("self == oldSelf on an object compiles and compares field by field", () => {
    expect(errorsOf(spec, ["self == oldSelf"], { ordered: ["a"] }, { ordered: ["a"] })).toEqual([]);
    expect(errorsOf(spec, ["self == oldSelf"], { ordered: ["a"] }, { ordered: ["b"] })).toEqual([
      'spec: Invalid value: "object": failed rule: self == oldSelf',
    ]);
  });
  it("set lists compare regardless of order; atomic lists in order", () => {
    expect(errorsOf(spec, ["self.tags == oldSelf.tags"], { tags: ["a", "b"] }, { tags: ["b", "a"] })).toEqual([]);
    expect(errorsOf(spec, ["self.ordered == oldSelf.ordered"], { ordered: ["a", "b"] }, { ordered: ["b", "a"] })).toHaveLength(1);
    expect(errorsOf(spec, ["self.tags == ['b', 'a']"], { tags: ["a", "b"] })).toEqual([]);
  });
  it("map lists compare by their keys regardless of order, elements by value", () => {
    const a = {
      ports: [
        { name: "http", port: 80 },
        { name: "https", port: 443 },
      ],
    };
    const b = {
      ports: [
        { name: "https", port: 443 },
        { name: "http", port: 80 },
      ],
    };
    expect(errorsOf(spec, ["self.ports == oldSelf.ports"], a, b)).toEqual([]);
    expect(
      errorsOf(spec, ["self.ports == oldSelf.ports"], a, {
        ports: [
          { name: "https", port: 443 },
          { name: "http", port: 8080 },
        ],
      }),
    ).toHaveLength(1);
  });
  it("concatenation: a set keeps its elements and appends the new ones, a map list replaces by key", () => {
    expect(errorsOf(spec, ["self.tags + ['b', 'c'] == ['a', 'b', 'c']"], { tags: ["a", "b"] })).toEqual([]);
    expect(errorsOf(spec, ["(self.tags + ['b', 'c']).size() == 3"], { tags: ["a", "b"] })).toEqual([]);
    expect(errorsOf(spec, ["self.ordered + ['b'] == ['a', 'b', 'b']"], { ordered: ["a", "b"] })).toEqual([]);
    expect(
      errorsOf(
        spec,
        ["(self.ports + [self.ports[0]]).size() == 2", "(self.ports + oldSelf.ports).exists(p, p.port == 8080)"],
        {
          ports: [
            { name: "http", port: 80 },
            { name: "https", port: 443 },
          ],
        },
        { ports: [{ name: "http", port: 8080 }] },
      ),
    ).toEqual([]);
  });
  it("fields kept by preserve-unknown-fields take part in equality but cannot be selected (as Kubernetes)", () => {
    expect(errorsOf(spec, ["self.extra == oldSelf.extra"], { extra: { a: 1 } }, { extra: { a: 1 } })).toEqual([]);
    expect(errorsOf(spec, ["self.extra == oldSelf.extra"], { extra: { a: 1 } }, { extra: { a: 2 } })).toHaveLength(1);
    expect(errorsOf(spec, ["has(self.extra.field1)"], { extra: { field1: 1 } })[0]).toContain("undefined field 'field1'");
  });
});

describe("schema patterns are Go's RE2", () => {
  const withPattern = (pattern: string) => compile(withSpec({ type: "object", properties: { s: { type: "string", pattern } } }));
  const ok = (pattern: string, s: string) => withPattern(pattern).validate({ spec: { s } }).length === 0;
  it.each([
    ["^(?i)(abort|warn)?$", "WARN", true],
    ["^(?i)(abort|warn)?$", "other", false],
    ["^a\\z", "a", true],
    ["^a\\z", "az", false],
    ["^[[:alpha:]]+$", "abc", true],
    ["^\\pL+$", "héllo", true],
    ["^\\pL+$", "h3llo", false],
    ["(?s)^a.b$", "a\nb", true],
    ["^a.b$", "a\nb", false],
  ])("%s on %j", (pattern, s, expected) => {
    expect(ok(pattern, s)).toBe(expected);
  });
  it("reports a mismatch with kube-openapi's message", () => {
    expect(
      withPattern("^a\\z")
        .validate({ spec: { s: "az" } })
        .map(fieldErrorText),
    ).toEqual(["spec.s: Invalid value: \"az\": spec.s in body should match '^a\\z'"]);
  });
});

describe("rules of real CRDs compile", () => {
  it.each([
    "isIP(self.address) && ip(self.address).family() == 4",
    "isCIDR(self.cidr) && cidr(self.cidr).containsIP(self.address)",
    "!format.dns1123Label().validate(self.name).hasValue()",
    "isURL(self.url) && url(self.url).getScheme() in ['http', 'https']",
    "self.name.matches('^[a-z]+$') && self.name.find('[a-z]') == 'a'",
    "sets.contains(['a', 'b'], [self.name])",
    "strings.quote(self.name).size() > 0",
    "'%s/%s'.format([self.name, self.url]).size() > 1",
  ])("%s", (r) => {
    const spec = {
      type: "object",
      properties: { address: { type: "string" }, cidr: { type: "string" }, name: { type: "string" }, url: { type: "string" } },
      ...rule(r),
    };
    expect(compile(withSpec(spec)).validate({ spec: { address: "10.0.0.1", cidr: "10.0.0.0/8", name: "a", url: "https://x" } })).toEqual(
      [],
    );
  });
});
