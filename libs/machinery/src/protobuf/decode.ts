// Kubernetes protobuf request bodies (k8s.io/apimachinery/pkg/runtime/serializer/protobuf) to the JSON object a
// JSON client would have sent. Body = "k8s\0" + runtime.Unknown { 1 typeMeta { 1 apiVersion, 2 kind }, 2 raw,
// 3 contentEncoding, 4 contentType }; raw is the object's generated.proto message, decoded with ./messages.
import { Buffer } from "node:buffer";
import { TooDeepError, decodeJson } from "../serializer/json.js";
import { rfc3339 } from "../values/time.js";
import { messageTables, protobufKinds } from "./kinds.js";
import { compileMessages, type MessageSpec, type Scalar, type Special, type ValueType } from "./schema.js";
import { ProtobufDecodeError, WireReader, WireType } from "./wire.js";

export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

/** A well-formed body of a kind we have no tables for; the apiserver answers 415 (as for CRDs). */
export class UnsupportedProtobufKindError extends Error {
  override readonly name = "UnsupportedProtobufKindError";
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`${PROTOBUF_CONTENT_TYPE} is not supported for kind "${kind}" in "${apiVersion}"; send application/json`);
  }
}

export interface ProtobufDecodeResult {
  object: Record<string, unknown>;
  /** Fields our tables do not know, skipped as protobuf allows: `spec.template.spec.containers[0]#45`. */
  unknownFields: string[];
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00]; // "k8s\0"

export const hasKubernetesProtobufMagic = (bytes: Uint8Array): boolean => MAGIC.every((b, i) => bytes[i] === b);

export function decodeKubernetesProtobuf(bytes: Uint8Array): Record<string, unknown> {
  return decodeKubernetesProtobufWithDiagnostics(bytes).object;
}

export function decodeKubernetesProtobufWithDiagnostics(bytes: Uint8Array): ProtobufDecodeResult {
  if (!hasKubernetesProtobufMagic(bytes)) {
    throw new ProtobufDecodeError('the body does not start with the Kubernetes protobuf prefix "k8s\\0"');
  }
  const unknownFields: string[] = [];
  let apiVersion = "";
  let kind = "";
  let raw: Uint8Array = new Uint8Array(0);
  const envelope = new WireReader(bytes.subarray(MAGIC.length));
  while (!envelope.done) {
    const { field, wireType } = envelope.tag();
    if (field === 1) {
      const typeMeta = new WireReader(lengthDelimited(envelope, wireType, "typeMeta"));
      while (!typeMeta.done) {
        const tag = typeMeta.tag();
        if (tag.field === 1) apiVersion = utf8(lengthDelimited(typeMeta, tag.wireType, "apiVersion"));
        else if (tag.field === 2) kind = utf8(lengthDelimited(typeMeta, tag.wireType, "kind"));
        else skipUnknown(typeMeta, tag, "typeMeta", unknownFields);
      }
    } else if (field === 2) {
      raw = lengthDelimited(envelope, wireType, "raw");
    } else if (field === 3 || field === 4) {
      // contentEncoding and contentType: always empty, and ignored by kube-apiserver too.
      envelope.skip(wireType);
    } else {
      skipUnknown(envelope, { field, wireType }, "", unknownFields);
    }
  }
  if (!kind) throw new ProtobufDecodeError("the object has no kind");
  if (!apiVersion) throw new ProtobufDecodeError(`the ${kind} object has no apiVersion`);
  const kinds = Object.hasOwn(protobufKinds, apiVersion) ? protobufKinds[apiVersion] : undefined;
  const spec = kinds?.includes(kind) ? messages().get(kind) : undefined;
  if (!spec) throw new UnsupportedProtobufKindError(apiVersion, kind);
  const object = { kind, apiVersion, ...decodeMessage(raw, spec, "", unknownFields) };
  return { object, unknownFields };
}

let compiled: ReadonlyMap<string, MessageSpec> | undefined;
const messages = (): ReadonlyMap<string, MessageSpec> => (compiled ??= compileMessages(messageTables));

function messageSpec(name: string): MessageSpec {
  const spec = messages().get(name);
  if (!spec) throw new Error(`protobuf tables: no message ${name}`); // compileMessages rules this out
  return spec;
}

type JsonObject = Record<string, unknown>;

const join = (path: string, name: string): string => (path ? `${path}.${name}` : name);

function decodeMessage(bytes: Uint8Array, spec: MessageSpec, path: string, unknown: string[], into?: JsonObject) {
  const target: JsonObject = into ?? {};
  decodeFields(bytes, spec, path, unknown, target);
  const ordered: JsonObject = {};
  for (const name of spec.order) if (Object.hasOwn(target, name)) ordered[name] = target[name];
  return ordered;
}

