// The text pre-check of label-selected lists: it may only skip objects the selector would refuse.
import { labelSelectorMatches, parseLabelSelector } from "@orch/machinery";
import { describe, expect, it } from "vitest";
import { labelSelectorTextCheck } from "../src/generic/selectors.js";

const object = (labels: Record<string, string>, annotations: Record<string, string> = {}) =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", labels, annotations } });

describe("labelSelectorTextCheck", () => {
  // Objects each selector selects: the pre-check must pass every one of them.
  const selected: [string, Record<string, string>][] = [
    ["shard=5", { shard: "5" }],
    ["shard==5,tier in (web,db)", { shard: "5", tier: "db" }],
    ["tier in (web,db)", { tier: "web", other: "x" }],
    ["tier", { tier: "" }],
    ["!tier", {}],
    ["tier!=web", { tier: "db" }],
    ["tier notin (web)", {}],
    ["app.kubernetes.io/name=a.b-c_d", { "app.kubernetes.io/name": "a.b-c_d" }],
    ["n>3", { n: "4" }],
  ];
  it.each(selected)("passes every object %s selects (labels %j)", (selector, labels) => {
    expect(labelSelectorMatches(parseLabelSelector(selector), labels)).toBe(true);
    expect(labelSelectorTextCheck(selector)?.(object(labels)) ?? true).toBe(true);
  });

  it("skips objects whose text lacks a required pair, and leaves the rest to the selector", () => {
    const check = labelSelectorTextCheck("shard=5")!;
    expect(check(object({ shard: "6" }))).toBe(false);
    expect(check(object({ shard: "6" }, { shard: "50" }))).toBe(false);
    // The pair elsewhere in the object (an annotation) passes the pre-check; the selector then refuses it.
    expect(check(object({ shard: "6" }, { shard: "5" }))).toBe(true);
  });

  it("has nothing to check for selectors that require no label", () => {
    expect(labelSelectorTextCheck("tier!=web,!gone")).toBeUndefined();
    expect(labelSelectorTextCheck(undefined)).toBeUndefined();
  });
});
