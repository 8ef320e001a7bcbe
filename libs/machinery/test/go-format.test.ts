// Expected strings are Go's own output (strconv.Quote, json.Marshal).
import { describe, expect, it } from "vitest";
import { goAggregate, goBadValue, goJSON, goQuote } from "../src/values/go-format.js";
import fc from "fast-check";
import { compareUtf8, truncateUtf8 } from "../src/values/utf8.js";

describe("goQuote", () => {
  it.each<[string, string]>([
    ["\x07\b\f\r\n\t\v", '"\\a\\b\\f\\r\\n\\t\\v"'],
    ["\\", '"\\\\"'],
    ['"', '"\\""'],
    ["\u263a", '"☺"'],
    ["\u{10ffff}", '"\\U0010ffff"'],
    ["\x04", '"\\x04"'],
    ["!\u00a0!\u2000!\u3000!", '"!\\u00a0!\\u2000!\\u3000!"'],
    ["\x7f", '"\\x7f"'],
    ["é😀", '"é😀"'],
    ["\u200b", '"\\u200b"'],
    ["\u0301", '"\u0301"'],
    ["a\u2028b", '"a\\u2028b"'],
    ["<&>", '"<&>"'],
  ])("%j", (input, want) => {
    expect(goQuote(input)).toBe(want);
  });
});

describe("goJSON and goBadValue", () => {
  it("escapes HTML characters and line separators like json.Marshal", () => {
    expect(goJSON(["<&>", "a\u2028b"])).toBe('["\\u003c\\u0026\\u003e","a\\u2028b"]');
    expect(goJSON(undefined)).toBe("null");
  });
  it("prints strings with %q and numbers with %v", () => {
    expect(goBadValue("a\tb")).toBe('"a\\tb"');
    expect(goBadValue(-1)).toBe("-1");
    expect(goBadValue(null)).toBe("null");
    expect(goBadValue(["a"])).toBe('["a"]');
  });
});

describe("goAggregate", () => {
  it("prints one error alone and several deduplicated in brackets", () => {
    expect(goAggregate(["a"])).toBe("a");
    expect(goAggregate(["a", "a"])).toBe("a");
    expect(goAggregate(["a", "b", "a"])).toBe("[a, b]");
  });
});

describe("utf8", () => {
  it("counts a lone surrogate as Go does, as U+FFFD's three bytes (Buffer.byteLength, used for Go's limits)", () => {
    expect(Buffer.byteLength("\ud800")).toBe(3);
  });
  it("orders like Go's byte comparison, not UTF-16", () => {
    const sorted = ["😀", "\ufb01", "z", "é", "a", "ab"].sort(compareUtf8);
    expect(sorted).toEqual(["a", "ab", "z", "é", "\ufb01", "😀"]);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 8 }), fc.string({ unit: "grapheme", maxLength: 8 }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });
  it("truncates on character boundaries", () => {
    expect(truncateUtf8("aé", 2)).toBe("a");
    expect(truncateUtf8("a😀b", 5)).toBe("a😀");
    expect(truncateUtf8("abc", 5)).toBe("abc");
  });
});
