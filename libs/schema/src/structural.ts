// A CRD schema node read once into the form the algorithms walk: the profile's extension fields
// (`x-orch-*` or `x-kubernetes-*`) resolved, sub-schemas compiled, and the format reduced to the ones
// Kubernetes validates (apiextensions-apiserver pkg/apiserver/validation/formats.go strips the others).
import { type ExtensionPrefix, type JSONSchemaProps, type SchemaExtensions, type ValidationRule, schemaExtensions } from "@orch/api";
import { cloneJson } from "@orch/machinery";

export interface SchemaNode {
  readonly raw: JSONSchemaProps;
  /** `""` when the schema gives no type (int-or-string, preserve-unknown, value validations). */
  readonly type: string;
  readonly nullable: boolean;
  /** The format validated, `""` when Kubernetes does not validate the declared one. */
  readonly format: string;
  readonly properties: ReadonlyMap<string, SchemaNode>;
  /** A schema for the values of a map, or `true` (anything) / `false` (nothing). */
  readonly additionalProperties: SchemaNode | boolean | undefined;
  /** One schema for every item. */
  readonly items: SchemaNode | undefined;
  /** Positional item schemas (JSON Schema tuple form; not structural, validated only). */
  readonly itemList: readonly SchemaNode[] | undefined;
  readonly additionalItems: SchemaNode | boolean | undefined;
  readonly patternProperties: ReadonlyMap<string, SchemaNode>;
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
  readonly hasDefault: boolean;
  readonly default: unknown;
  readonly preserveUnknownFields: boolean;
  readonly embeddedResource: boolean;
  readonly intOrString: boolean;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[];
  readonly mapType: string | undefined;
  readonly validations: readonly ValidationRule[];
}

/** The formats Kubernetes validates in CRD schemas, by go-openapi's normalized name (dashes removed). */
export const supportedFormats: ReadonlySet<string> = new Set([
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "datetime",
]);

export const normalizeFormat = (format: string): string => format.replaceAll("-", "");

export function compileNode(raw: JSONSchemaProps, prefix: ExtensionPrefix): SchemaNode {
  const ext: SchemaExtensions = schemaExtensions(raw as JSONSchemaProps<typeof prefix>, prefix);
  const sub = (s: JSONSchemaProps) => compileNode(s, prefix);
  const subMap = (m: Record<string, JSONSchemaProps> | undefined) => new Map(Object.entries(m ?? {}).map(([k, s]) => [k, sub(s)] as const));
  const orBool = (x: boolean | JSONSchemaProps | undefined) => (x === undefined || typeof x === "boolean" ? x : sub(x));
  const format = raw.format && supportedFormats.has(normalizeFormat(raw.format)) ? raw.format : "";
  return {
    raw,
    type: raw.type ?? "",
    nullable: raw.nullable === true,
    format,
    properties: subMap(raw.properties),
    additionalProperties: orBool(raw.additionalProperties),
    items: raw.items === undefined || Array.isArray(raw.items) ? undefined : sub(raw.items),
    itemList: Array.isArray(raw.items) ? raw.items.map(sub) : undefined,
    additionalItems: orBool(raw.additionalItems),
    patternProperties: subMap(raw.patternProperties),
    allOf: (raw.allOf ?? []).map(sub),
    anyOf: (raw.anyOf ?? []).map(sub),
    oneOf: (raw.oneOf ?? []).map(sub),
    not: raw.not ? sub(raw.not) : undefined,
    hasDefault: raw.default !== undefined && raw.default !== null,
    default: raw.default,
    preserveUnknownFields: ext["preserve-unknown-fields"] === true,
    embeddedResource: ext["embedded-resource"] === true,
    intOrString: ext["int-or-string"] === true,
    listType: ext["list-type"],
    listMapKeys: ext["list-map-keys"] ?? [],
    mapType: ext["map-type"],
    validations: ext.validations ?? [],
  };
}

/** The schema of the values of an object's additional properties, when it is a schema. */
export const additionalSchema = (node: SchemaNode): SchemaNode | undefined =>
  typeof node.additionalProperties === "object" ? node.additionalProperties : undefined;

export const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** runtime.DeepCopyJSONValue (a JSON value, undefined as it is). */
export const deepCopy: <T>(value: T) => T = cloneJson;
