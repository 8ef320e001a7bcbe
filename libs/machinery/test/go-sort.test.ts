import { describe, expect, it } from "vitest";
import { goSliceStable } from "../src/values/go-sort.js";

/** A deterministic pseudo-random sequence, so a failure names its case. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

describe("goSliceStable", () => {
  it("sorts stably with a consistent comparator, like any stable sort", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const next = random(seed);
      const items = Array.from({ length: Math.floor(next() * 500) }, (_, i) => ({ key: Math.floor(next() * 20), i }));
      const expected = [...items].sort((a, b) => a.key - b.key);
      goSliceStable(items, (a, b) => a.key < b.key);
      expect(items).toEqual(expected);
    }
  });

  it("is insertion sort for up to 20 items, whatever the comparator says", () => {
    // Go sorts blocks of 20 by insertion before merging: with an inconsistent comparator (strategic
    // merge's "an item it cannot place is less") only the algorithm itself predicts the result.
    const insertion = <T>(items: T[], less: (a: T, b: T) => boolean) => {
      for (let i = 1; i < items.length; i++) {
        for (let j = i; j > 0 && less(items[j]!, items[j - 1]!); j--) [items[j], items[j - 1]] = [items[j - 1]!, items[j]!];
      }
    };
    const less = (a: number, b: number) => !(a >= 0 && b >= 0) || a < b;
    for (let seed = 1; seed <= 50; seed++) {
      const next = random(seed);
      const items = Array.from({ length: 1 + Math.floor(next() * 20) }, () => Math.floor(next() * 10) - 3);
      const expected = [...items];
      insertion(expected, less);
      goSliceStable(items, less);
      expect(items).toEqual(expected);
    }
  });

  it("keeps every item of a long list with an inconsistent comparator, in n log² n comparisons", () => {
    const items = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? -1 : i));
    let comparisons = 0;
    goSliceStable(items, (a, b) => {
      comparisons++;
      return !(a >= 0 && b >= 0) || a < b;
    });
    expect([...items].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? -1 : i)).sort((a, b) => a - b),
    );
    expect(comparisons).toBeLessThan(20_000 * 15 * 15);
  });
});
