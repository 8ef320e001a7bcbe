// Runs google/cel-spec's simple conformance cases (testdata/*.textproto, Apache-2.0) through orch's CRD
// rule environment (compileCelExpression): each case's expression, with its declared variables and
// bindings, must produce the expected value, or an error where one is expected.
import { readFileSync } from "node:fs";
import { compileCelExpression } from "@orch/cel";
import { Environment } from "@marcbachmann/cel-js";
import { type Field, type Message, all, bool, bytes, message, one, parseTextproto, text } from "./textproto.js";

export interface Case {
  /** `file/section/test`, unique in the suite. */
  readonly id: string;
  readonly expr: string;
  readonly message: Message;
}

/** The cases of one data file, in order. */
export function casesOf(path: string): Case[] {
  const file = parseTextproto(readFileSync(path, "utf8"));
  const fileName = text(file, "name") ?? path;
  const cases: Case[] = [];
  for (const section of all(file, "section")) {
    if (section.kind !== "message") continue;
    const sectionName = text(section, "name") ?? "";
    for (const test of all(section, "test")) {
      if (test.kind !== "message") continue;
      const id = `${fileName}/${sectionName}/${text(test, "name") ?? ""}`;
      cases.push({ id, expr: text(test, "expr") ?? "", message: test });
    }
  }
  return cases;
}

// The engine's runtime classes that its package does not export, taken from values it produces.
const probe = new Environment();
const UnsignedInt = (probe.evaluate("0u") as object).constructor as new (v: bigint) => object;
const Duration = (probe.evaluate("duration('0s')") as object).constructor as new (seconds: bigint, nanos: number) => object;

const word = (m: Message, name: string): string | undefined => {
  const f = one(m, name);
  return f?.kind === "word" ? f.text : f?.kind === "string" ? text(m, name) : undefined;
};

/** A cel.expr.Type in the engine's spelling. */
function typeName(t: Message | undefined): string {
  if (!t) return "dyn";
  const primitive = word(t, "primitive");
  if (primitive) {
    const names: Record<string, string> = {
      BOOL: "bool",
      INT64: "int",
      UINT64: "uint",
      DOUBLE: "double",
      STRING: "string",
      BYTES: "bytes",
    };
    return names[primitive] ?? "dyn";
  }
  const wrapper = word(t, "wrapper");
  if (wrapper) return typeName({ kind: "message", fields: new Map([["primitive", [{ kind: "word", text: wrapper }]]]) });
  const list = message(t, "list_type");
  if (list) return `list<${typeName(message(list, "elem_type"))}>`;
  const map = message(t, "map_type");
  if (map) return `map<${typeName(message(map, "key_type"))}, ${typeName(message(map, "value_type"))}>`;
  const wellKnown = word(t, "well_known");
  if (wellKnown === "TIMESTAMP") return "google.protobuf.Timestamp";
  if (wellKnown === "DURATION") return "google.protobuf.Duration";
  const messageType = word(t, "message_type");
  if (messageType) return messageType;
  if (word(t, "null") !== undefined) return "null";
  const abstract = message(t, "abstract_type");
  if (abstract && word(abstract, "name") === "optional_type") {
    const [param] = all(abstract, "parameter_types");
    return `optional<${typeName(param?.kind === "message" ? param : undefined)}>`;
  }
  if (message(t, "type")) return "type";
  return "dyn";
}

class Unsupported extends Error {}

/** A cel.expr.Value as the engine's runtime value (for bindings). */
function runtimeValue(v: Message): unknown {
  const [name, fields] = [...v.fields][0] ?? [];
  const f = fields?.[fields.length - 1];
  const scalar = f?.kind === "word" ? f.text : undefined;
  switch (name) {
    case "int64_value":
      return BigInt(scalar ?? "0");
    case "uint64_value":
      return new UnsignedInt(BigInt(scalar ?? "0"));
    case "double_value":
      return parseDouble(scalar ?? "0");
    case "string_value":
      return text(v, name);
    case "bytes_value":
      return bytes(v, name);
    case "bool_value":
      return bool(v, name);
    case "null_value":
      return null;
    case "list_value":
      return all(f as Message, "values").map((x) => runtimeValue(x as Message));
    case "map_value":
      return new Map(
        all(f as Message, "entries").map((e) => [
          runtimeValue(message(e as Message, "key")!),
          runtimeValue(message(e as Message, "value")!),
        ]),
      );
    case "object_value": {
      const [typeUrl, bodies] = [...(f as Message).fields][0] ?? [];
      const body = bodies?.[0] as Message | undefined;
      if (typeUrl?.endsWith("google.protobuf.Duration]") && body) {
        return new Duration(BigInt(word(body, "seconds") ?? "0"), Number(word(body, "nanos") ?? "0"));
      }
      if (typeUrl?.endsWith("google.protobuf.Timestamp]") && body) {
        return new Date(Number(word(body, "seconds") ?? "0") * 1000 + Math.floor(Number(word(body, "nanos") ?? "0") / 1e6));
      }
      throw new Unsupported(`protobuf message ${typeUrl}`);
    }
    default:
      throw new Unsupported(`value ${name}`);
  }
}

