// A cheap part of Kubernetes' policy type checking (policy/validating/typechecking.go compiles the
// expressions with `object` and `params` typed by their kinds' schemas): the field selections rooted at
// a typed variable (`object.spec.replicax`, `has(params.data.x)`, `object.spec.template.spec.containers[0].imagex`)
// are followed through a field tree, and one that the tree does not have is cel-go's issue
// `ERROR: <input>:1:12: undefined field 'replicax'`. Other type errors are not found here.
import { Environment } from "@marcbachmann/cel-js";
import { type CelError, celIssue } from "./crd-rules.js";

/** What the checker knows of a variable's type. `open` objects keep fields they do not declare. */
export type FieldTree =
  | { readonly kind: "object"; readonly fields: ReadonlyMap<string, FieldTree>; readonly open: boolean }
  | { readonly kind: "list"; readonly item: FieldTree }
  | { readonly kind: "map"; readonly value: FieldTree }
  | { readonly kind: "any" };

interface Node {
  op: string;
  args: unknown;
  range?: { start: number; end: number };
}

const parser = new Environment({ enableOptionalTypes: true });

/** The issues of `expression` against typed roots (`object`, `oldObject`, `params`), in source order. */
export function undefinedFieldIssues(expression: string, roots: Readonly<Record<string, FieldTree>>): string[] {
  let ast: Node;
  try {
    ast = parser.parse(expression).ast as unknown as Node;
  } catch {
    return []; // The policy's own validation reports what does not parse.
  }
  const issues: { at: number; text: string }[] = [];
  const seen = new Set<Node>();
  /** The type of a node when it is a selection chain from a typed root, else undefined. */
  const typeOf = (node: Node): FieldTree | undefined => {
    if (node.op === "id") return roots[node.args as string];
    if (node.op === "." || node.op === ".?") {
      const [inner, field] = node.args as [Node, string];
      const parent = typeOf(inner);
      if (!parent || parent.kind === "any") return undefined;
      if (parent.kind === "map") return parent.value;
      if (parent.kind !== "object") return undefined;
      const child = parent.fields.get(field);
      if (child) return child;
      if (!parent.open && !seen.has(node)) {
        seen.add(node);
        const end = node.range?.end ?? expression.length;
        const error: CelError = {
          code: "no_such_key",
          message: `No such key: ${field}`,
          summary: `No such key: ${field}`,
          range: { start: end - field.length },
        };
        issues.push({ at: end, text: celIssue(expression, error) });
      }
      return undefined;
    }
    if (node.op === "[]" || node.op === "[?]") {
      const [inner] = node.args as [Node, Node];
      const parent = typeOf(inner);
      if (parent?.kind === "list") return parent.item;
      if (parent?.kind === "map") return parent.value;
      return undefined;
    }
    return undefined;
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (typeof value !== "object" || value === null || !("op" in value)) return;
    const node = value as Node;
    typeOf(node);
    visit(node.args);
  };
  visit(ast);
  return issues.sort((a, b) => a.at - b.at).map((i) => i.text);
}
