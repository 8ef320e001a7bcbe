// Compact field tables for Kubernetes' generated.proto messages and their compiled form.
//
// A table maps a message name to its fields, separated by whitespace, each `number:jsonName:type`:
//   type     = "?" scalar       a Go pointer (*int32, *bool…)           } present on the wire ⇒ kept, even when
//            | "!" scalar       a Go field without omitempty            } zero ("", 0, false)
//            | scalar           a Go field with omitempty: zero ⇒ omitted
//            | "[]" value       repeated (unpacked or packed)
//            | "map:" value     map<string, value> (entries: key = 1, value = 2); "map:[]string" is a named
//                               []string such as ExtraValue, which protobuf wraps as { repeated string items = 1 }
//            | value
//   scalar   = string | bool | int32 | int64 | bytes                  (bytes → base64, int64 → number)
//   value    = scalar
//            | Time | MicroTime | IntOrString | Quantity | JSON       (apimachinery types with their own JSON form;
//                                                                      JSON = runtime.RawExtension, FieldsV1)
//            | MessageName
// A jsonName of "..." embeds the message inline (Go `json:",inline"`): its fields land in the parent object.
// The result is what Go's encoding/json makes of the decoded object (Kubernetes' encoder writes every non-pointer
// field), except that what Go writes as null (nil slices and maps, the zero Time) is left out.

export type MessageTable = Readonly<Record<string, string>>;

export type Scalar = "string" | "bool" | "int32" | "int64" | "bytes";
export type Special = "Time" | "MicroTime" | "IntOrString" | "Quantity" | "JSON";

export type ValueType =
  | { readonly kind: "scalar"; readonly type: Scalar }
  | { readonly kind: "special"; readonly type: Special }
  | { readonly kind: "message"; readonly type: string }
  | { readonly kind: "stringList" };

export interface FieldSpec {
  readonly number: number;
  /** "" for an inline (embedded) message. */
  readonly jsonName: string;
  readonly cardinality: "single" | "repeated" | "map";
  /** A scalar whose zero value stays in the JSON: a Go pointer, or a field without omitempty. */
  readonly keepZero: boolean;
  readonly value: ValueType;
}

export interface MessageSpec {
  readonly name: string;
  readonly fields: ReadonlyMap<number, FieldSpec>;
  /** JSON names in Go struct order, inline messages expanded: the key order of the decoded object. */
  readonly order: readonly string[];
}

const scalars: ReadonlySet<string> = new Set<Scalar>(["string", "bool", "int32", "int64", "bytes"]);
const specials: ReadonlySet<string> = new Set<Special>(["Time", "MicroTime", "IntOrString", "Quantity", "JSON"]);

function parseValue(text: string, inMap: boolean, where: string): ValueType {
  if (inMap && text === "[]string") return { kind: "stringList" };
  if (scalars.has(text)) return { kind: "scalar", type: text as Scalar };
  if (specials.has(text)) return { kind: "special", type: text as Special };
  if (/^[A-Z]\w*$/.test(text)) return { kind: "message", type: text };
  throw new Error(`${where}: bad type "${text}"`);
}

function parseField(token: string, message: string): FieldSpec {
  const match = /^(\d+):([A-Za-z]\w*|\.\.\.):(.+)$/.exec(token);
  if (!match) throw new Error(`${message}: bad field "${token}"`);
  const [, num = "", name = "", typeText = ""] = match;
  const where = `${message}.${name}`;
  const inline = name === "...";
  let cardinality: FieldSpec["cardinality"] = "single";
  let keepZero = false;
  let rest = typeText;
  if (rest.startsWith("map:")) [cardinality, rest] = ["map", rest.slice(4)];
  else if (rest.startsWith("[]")) [cardinality, rest] = ["repeated", rest.slice(2)];
  else if (rest.startsWith("?") || rest.startsWith("!")) [keepZero, rest] = [true, rest.slice(1)];
  const value = parseValue(rest, cardinality === "map", where);
  if (keepZero && value.kind !== "scalar") throw new Error(`${where}: only scalars take "?" or "!"`);
  if (inline && (cardinality !== "single" || value.kind !== "message")) {
    throw new Error(`${where}: only a single message can be inline`);
  }
  return { number: Number(num), jsonName: inline ? "" : name, cardinality, keepZero, value };
}

/** Parses and cross-checks the tables: every referenced message exists, no name or number is used twice. */
export function compileMessages(tables: readonly MessageTable[]): ReadonlyMap<string, MessageSpec> {
  const parsed = new Map<string, FieldSpec[]>();
  for (const table of tables) {
    for (const [name, text] of Object.entries(table)) {
      if (parsed.has(name)) throw new Error(`message ${name} is defined twice`);
      parsed.set(
        name,
        text
          .trim()
          .split(/\s+/)
          .map((token) => parseField(token, name)),
      );
    }
  }
  const orders = new Map<string, string[]>();
  const orderOf = (name: string, stack: readonly string[]): string[] => {
    const known = orders.get(name);
    if (known) return known;
    if (stack.includes(name)) throw new Error(`message ${name} inlines itself`);
    const order: string[] = [];
    for (const field of parsed.get(name) ?? []) {
      if (field.value.kind === "message" && !parsed.has(field.value.type)) {
        throw new Error(`${name}.${field.jsonName || "..."}: unknown message ${field.value.type}`);
      }
      if (field.jsonName) order.push(field.jsonName);
      else if (field.value.kind === "message") order.push(...orderOf(field.value.type, [...stack, name]));
    }
    if (new Set(order).size !== order.length) throw new Error(`message ${name} has duplicate JSON names`);
    orders.set(name, order);
    return order;
  };
  const messages = new Map<string, MessageSpec>();
  for (const [name, fieldList] of parsed) {
    const fields = new Map<number, FieldSpec>();
    for (const field of fieldList) {
      if (fields.has(field.number)) throw new Error(`message ${name} uses field ${field.number} twice`);
      fields.set(field.number, field);
    }
    messages.set(name, { name, fields, order: orderOf(name, []) });
  }
  return messages;
}
