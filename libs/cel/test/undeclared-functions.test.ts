// A call of a function the environment does not declare, in any arity or call style, is cel-go's
// "undeclared reference" (checker.go checkCall), not an overload mismatch; both are placed at the
// call's opening parenthesis, where cel-go's parser puts a call.
import { describe, expect, it } from "vitest";
import { compileCelExpression } from "../src/crd-rules.js";
import { compileDeviceSelector } from "../src/device-selector.js";

const problem = (expression: string) => {
  const compiled = compileCelExpression(expression, { self: "map<string, string>" });
  return compiled.ok ? undefined : compiled.message;
};

describe("calls of undeclared functions", () => {
  it("a member call: undeclared reference, at its parenthesis", () => {
    expect(problem("self.a.frobnicate(1)")).toBe(
      "compilation failed: ERROR: <input>:1:18: undeclared reference to 'frobnicate' (in container '')\n | self.a.frobnicate(1)\n | .................^",
    );
  });

  it("a global call: the same words", () => {
    expect(problem("frobnicate(self.a)")).toContain("<input>:1:11: undeclared reference to 'frobnicate' (in container '')");
  });

  it("a declared function with no matching overload keeps cel-go's overload words, at the parenthesis", () => {
    expect(problem("self.a.startsWith(1)")).toContain(
      "<input>:1:18: found no matching overload for 'startsWith' applied to 'string.(int)'",
    );
  });

  it("a device selector's includes(): not in Kubernetes 1.32's DRA environment (list attributes came later)", () => {
    const compiled = compileDeviceSelector('device.attributes["dra.example.com"].roots.includes("pci0")');
    expect(compiled.ok).toBe(false);
    expect(compiled.ok ? "" : compiled.message).toContain("<input>:1:52: undeclared reference to 'includes' (in container '')");
  });
});