function parseDouble(s: string): number {
  const t = /^[-+.0-9]/.test(s) && !/^[-+]?inf/i.test(s) ? s.replace(/[fF]$/, "") : s;
  if (/^[-+]?inf(inity)?$/i.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
  if (/^nan$/i.test(t)) return Number.NaN;
  return Number(t);
}

/** A canonical text of a value, so that expected and actual compare with their CEL types. */
function canonical(v: unknown): string {
  if (typeof v === "bigint") return `int(${v})`;
  if (v instanceof UnsignedInt) return `uint(${String(v)})`;
  if (typeof v === "number") return Number.isNaN(v) ? "double(NaN)" : `double(${v === 0 ? 0 : v})`;
  if (typeof v === "string") return `string(${JSON.stringify(v)})`;
  if (typeof v === "boolean") return `bool(${v})`;
  if (v === null || v === undefined) return "null";
  if (v instanceof Uint8Array) return `bytes(${Buffer.from(v).toString("hex")})`;
  if (Array.isArray(v)) return `[${v.map(canonical).join(", ")}]`;
  if (v instanceof Date) return `timestamp(${v.toISOString()})`;
  if (v instanceof Duration) return `duration(${String(v)})`;
  const entries =
    v instanceof Map ? [...v.entries()] : Object.getPrototypeOf(v) === Object.prototype ? Object.entries(v as object) : undefined;
  if (entries) {
    return `{${entries
      .map(([k, x]) => `${canonical(k)}: ${canonical(x)}`)
      .sort()
      .join(", ")}}`;
  }
  const typeName = (v as { name?: unknown }).name;
  if (typeof typeName === "string" && String(v).startsWith("Type<")) return `type(${celTypeName(typeName)})`;
  return `${(v as object).constructor?.name}(${String(v)})`;
}

/** cel-go's name of a type value: parameters dropped, `null_type`. */
const celTypeName = (name: string): string => (name === "null" ? "null_type" : name.replace(/<.*>$/, ""));

function expectedCanonical(v: Message): string {
  const [name, fields] = [...v.fields][0] ?? [];
  if (name === "type_value") return `type(${celTypeName(text(v, name) ?? "")})`;
  if (name === "list_value")
    return `[${all(fields![0] as Message, "values")
      .map((x) => expectedCanonical(x as Message))
      .join(", ")}]`;
  if (name === "map_value") {
    return `{${all(fields![0] as Message, "entries")
      .map((e) => `${expectedCanonical(message(e as Message, "key")!)}: ${expectedCanonical(message(e as Message, "value")!)}`)
      .sort()
      .join(", ")}}`;
  }
  return canonical(runtimeValue(v));
}

export type Outcome = { pass: true } | { pass: false; detail: string };

/** Runs one case: compiles with its declarations, evaluates with its bindings, compares. */
export function runCase(c: Case): Outcome {
  const t = c.message;
  try {
    const variables: Record<string, string> = {};
    for (const decl of all(t, "type_env")) {
      if (decl.kind !== "message") continue;
      const ident = message(decl, "ident");
      if (!ident) return { pass: false, detail: "declares a function" };
      variables[text(decl, "name") ?? ""] = typeName(message(ident, "type"));
    }
    const activation: Record<string, unknown> = {};
    for (const b of all(t, "bindings")) {
      if (b.kind !== "message") continue;
      const name = text(b, "key") ?? "";
      const value = message(message(b, "value") ?? emptyMessage, "value");
      if (!value) return { pass: false, detail: `binding ${name} is not a value` };
      activation[name] = runtimeValue(value);
      variables[name] ??= "dyn";
    }
    const errorExpected = one(t, "eval_error") !== undefined || one(t, "any_eval_errors") !== undefined;
    const compiled = compileCelExpression(c.expr, variables);
    if (!compiled.ok) {
      // Kubernetes always type-checks: a case that only errs unchecked may err at compile time.
      if (errorExpected && bool(t, "disable_check")) return { pass: true };
      return { pass: false, detail: compiled.message };
    }
    const result = compiled.program.evaluate(activation);
    if (errorExpected) return result.ok ? { pass: false, detail: `expected an error, got ${canonical(result.value)}` } : { pass: true };
    if (!result.ok) return { pass: false, detail: `${result.reason}: ${result.message}` };
    const expectedValue = message(t, "value");
    const expected = expectedValue ? expectedCanonical(expectedValue) : "bool(true)";
    const actual = canonical(result.value);
    return actual === expected ? { pass: true } : { pass: false, detail: `expected ${expected}, got ${actual}` };
  } catch (e) {
    return { pass: false, detail: e instanceof Unsupported ? `unsupported: ${e.message}` : `threw: ${(e as Error).message}` };
  }
}

const emptyMessage: Message = { kind: "message", fields: new Map<string, Field[]>() };
