// Turns a request body into a typed object the way Kubernetes' decoder does for built-in kinds:
// `null` fields are absent, unknown fields are dropped (and reported, for fieldValidation), defaults
// are applied, and a wrong type is a decode error.
import * as v from "valibot";
import type { AnySchema } from "./schema.js";

/** What the schema walkers (pruning here, merge shapes in shape.ts) read of a valibot schema. */
export interface SchemaNode {
  type: string;
  entries?: Record<string, SchemaNode>;
  wrapped?: SchemaNode;
  item?: SchemaNode;
  value?: SchemaNode;
  options?: SchemaNode[];
  getter?: (input: unknown) => SchemaNode;
  pipe?: readonly { kind: string; type: string; metadata?: unknown }[];
}

/** valibot's wrappers (optional, nullable, …): the schema they wrap is what a walker reads. */
export const SCHEMA_WRAPPERS: ReadonlySet<string> = new Set([
  "optional",
  "nullable",
  "nullish",
  "exact_optional",
  "undefinedable",
  "non_optional",
  "non_nullable",
]);

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/**
 * Removes `null` members and collects the paths of members the schema does not know, in place.
 * Loose objects and untyped values keep everything, as Kubernetes keeps RawExtension content.
 */
export function pruneUnknown(schema: AnySchema, value: unknown, unknown: string[], path = ""): void {
  walk(schema as unknown as SchemaNode, value, path, unknown);
}

function walk(node: SchemaNode, value: unknown, path: string, unknown: string[]): void {
  if (SCHEMA_WRAPPERS.has(node.type)) return walk(node.wrapped!, value, path, unknown);
  switch (node.type) {
    case "lazy":
      return walk(node.getter!(value), value, path, unknown);
    case "object":
    case "loose_object":
      if (!isPlainObject(value)) return;
      for (const key of Object.keys(value)) {
        const member = value[key];
        const entry = node.entries![key];
        if (member === null) {
          delete value[key];
        } else if (entry) {
          walk(entry, member, join(path, key), unknown);
        } else if (node.type === "object") {
          unknown.push(join(path, key));
          delete value[key];
        }
      }
      return;
    case "array":
      if (Array.isArray(value)) value.forEach((item, i) => walk(node.item!, item, `${path}[${i}]`, unknown));
      return;
    case "record":
      if (!isPlainObject(value)) return;
      for (const key of Object.keys(value)) {
        if (value[key] === null) delete value[key];
        else walk(node.value!, value[key], `${path}[${key}]`, unknown);
      }
      return;
    case "union": {
      // Only object members need walking; pick the first object-shaped (or lazily defined) option.
      if (!isPlainObject(value)) return;
      const option = node.options
        ?.map((o) => (o.type === "lazy" ? o.getter!(value) : o))
        .find((o) => o.type === "object" || o.type === "loose_object");
      if (option) walk(option, value, path, unknown);
      return;
    }
    default:
      return;
  }
}

export interface DecodeIssue {
  path: string;
  message: string;
  /** A required member is absent: Kubernetes reports these in validation (422 "Required value"). */
  missing: boolean;
}

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; issues: DecodeIssue[] };

function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = "";
  for (const item of issue.path ?? []) {
    const key = (item as { key: unknown }).key;
    out = typeof key === "number" ? `${out}[${key}]` : join(out, String(key));
  }
  return out;
}

const typeName = (x: unknown): string => (Array.isArray(x) ? "array" : x === null ? "null" : typeof x);

/** Parses with the schema (applying defaults); type errors come back as path + message. */
export function decodeWith<S extends AnySchema>(schema: S, value: unknown): DecodeResult<v.InferOutput<S>> {
  const result = v.safeParse(schema, value);
  if (result.success) return { ok: true, value: result.output };
  return {
    ok: false,
    issues: result.issues.map((issue) => ({
      path: issuePath(issue),
      missing: issue.kind === "schema" && issue.input === undefined,
      message: issue.kind === "schema" ? `expected ${issue.expected ?? "a different type"}, got ${typeName(issue.input)}` : issue.message,
    })),
  };
}