function decodeFields(bytes: Uint8Array, spec: MessageSpec, path: string, unknown: string[], target: JsonObject) {
  const reader = new WireReader(bytes);
  while (!reader.done) {
    const tag = reader.tag();
    const field = spec.fields.get(tag.field);
    if (!field) {
      skipUnknown(reader, tag, path, unknown);
      continue;
    }
    const name = field.jsonName;
    const where = join(path, name);
    const { value: type } = field;
    if (!name) {
      // An embedded struct: its fields belong to this object.
      if (type.kind !== "message") throw new Error(`protobuf tables: inline ${type.kind}`);
      decodeFields(lengthDelimited(reader, tag.wireType, path), messageSpec(type.type), path, unknown, target);
    } else if (field.cardinality === "repeated") {
      const list = Array.isArray(target[name]) ? (target[name] as unknown[]) : [];
      target[name] = list;
      readRepeated(reader, tag.wireType, type, where, unknown, list);
    } else if (field.cardinality === "map") {
      const map = isObject(target[name]) ? (target[name] as JsonObject) : {};
      target[name] = map;
      readMapEntry(lengthDelimited(reader, tag.wireType, where), type, where, unknown, map);
    } else {
      // A message that occurs twice is merged, as protobuf requires; anything else: the last one wins.
      const previous = target[name];
      const value =
        type.kind === "message" && isObject(previous)
          ? mergeMessage(lengthDelimited(reader, tag.wireType, where), type.type, where, unknown, previous)
          : readValue(reader, tag.wireType, type, where, unknown);
      if (value === undefined || (!field.keepZero && isOmittedZero(value, type))) delete target[name];
      else target[name] = value;
    }
  }
}

const mergeMessage = (bytes: Uint8Array, name: string, where: string, unknown: string[], into: JsonObject) =>
  decodeMessage(bytes, messageSpec(name), where, unknown, into);

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** Zero scalars, which `omitempty` drops. Structs (messages, IntOrString, Quantity) it never drops. */
const isOmittedZero = (value: unknown, type: ValueType): boolean =>
  type.kind === "scalar" && (value === "" || value === 0 || value === false);

function readValue(reader: WireReader, wireType: number, type: ValueType, where: string, unknown: string[]): unknown {
  if (type.kind === "scalar") return readScalar(reader, wireType, type.type, where);
  return readEmbedded(lengthDelimited(reader, wireType, where), type, where, unknown);
}

type EmbeddedType = Exclude<ValueType, { kind: "scalar" }>;

/** A value carried as a length-delimited message. */
function readEmbedded(bytes: Uint8Array, type: EmbeddedType, where: string, unknown: string[]) {
  switch (type.kind) {
    case "special":
      return readSpecial(bytes, type.type, where, unknown);
    case "message":
      return decodeMessage(bytes, messageSpec(type.type), where, unknown);
    case "stringList":
      return readStringList(bytes, where, unknown);
  }
}

const scalarWireType: Readonly<Record<Scalar, number>> = {
  string: WireType.bytes,
  bytes: WireType.bytes,
  bool: WireType.varint,
  int32: WireType.varint,
  int64: WireType.varint,
};

function readScalar(reader: WireReader, wireType: number, type: Scalar, where: string): string | number | boolean {
  expectWireType(wireType, scalarWireType[type], where);
  switch (type) {
    case "string":
      return utf8(reader.bytesField());
    case "bytes":
      return base64(reader.bytesField());
    case "bool":
      return reader.varint() !== 0n;
    case "int32":
      return Number(BigInt.asIntN(32, reader.varint()));
    case "int64":
      // A JSON number, exact up to 2^53 like any number a JSON client sends us.
      return Number(BigInt.asIntN(64, reader.varint()));
  }
}

function readRepeated(reader: WireReader, wireType: number, type: ValueType, where: string, unknown: string[], list: unknown[]) {
  if (type.kind === "scalar" && wireType === WireType.bytes && scalarWireType[type.type] !== WireType.bytes) {
    // Packed encoding of numbers and booleans (which Kubernetes' encoder does not use, but proto2 readers accept).
    const packed = new WireReader(reader.bytesField());
    while (!packed.done) list.push(readScalar(packed, scalarWireType[type.type], type.type, where));
    return;
  }
  list.push(readValue(reader, wireType, type, `${where}[${list.length}]`, unknown) ?? null);
}

function readMapEntry(bytes: Uint8Array, type: ValueType, where: string, unknown: string[], map: JsonObject) {
  const reader = new WireReader(bytes);
  let key = "";
  let value: unknown;
  let present = false;
  while (!reader.done) {
    const tag = reader.tag();
    if (tag.field === 1) key = utf8(lengthDelimited(reader, tag.wireType, where));
    else if (tag.field === 2) {
      value = readValue(reader, tag.wireType, type, `${where}[${JSON.stringify(key)}]`, unknown);
      present = true;
    } else skipUnknown(reader, tag, `${where}[]`, unknown);
  }
  if (!present) value = zeroValue(type, `${where}[${JSON.stringify(key)}]`, unknown);
  // Defined, not assigned: a key such as "__proto__" must stay an ordinary key, as JSON.parse keeps it.
  Object.defineProperty(map, key, { value: value ?? null, enumerable: true, writable: true, configurable: true });
}

