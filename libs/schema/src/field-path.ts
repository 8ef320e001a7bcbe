// ValidFieldPath (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go): a validation rule's
// `fieldPath` is a JSON path of field (`.name`, `['name']`) and map-key accessors that must exist in the
// schema the rule sits on; it is reported relative to that node.
import { FieldPath } from "@orch/machinery";
import { type SchemaNode, additionalSchema } from "./structural.js";

/** Splits on `.`, `[` and `]`, keeping single-quoted strings whole. */
function tokens(path: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i]!;
    if (c === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== "\\")) j++;
      out.push(path.slice(i, j + 1));
      i = j + 1;
    } else if (c === "." || c === "[" || c === "]") {
      out.push(c);
      i++;
    } else {
      let j = i;
      while (j < path.length && !".[]".includes(path[j]!)) j++;
      out.push(path.slice(i, j));
      i = j;
    }
  }
  return out;
}

const escapes: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "'": "'", "\\": "\\" };

function unescapeSingleQuote(s: string): string {
  return s.replace(/\\./g, (m) => {
    const out = escapes[m[1]!];
    if (out === undefined) throw new Error(`invalid escape char ${m}`);
    return out;
  });
}

/** The field path `jsonPath` names under `schema`, or the reason it does not name one. */
export function validFieldPath(
  jsonPath: string,
  schema: SchemaNode,
  options: { allowArrayNotation?: boolean } = {},
): { path: FieldPath; schema: SchemaNode } | { error: string } {
  let path = FieldPath.root();
  let node: SchemaNode | undefined = schema;
  const step = (name: string, named: boolean): string | undefined => {
    if (!node) return "does not refer to a valid field";
    if (named) {
      path = path.child(name);
      node = node.properties.get(name);
      if (!node) return "does not refer to a valid field";
    } else {
      path = path.key(name);
      node = additionalSchema(node);
    }
    return undefined;
  };
  const named = (): boolean | undefined =>
    !node ? undefined : node.properties.size > 0 ? true : node.additionalProperties !== undefined ? false : undefined;
  const list = tokens(jsonPath);
  for (let i = 0; i < list.length; i++) {
    const tok = list[i]!;
    if (tok === "[") {
      if (options.allowArrayNotation === false) return { error: "array notation is not allowed" };
      const quoted = list[++i];
      if (quoted === undefined) return { error: "unexpected end of JSON path" };
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'"))
        return { error: `expected single quoted string but got ${quoted}` };
      let name: string;
      try {
        name = unescapeSingleQuote(quoted.slice(1, -1));
      } catch (e) {
        return { error: `invalid string literal: ${(e as Error).message}` };
      }
      const isNamed = named();
      if (isNamed === undefined) return { error: "does not refer to a valid field" };
      const problem = step(name, isNamed);
      if (problem) return { error: problem };
      const close = list[++i];
      if (close === undefined) return { error: "unexpected end of JSON path" };
      if (close !== "]") return { error: `expected ] but got ${close}` };
    } else if (tok === ".") {
      const name = list[++i];
      if (name === undefined) return { error: "unexpected end of JSON path" };
      const isNamed = named();
      if (isNamed === undefined) return { error: "does not refer to a valid field" };
      const problem = step(name, isNamed);
      if (problem) return { error: problem };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return node ? { path, schema: node } : { error: "does not refer to a valid field" };
}
