// Keywords and reserved words after a dot, as cel-go v0.22's parser takes them: `true`, `false`,
// `null` and `in` are tokens of their own (no IDENTIFIER), so `self.true` does not parse — Kubernetes
// exposes such a property as `self.__true__` —, while the other reserved words (`if`, `var`) are
// identifiers, refused as names of their own but selectable (parser.go reservedIds, SyntaxError).
import { describe, expect, it } from "vitest";
import { compileCelExpression } from "../src/crd-rules.js";

const vars = { self: "map<string, int>" };
const problem = (expression: string) => {
  const compiled = compileCelExpression(expression, vars);
  return compiled.ok ? undefined : compiled.message;
};

describe("keywords after a dot", () => {
  it("true, false and null: cel-go's rewritten ANTLR error (parser_test.go `self.true == 1`)", () => {
    expect(problem("self.true == 1")).toBe(
      "compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input 'true' expecting IDENTIFIER\n | self.true == 1\n | .....^",
    );
    expect(problem("self.false")).toContain("<input>:1:6: Syntax error: mismatched input 'false' expecting IDENTIFIER");
    expect(problem("has(self.null)")).toContain("<input>:1:10: Syntax error: mismatched input 'null' expecting IDENTIFIER");
    expect(problem("self.true()")).toContain("Syntax error: mismatched input 'true' expecting IDENTIFIER");
  });

  it("in, or a keyword apart from its dot: ANTLR's own words", () => {
    expect(problem("self.in == 1")).toContain("<input>:1:6: Syntax error: no viable alternative at input '.in'");
    expect(problem("self. true")).toContain("<input>:1:7: Syntax error: no viable alternative at input '. true'");
  });

  it("other reserved words select fields, but are no names of their own", () => {
    for (const word of ["if", "while", "as", "namespace", "package", "var"]) {
      expect(problem(`self.${word} == 1`)).toBeUndefined();
    }
    expect(problem("self.__true__ == 1 && self.__if__ == 2")).toBeUndefined();
    expect(problem("if")).toBe("compilation failed: ERROR: <input>:1:1: reserved identifier: if\n | if\n | ^");
  });
});
