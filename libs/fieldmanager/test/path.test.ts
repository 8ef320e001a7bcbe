import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareStrings } from "../src/path.js";

describe("compareStrings", () => {
  it("orders as Go's strings.Compare does: by the UTF-8 bytes", () => {
    // Code units order U+E000 after a surrogate pair; bytes (and code points) order it before.
    expect(Math.sign(compareStrings("\ue000", "\u{10000}"))).toBe(-1);
    expect(Math.sign(compareStrings("a", "ab"))).toBe(-1);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 8 }), fc.string({ unit: "grapheme", maxLength: 8 }), (a, b) => {
        expect(Math.sign(compareStrings(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });
});
