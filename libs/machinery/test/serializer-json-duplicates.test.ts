// Expected paths were produced by sigs.k8s.io/json (the decoder behind the apiserver's strict field
// validation) with DisallowDuplicateFields; the first three cases are its own kubernetes_patch_test.go
// cases. A randomised comparison over 20,000 generated documents agreed as well.
import { describe, expect, it } from "vitest";
import { duplicateFieldMessage, findDuplicateFields } from "../src/serializer/json-duplicates.js";

const cases: [string, string[]][] = [
  ['{"a":1,"a":2,"a":3,"b":4,"b":5,"b":6,"C":7,"C":8,"C":9,"e":[{"f":1,"f":1}]}', ["a", "b", "C", "e[0].f"]],
  ['{"d":{"a":"","b":"","c":"","a":"","b":"","c":""}}', ["d.a", "d.b", "d.c"]],
  ['{"a":"","b":"","a":"","b":"","c":{"c":"","c":""},"d":{"e":{"f":1,"f":1}},"e":[{"g":1,"g":1}]}', ["a", "b", "c.c", "d.e.f", "e[0].g"]],
  ['{"a":1,"b":2}', []],
  ['{"a":1,"A":2}', []],
  ["[]", []],
  ["42", []],
  ['"a"', []],
  ['[{"x":1,"x":1}]', ["[0].x"]],
  ['[[{"x":1}],[{"y":1,"y":2}]]', ["[1][0].y"]],
  [
    '{"metadata":{"name":"a","name":"b"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"},{"image":"y","image":"z"}]}}}}',
    ["metadata.name", "spec.template.spec.containers[1].image"],
  ],
  ['{"a":{"x":1,"x":2},"a":{"y":1,"y":2}}', ["a.x", "a", "a.y"]],
  ['{"a":1,"\\u0061":2}', ["a"]],
  ['{"\\ud800":1,"\\udbff":2}', ["\ufffd"]],
  ['{"":1,"":2,"k":{"":{"z":1,"z":1}}}', ["", "k..z"]],
  ['{"a.b":1,"a.b":2,"a":{"b":1},"a":{"b":{"c":[1,{"d":1,"d":2}]}}}', ["a.b", "a", "a.b.c[1].d"]],
  ['{"s":"\\"a\\":1,\\"a\\":2","t":"{\\\\","t":["[","]","{"]}', ["t"]],
  ['{"q\\"":1,"q\\"":2,"k\\\\":1,"k\\\\":2}', ['q"', "k\\"]],
  ['{"ok":{"a":1},"bad":{"a":1,"b":2,"a":3,"b":4,"a":5}}', ["bad.a", "bad.b"]],
  [' { "a" : 1 , "a" : [ { "b" : 1 , "b" : 2 } ] } ', ["a", "a[0].b"]],
];

describe("findDuplicateFields", () => {
  it.each(cases)("%s", (text, paths) => {
    JSON.parse(text); // the contract: only text JSON.parse accepted
    expect(findDuplicateFields(text)).toEqual(paths);
  });

  it("formats each as Kubernetes' warning text", () => {
    expect(findDuplicateFields('{"metadata":{"name":"a","name":"b"}}').map(duplicateFieldMessage)).toEqual([
      'duplicate field "metadata.name"',
    ]);
    expect(duplicateFieldMessage('q"\\\t')).toBe('duplicate field "q\\"\\\\\\t"');
  });

  it("stops at 100 distinct paths, like the decoder", () => {
    const members = Array.from({ length: 150 }, (_, i) => `"k${i}":1,"k${i}":2`).join(",");
    const found = findDuplicateFields(`{${members}}`);
    expect(found).toHaveLength(100);
    expect(found[0]).toBe("k0");
    expect(found[99]).toBe("k99");
  });

  it("scans a 1 MB document in one pass (timing is printed, not asserted)", () => {
    const item = (i: number) =>
      `{"name":"c${i}","image":"registry.example/app:${i}","args":["--a","--b=\\"x\\""],"env":[{"name":"A","value":"1"}],"ports":[{"containerPort":${i}}]}`;
    const containers = Array.from({ length: 7000 }, (_, i) => item(i)).join(",");
    const text = `{"metadata":{"name":"big","labels":{"a":"b"}},"spec":{"containers":[${containers}],"containers2":{"x":1,"x":2}}}`;
    expect(text.length).toBeGreaterThan(1_000_000);
    const start = performance.now();
    const found = findDuplicateFields(text);
    const ms = performance.now() - start;
    console.log(`findDuplicateFields: ${(text.length / 1e6).toFixed(2)} MB in ${ms.toFixed(1)} ms`);
    expect(found).toEqual(["spec.containers2.x"]);
  });
});
