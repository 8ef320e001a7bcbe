// The CEL types of custom-resource rules and the field-name escaping Kubernetes applies, apart from
// the environment (crd-rules.ts) so that the cost estimate can read them without importing it.
import type { ListKind } from "./values.js";

/**
 * The CEL type of a schema node (apiserver/pkg/cel/common.SchemaDeclType). `nullable`: a null item of a
 * list or map of this type reads as null; of any other, it is invalid data.
 */
export type RuleType = RuleTypeSize & { readonly nullable?: boolean } & (
    | /** `preservesUnknownFields`: fields beyond `fields` are kept for equality (not selectable). */
    { readonly kind: "object"; readonly fields: readonly RuleField[]; readonly preservesUnknownFields?: boolean }
    | { readonly kind: "map"; readonly value: RuleType }
    /** `listKind`: x-kubernetes-list-type set or map (with the escaped key names); atomic when absent. */
    | { readonly kind: "list"; readonly item: RuleType; readonly listKind?: ListKind }
    | { readonly kind: "int" | "double" | "string" | "bool" | "bytes" | "timestamp" | "duration" }
    /** `intOrString`: x-kubernetes-int-or-string, whose value must be an integer or a string. */
    | { readonly kind: "dyn"; readonly intOrString?: boolean }
  );

/**
 * The sizes Kubernetes' cost estimate reads from a DeclType: the most elements (items, properties,
 * bytes) a value can have, from maxItems/maxProperties/maxLength or what fits in a request; and the
 * smallest JSON serialization of a value. Absent: 0, as for Kubernetes' scalar types.
 */
export interface RuleTypeSize {
  readonly maxElements?: number;
  readonly minSerializedSize?: number;
}

/** A member of an object type, by its JSON name; CEL sees it under its escaped name. */
export interface RuleField {
  readonly name: string;
  readonly type: RuleType;
}

/** CEL's reserved words: not identifiers (Kubernetes escapes them as field names, refuses them as variable names). */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

/**
 * The CEL name of a property (apiserver/pkg/cel.Escape): reserved words become `__word__`, and `__`,
 * `.`, `-`, `/` become `__underscores__`, `__dot__`, `__dash__`, `__slash__`. Undefined when the name
 * cannot be accessed from CEL (it starts with a digit or has other characters).
 */
export function escapeFieldName(name: string): string | undefined {
  // Every evaluation converts its object field by field: the names of a schema repeat.
  if (escaped.has(name)) return escaped.get(name);
  if (escaped.size >= ESCAPED_CACHE_SIZE) escaped.clear();
  const result = escapeName(name);
  escaped.set(name, result);
  return result;
}

const ESCAPED_CACHE_SIZE = 10_000;
const escaped = new Map<string, string | undefined>();

function escapeName(name: string): string | undefined {
  if (name === "" || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  let ok = true;
  const escaped = name.replace(/__|[-./]|[^a-zA-Z0-9_]/g, (s) => {
    switch (s) {
      case "__":
        return "__underscores__";
      case ".":
        return "__dot__";
      case "-":
        return "__dash__";
      case "/":
        return "__slash__";
      default:
        ok = false;
        return "";
    }
  });
  return ok ? escaped : undefined;
}

/** Kubernetes' isCELIdentifier: a CEL identifier that is not a reserved word. */
export const isCelIdentifier = (name: string): boolean => /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !CEL_RESERVED_WORDS.has(name);
