// Literals cel-go parses that the engine does not: raw bytes (`br'…'`) and doubles without a leading
// digit (`.5`). They compile in CRD rules, mean what they mean in cel-go, and errors after them point
// into the author's text.
import { describe, expect, it } from "vitest";
import { type RuleType, compileCrdRules } from "../src/index.js";

const type: RuleType = {
  kind: "object",
  fields: [
    { name: "b", type: { kind: "bytes" } },
    { name: "x", type: { kind: "double" } },
  ],
};

function compile(rule: string) {
  const [compiled] = compileCrdRules(type, [{ rule }]);
  return compiled!;
}

describe("literals the engine does not parse", () => {
  it("a raw bytes literal keeps its backslashes", () => {
    const raw = String.raw`self.b == br'\d+' && size(bR"""\n""") == 2`;
    // "\\d+" as base64: the four bytes \ d +.
    expect(compile(raw).evaluate({ b: Buffer.from(String.raw`\d+`).toString("base64") }, undefined, 1_000_000)).toMatchObject({
      ok: true,
      value: true,
    });
  });

  it("a double may start with its decimal point", () => {
    expect(compile("self.x < .5 && self.x > -.25").evaluate({ x: 0.1 }, undefined, 1_000_000)).toMatchObject({ ok: true, value: true });
  });

  it("reports an error after such a literal at its place in the rule", () => {
    expect(compile(String.raw`br'\a' == self.b && self.y == .5`).error?.detail).toBe(
      "compilation failed: ERROR: <input>:1:25: undefined field 'y'" +
        "\n" +
        String.raw` | br'\a' == self.b && self.y == .5` +
        "\n | ........................^",
    );
  });
});

describe("bytes as cel-go reads them", () => {
  it("a bytes literal holds the UTF-8 of its characters, and string() refuses bytes that are not UTF-8", () => {
    const utf8 = (text: string) => ({ b: Buffer.from(text).toString("base64") });
    expect(compile("self.b == b'ÿ' && size(b'ÿ') == 2").evaluate(utf8("ÿ"), undefined, 1_000_000)).toMatchObject({ ok: true, value: true });
    expect(compile("string(self.b) == 'x'").evaluate({ b: Buffer.from([0, 0xff]).toString("base64") }, undefined, 1_000_000)).toMatchObject(
      {
        ok: false,
        message: "invalid UTF-8 in bytes, cannot convert to string",
      },
    );
  });
});
