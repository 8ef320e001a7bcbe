// The Swagger 2.0 document in gnostic's protobuf form (openapi.v2.Document, github.com/google/gnostic
// openapiv2/OpenAPIv2.proto): what client-go's OpenAPISchema() asks /openapi/v2 for and unmarshals.
// Only the messages orch's document uses are written; values gnostic keeps as `Any` (vendor extensions,
// defaults, enums, examples) carry their YAML text, which JSON is.

type Json = { [key: string]: unknown };

/** A protobuf message being written: fields appended in the order given. */
class Message {
  private readonly chunks: Buffer[] = [];

  private tag(field: number, wireType: number) {
    this.chunks.push(varint(BigInt((field << 3) | wireType)));
  }

  string(field: number, value: unknown): this {
    if (typeof value !== "string" || value === "") return this;
    return this.bytes(field, Buffer.from(value, "utf8"));
  }

  strings(field: number, values: unknown): this {
    if (Array.isArray(values)) for (const v of values) this.string(field, String(v));
    return this;
  }

  bool(field: number, value: unknown): this {
    return value === true ? this.flag(field, true) : this;
  }

  /** A bool written even when false: a member of a oneof. */
  flag(field: number, value: boolean): this {
    this.tag(field, 0);
    this.chunks.push(Buffer.from([value ? 1 : 0]));
    return this;
  }

  int64(field: number, value: unknown): this {
    if (typeof value !== "number" || !Number.isInteger(value) || value === 0) return this;
    this.tag(field, 0);
    this.chunks.push(varint(BigInt.asUintN(64, BigInt(value))));
    return this;
  }

  double(field: number, value: unknown): this {
    if (typeof value !== "number" || value === 0) return this;
    this.tag(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.chunks.push(b);
    return this;
  }

  message(field: number, message: Message | undefined): this {
    return message ? this.bytes(field, message.finish()) : this;
  }

  private bytes(field: number, bytes: Buffer): this {
    this.tag(field, 2);
    this.chunks.push(varint(BigInt(bytes.length)), bytes);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function varint(value: bigint): Buffer {
  const out: number[] = [];
  let v = value;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return Buffer.from(out);
}

/** gnostic's Any: the value's YAML. */
const any = (value: unknown) => new Message().string(2, `${JSON.stringify(value)}\n`);
const namedAny = (name: string, value: unknown) => new Message().string(1, name).message(2, any(value));

function vendorExtensions(m: Message, field: number, node: Json): void {
  for (const [key, value] of Object.entries(node)) if (key.startsWith("x-")) m.message(field, namedAny(key, value));
}

function schema(node: Json): Message {
  const m = new Message().string(1, node.$ref).string(2, node.format).string(3, node.title).string(4, node.description);
  if (node.default !== undefined) m.message(5, any(node.default));
  m.double(6, node.multipleOf)
    .double(7, node.maximum)
    .bool(8, node.exclusiveMaximum)
    .double(9, node.minimum)
    .bool(10, node.exclusiveMinimum)
    .int64(11, node.maxLength)
    .int64(12, node.minLength)
    .string(13, node.pattern)
    .int64(14, node.maxItems)
    .int64(15, node.minItems)
    .bool(16, node.uniqueItems)
    .int64(17, node.maxProperties)
    .int64(18, node.minProperties)
    .strings(19, node.required);
  if (Array.isArray(node.enum)) for (const value of node.enum) m.message(20, any(value));
  const additional = node.additionalProperties;
  if (typeof additional === "boolean") m.message(21, new Message().flag(2, additional));
  else if (additional && typeof additional === "object") m.message(21, new Message().message(1, schema(additional as Json)));
  if (typeof node.type === "string") m.message(22, new Message().string(1, node.type));
  const items = node.items;
  if (items && typeof items === "object") {
    const list = new Message();
    for (const item of Array.isArray(items) ? items : [items]) list.message(1, schema(item as Json));
    m.message(23, list);
  }
  if (Array.isArray(node.allOf)) for (const s of node.allOf) m.message(24, schema(s as Json));
  if (node.properties && typeof node.properties === "object") {
    const properties = new Message();
    for (const [name, s] of Object.entries(node.properties as Record<string, Json>)) {
      properties.message(1, new Message().string(1, name).message(2, schema(s)));
    }
    m.message(25, properties);
  }
  m.bool(27, node.readOnly);
  if (node.example !== undefined) m.message(30, any(node.example));
  vendorExtensions(m, 31, node);
  return m;
}

function parameter(p: Json): Message {
  if (p.in === "body") {
    const body = new Message()
      .string(1, p.description)
      .string(2, p.name)
      .string(3, p.in)
      .bool(4, p.required)
      .message(5, schema(p.schema as Json));
    return new Message().message(1, new Message().message(1, body));
  }
  // Query sub-schemas put `type` at 6 and uniqueItems at 20; path sub-schemas at 5 and 19.
  const query = p.in === "query";
  const sub = new Message()
    .bool(1, p.required)
    .string(2, p.in)
    .string(3, p.description)
    .string(4, p.name)
    .string(query ? 6 : 5, p.type)
    .bool(query ? 20 : 19, p.uniqueItems);
  return new Message().message(1, new Message().message(2, new Message().message(query ? 3 : 4, sub)));
}

function operation(op: Json): Message {
  const m = new Message().string(3, op.description).string(5, op.operationId).strings(6, op.produces).strings(7, op.consumes);
  for (const p of (op.parameters as Json[] | undefined) ?? []) m.message(8, parameter(p));
  const responses = new Message();
  for (const [code, r] of Object.entries((op.responses as Record<string, Json> | undefined) ?? {})) {
    const response = new Message().string(1, r.description);
    if (r.schema) response.message(2, new Message().message(1, schema(r.schema as Json)));
    responses.message(1, new Message().string(1, code).message(2, new Message().message(1, response)));
  }
  m.message(9, responses);
  vendorExtensions(m, 13, op);
  return m;
}

const PATH_ITEM_FIELDS: Record<string, number> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

/** The protobuf form of a Swagger 2.0 document (the JSON orch serves at /openapi/v2). */
export function swaggerToProtobuf(doc: Json): Buffer {
  const info = doc.info as Json;
  const paths = new Message();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    const pathItem = new Message();
    for (const [verb, op] of Object.entries(item)) {
      const field = PATH_ITEM_FIELDS[verb];
      if (field) pathItem.message(field, operation(op));
    }
    paths.message(2, new Message().string(1, path).message(2, pathItem));
  }
  const definitions = new Message();
  for (const [name, s] of Object.entries(doc.definitions as Record<string, Json>)) {
    definitions.message(1, new Message().string(1, name).message(2, schema(s)));
  }
  return new Message()
    .string(1, doc.swagger)
    .message(2, new Message().string(1, info.title).string(2, info.version))
    .message(8, paths)
    .message(9, definitions)
    .finish();
}
