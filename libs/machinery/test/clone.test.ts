import { describe, expect, it } from "vitest";
import { cloneJson } from "../src/index.js";

describe("cloneJson", () => {
  it("copies as structuredClone does: nothing shared, key order and undefined members kept", () => {
    const value = { b: 1, a: [{ x: null, y: undefined }, "s", true], nested: { deep: { list: [1, [2, 3]] } } };
    const copy = cloneJson(value);
    expect(copy).toStrictEqual(structuredClone(value));
    expect(Object.keys(copy)).toEqual(["b", "a", "nested"]);
    expect(Object.keys(copy.a[0] as object)).toEqual(["x", "y"]);
    copy.nested.deep.list[1] = [9];
    (copy.a[0] as { x: unknown }).x = 1;
    expect(value.nested.deep.list[1]).toEqual([2, 3]);
    expect((value.a[0] as { x: unknown }).x).toBeNull();
  });

  it("keeps a member named __proto__ as a member, not as the copy's prototype", () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = cloneJson(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(["__proto__", "a"]);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value).toEqual({ polluted: true });
  });

  it("leaves values that are not plain JSON to structuredClone", () => {
    const when = new Date(0);
    const copy = cloneJson({ when, bytes: new Uint8Array([1, 2]) });
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(when);
    expect(copy.when.getTime()).toBe(0);
    expect(copy.bytes).toEqual(new Uint8Array([1, 2]));
  });

  it("answers scalars as they are", () => {
    for (const scalar of [null, undefined, 0, "x", false]) expect(cloneJson(scalar)).toBe(scalar);
  });
});
