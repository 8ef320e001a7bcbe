import { describe, expect, it } from "vitest";
import { DecodeError, TooDeepError, decodeJson, decodeYaml } from "../src/serializer/index.js";

describe("decodeJson", () => {
  it("takes nesting up to the limit and refuses one level more, before parsing", () => {
    expect(decodeJson('{"a":[[1]]}', 3)).toEqual({ a: [[1]] });
    expect(() => decodeJson('{"a":[[[1]]]}', 3)).toThrow(new TooDeepError("invalid character '[' exceeded max depth"));
    // Brackets inside strings are text, not nesting.
    expect(decodeJson('{"a":"[[[[[["}', 1)).toEqual({ a: "[[[[[[" });
    expect(decodeJson('{"a":"\\"[[[[[["}', 1)).toEqual({ a: '"[[[[[[' });
  });

  it("counts nesting in text that is no JSON at all, so a million open brackets cost one scan", () => {
    expect(() => decodeJson("[".repeat(1_000_000))).toThrow(TooDeepError);
    expect(() => decodeJson('"unterminated [[[')).toThrow(DecodeError);
  });

  it("words syntax errors as Go's encoding/json does", () => {
    expect(() => decodeJson('{"a":}')).toThrow(new DecodeError("invalid character '}' looking for beginning of value"));
    expect(() => decodeJson("[1,")).toThrow(new DecodeError("unexpected end of JSON input"));
  });
});

describe("decodeYaml", () => {
  it("converts a document to its JSON value, with duplicate keys as field paths", () => {
    const { value, duplicates } = decodeYaml("a: 1\nb:\n  - c: x\n    c: y\nd: {e: [true, null, 1.5]}\na: 2\n");
    expect(value).toEqual({ a: 2, b: [{ c: "y" }], d: { e: [true, null, 1.5] } });
    expect(duplicates).toEqual(["b[0].c", "a"]);
  });

  it("expands aliases to the latest anchor before them, keys included", () => {
    const { value } = decodeYaml("x: &v one\ny: *v\nx2: &v two\nz: *v\n&k key: 1\nk2: {*k : 2}\n");
    expect(value).toEqual({ x: "one", y: "one", x2: "two", z: "two", key: 1, k2: { key: 2 } });
  });

  it("refuses an anchor that contains itself, an unknown one, and a key that is a collection", () => {
    expect(() => decodeYaml("a: &x {b: *x}\n")).toThrow(new DecodeError("yaml: anchor 'x' value contains itself"));
    expect(() => decodeYaml("a: *nope\n")).toThrow(DecodeError);
    expect(() => decodeYaml("? [a, b]\n: 1\n")).toThrow(new DecodeError("yaml: invalid map key: a mapping or sequence"));
  });

  it("counts nesting reached through aliases against the limit", () => {
    expect(decodeYaml("a: &a [[1]]\n", 3).value).toEqual({ a: [[1]] });
    expect(() => decodeYaml("a: &a [[1]]\nb: [*a]\n", 3)).toThrow(new TooDeepError("yaml: exceeded max depth of 3"));
    expect(() => decodeYaml(`${"- ".repeat(20)}x\n`, 10)).toThrow(TooDeepError);
  });

  it("refuses a billion laughs as go-yaml does, and takes modest reuse", () => {
    const laughs = (levels: number) =>
      [
        "l0: &l0 [x, x, x, x, x, x, x, x, x, x]",
        ...Array.from({ length: levels }, (_, i) => `l${i + 1}: &l${i + 1} [${Array(10).fill(`*l${i}`).join(", ")}]`),
      ].join("\n");
    expect(() => decodeYaml(laughs(2))).not.toThrow();
    expect(() => decodeYaml(laughs(4))).toThrow(new DecodeError("yaml: document contains excessive aliasing"));
  });

  it("keeps __proto__ an ordinary key", () => {
    const { value } = decodeYaml("__proto__: {polluted: true}\n") as { value: Record<string, unknown> };
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});
