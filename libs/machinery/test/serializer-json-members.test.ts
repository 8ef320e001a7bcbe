// A member's text spliced into an answer must be exactly what JSON.parse would give for that member.
import { describe, expect, it } from "vitest";
import { memberText } from "../src/serializer/json-members.js";

/** The member as JSON.parse sees it, for comparison: undefined when absent. */
const parsedMember = (text: string, name: string): unknown => (JSON.parse(text) as Record<string, unknown>)[name];

describe("memberText", () => {
  const texts = [
    '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"a","labels":{"metadata":"x"}},"secrets":[]}',
    // Whitespace around keys, colons and values, as a client might write it.
    '{ "kind" : "Pod" ,\n "metadata" :\t{ "name" : "b" } , "spec" : { } }',
    // The name as a value, inside strings with escaped quotes and brackets, and nested deeper.
    '{"kind":"metadata","note":"\\"metadata\\":{\\"x\\":1}","spec":{"metadata":{"name":"inner"}},"metadata":{"name":"c"}}',
    // The member last, first and alone; values that are not objects.
    '{"metadata":{"name":"d","annotations":{"a":"}],"}}}',
    '{"metadata":"text"}',
    '{"metadata":[1,{"a":[2]},"]"] ,"b":null}',
    '{"metadata":12.5e3}',
    '{"metadata":null}',
    '{"a":1,"metadata":true}',
    // Repeated: JSON.parse keeps the last.
    '{"metadata":{"name":"first"},"metadata":{"name":"last"}}',
    // Absent.
    '{"a":{"metadata":{}},"b":"metadata"}',
    "{}",
  ];
  it.each(texts)("gives the member's text as JSON.parse reads the member: %s", (text) => {
    const found = memberText(text, "metadata");
    const expected = parsedMember(text, "metadata");
    if (expected === undefined) expect(found).toBeUndefined();
    else expect(JSON.parse(found!)).toEqual(expected);
  });

  it("gives the text as written, so that what JSON.stringify wrote is spliced unchanged", () => {
    const object = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", labels: { a: "b\u00e9\n" } }, spec: { containers: [] } };
    expect(memberText(JSON.stringify(object), "metadata")).toBe(JSON.stringify(object.metadata));
  });

  it("does not recognize a key written with escapes: the caller parses instead", () => {
    expect(memberText('{"\\u006detadata":{"name":"e"}}', "metadata")).toBeUndefined();
  });
});
