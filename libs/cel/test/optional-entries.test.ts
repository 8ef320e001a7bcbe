// Optional entries in list and map literals (`[?x]`, `{?k: v}`), which Kubernetes enables with
// optional types since 1.28: an absent value leaves its element or entry out. The engine does not
// parse them; optional-entries.ts rewrites the source, and these rules show what a CRD author sees.
import { describe, expect, it } from "vitest";
import { type RuleType, compileCrdRules } from "../src/index.js";
import { rewriteOptionalEntries } from "../src/optional-entries.js";

const str: RuleType = { kind: "string" };
const type: RuleType = {
  kind: "object",
  fields: [
    { name: "a", type: str },
    { name: "b", type: str },
    { name: "n", type: { kind: "int" } },
    { name: "items", type: { kind: "list", item: str } },
  ],
};

function evaluate(rule: string, self: unknown): unknown {
  const [compiled] = compileCrdRules(type, [{ rule }]);
  expect(compiled?.error).toBeUndefined();
  const result = compiled!.evaluate(self, undefined, 1_000_000);
  return result.ok ? result.value : result.message;
}

describe("optional entries in literals", () => {
  it("leaves out list elements whose optional value is absent", () => {
    expect(evaluate("[?self.?a, ?self.?b, 'c'] == ['x', 'c']", { a: "x" })).toBe(true);
    expect(evaluate("[?self.?a, ?self.?b].size() == 2", { a: "x", b: "y" })).toBe(true);
    expect(evaluate("[?optional.none()].size() == 0", {})).toBe(true);
  });

  it("leaves absent entries out on every evaluation of a compiled rule, not only the first", () => {
    const [compiled] = compileCrdRules(type, [{ rule: "[?self.?a].size() + size({?'b': self.?b}) == 0" }]);
    const run = (self: object) => compiled!.evaluate(self, undefined, 1_000_000);
    expect(run({ a: "x", b: "y" })).toMatchObject({ ok: true, value: false });
    expect(run({})).toMatchObject({ ok: true, value: true });
    expect(run({})).toMatchObject({ ok: true, value: true });
  });

  it("leaves out map entries whose optional value is absent", () => {
    expect(evaluate("{?'a': self.?a, ?'b': self.?b, 'c': 'z'} == {'a': 'x', 'c': 'z'}", { a: "x" })).toBe(true);
    expect(evaluate("size({?'a': self.?a, ?'b': self.?b}) == 0", {})).toBe(true);
  });

  it("keeps conditionals, optional selection and optional indexes as they are", () => {
    expect(evaluate("[self.n > 0 ? 'p' : 'q'][0] == 'p'", { n: 1 })).toBe(true);
    expect(evaluate("{'k': self.n > 0 ? 'p' : 'q'}['k'] == 'q'", { n: 0 })).toBe(true);
    expect(evaluate("self.items[?0].hasValue() && !self.items[?3].hasValue()", { items: ["x"] })).toBe(true);
    expect(evaluate("'[?x], {?k: v}' == '[?x], {?k: v}'", {})).toBe(true);
    expect(rewriteOptionalEntries("self.items[?0] == 'a' ? [1] : [2]")).toBeUndefined();
    expect(rewriteOptionalEntries("[a, ?b]")?.text).toBe("[a, __optionalEntry(b)]");
    expect(rewriteOptionalEntries("{?'k': v.?w, 'j': x ? y : z}")?.text).toBe("{'k':__optionalEntry( v.?w), 'j': x ? y : z}");
  });

  it("type-checks the values", () => {
    const [compiled] = compileCrdRules(type, [{ rule: "[?self.a].size() == 1" }]);
    // Shown in the author's text, at the element.
    expect(compiled?.error?.detail).toMatch(/^compilation failed: ERROR: <input>:1:2: .*\n \| \[\?self\.a\]\.size\(\) == 1\n \| \.\^$/);
  });
});