function zeroValue(type: ValueType, where: string, unknown: string[]): unknown {
  if (type.kind !== "scalar") return readEmbedded(new Uint8Array(0), type, where, unknown);
  return type.type === "bool" ? false : type.type === "string" || type.type === "bytes" ? "" : 0;
}

function readStringList(bytes: Uint8Array, where: string, unknown: string[]): string[] {
  const reader = new WireReader(bytes);
  const items: string[] = [];
  while (!reader.done) {
    const tag = reader.tag();
    if (tag.field === 1) items.push(utf8(lengthDelimited(reader, tag.wireType, where)));
    else skipUnknown(reader, tag, where, unknown);
  }
  return items;
}

// metav1.Time accepts 0000-01-01 to 9999-12-31, the years RFC 3339 can write.
const MIN_SECONDS = -62_167_219_200n;
const MAX_SECONDS = 253_402_300_799n;

function readSpecial(bytes: Uint8Array, type: Special, where: string, unknown: string[]): unknown {
  const reader = new WireReader(bytes);
  switch (type) {
    case "Time":
    case "MicroTime": {
      if (bytes.length === 0) return undefined; // the zero time, which Go writes as JSON null
      let seconds = 0n;
      let nanos = 0;
      while (!reader.done) {
        const tag = reader.tag();
        if (tag.field === 1) seconds = BigInt.asIntN(64, varint(reader, tag.wireType, where));
        else if (tag.field === 2) nanos = Number(BigInt.asIntN(32, varint(reader, tag.wireType, where)));
        else skipUnknown(reader, tag, where, unknown);
      }
      // Time keeps whole seconds, as its protobuf decoder does; MicroTime truncates nanoseconds to microseconds.
      const fraction = type === "Time" ? 0n : BigInt(Math.trunc(nanos / 1000));
      const micros = seconds * 1_000_000n + fraction;
      const whole = micros >= 0n ? micros / 1_000_000n : -((-micros + 999_999n) / 1_000_000n);
      if (whole < MIN_SECONDS || whole > MAX_SECONDS) throw new ProtobufDecodeError(`${where}: time out of range`);
      const text = rfc3339(new Date(Number(whole) * 1000));
      if (type === "Time") return text;
      return `${text.slice(0, -1)}.${String(micros - whole * 1_000_000n).padStart(6, "0")}Z`;
    }
    case "IntOrString": {
      let kind = 0;
      let intVal = 0;
      let strVal = "";
      while (!reader.done) {
        const tag = reader.tag();
        if (tag.field === 1) kind = Number(BigInt.asIntN(64, varint(reader, tag.wireType, where)));
        else if (tag.field === 2) intVal = Number(BigInt.asIntN(32, varint(reader, tag.wireType, where)));
        else if (tag.field === 3) strVal = utf8(lengthDelimited(reader, tag.wireType, where));
        else skipUnknown(reader, tag, where, unknown);
      }
      return kind === 1 ? strVal : intVal;
    }
    case "Quantity": {
      let text = "0"; // the zero Quantity's JSON
      while (!reader.done) {
        const tag = reader.tag();
        if (tag.field === 1) text = utf8(lengthDelimited(reader, tag.wireType, where));
        else skipUnknown(reader, tag, where, unknown);
      }
      return text;
    }
    case "JSON": {
      let raw: Uint8Array | undefined;
      while (!reader.done) {
        const tag = reader.tag();
        if (tag.field === 1) raw = lengthDelimited(reader, tag.wireType, where);
        else skipUnknown(reader, tag, where, unknown);
      }
      if (!raw || raw.length === 0) return undefined;
      try {
        return decodeJson(utf8(raw));
      } catch (e) {
        if (e instanceof TooDeepError) throw new ProtobufDecodeError(`${where}: ${e.message}`);
        throw new ProtobufDecodeError(`${where}: the embedded raw value is not JSON`);
      }
    }
  }
}

function varint(reader: WireReader, wireType: number, where: string): bigint {
  expectWireType(wireType, WireType.varint, where);
  return reader.varint();
}

function lengthDelimited(reader: WireReader, wireType: number, where: string): Uint8Array {
  expectWireType(wireType, WireType.bytes, where);
  return reader.bytesField();
}

function expectWireType(actual: number, expected: number, where: string) {
  if (actual !== expected) {
    throw new ProtobufDecodeError(`${where || "object"}: wire type ${actual}, expected ${expected}`);
  }
}

function skipUnknown(reader: WireReader, tag: { field: number; wireType: number }, path: string, unknown: string[]) {
  reader.skip(tag.wireType);
  unknown.push(`${path}#${tag.field}`);
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const utf8 = (bytes: Uint8Array): string => decoder.decode(bytes);
const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
