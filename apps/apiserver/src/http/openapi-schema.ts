// Field schemas for /openapi: built-in kinds' valibot schemas (libs/api, the one source of their types)
// converted to OpenAPI v3 schema objects as kube-openapi generates them from Go types, and custom
// resources' CRD schemas completed as apiextensions-apiserver's openapi builder completes them.
// Schemas are written with v3 references (`#/components/schemas/<name>`); `toSwaggerV2` rewrites them.
import * as api from "@orch/api";
import { type AnySchema, type SchemaNode, listSemantics } from "@orch/api";

export type OpenApiSchema = { [key: string]: unknown };

const REF_PREFIX = "#/components/schemas/";
const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
export const OBJECT_META = `${META}.ObjectMeta`;
const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/** The metav1 types of libs/api (meta.ts); every other named schema belongs to the group that first uses it. */
const META_TYPES = new Set([
  "ObjectMeta",
  "ListMeta",
  "OwnerReference",
  "ManagedFieldsEntry",
  "LabelSelector",
  "LabelSelectorRequirement",
  "Condition",
]);

/** Kubernetes' short texts for the fields every object has (kube-openapi carries the long ones). */
export const TYPE_FIELDS: Record<"apiVersion" | "kind" | "metadata", string> = {
  apiVersion: "APIVersion defines the versioned schema of this representation of an object.",
  kind: "Kind is a string value representing the REST resource this object represents.",
  metadata: "Standard object's metadata.",
};

const ref = (name: string): OpenApiSchema => ({ $ref: `${REF_PREFIX}${name}` });

/** The schemas valibot exports under a name in libs/api, by identity: they become named components. */
function exportedNames(): Map<object, string> {
  const names = new Map<object, string>();
  for (const [name, value] of Object.entries(api)) {
    if (value && typeof value === "object" && (value as { kind?: unknown }).kind === "schema" && !names.has(value)) names.set(value, name);
  }
  return names;
}

/** `io.k8s.api.<group's first label>.<version>` (core for ""), or apiextensions' own package. */
export function packageOf(group: string, version: string): string {
  const label = group.split(".")[0] || "core";
  return label === "apiextensions" ? `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}` : `io.k8s.api.${label}.${version}`;
}

const OPTIONAL = new Set(["optional", "exact_optional", "nullish", "undefinedable"]);
const WRAPPERS = new Set([...OPTIONAL, "nullable", "non_optional", "non_nullable"]);

type PipeItem = { kind: string; type: string; metadata?: Record<string, unknown>; description?: string; requirement?: unknown };
const pipeOf = (node: SchemaNode): readonly PipeItem[] => (node.pipe ?? []) as readonly PipeItem[];

/**
 * Converts built-in kinds' schemas into one set of named component schemas. Built-in schemas never
 * change, so one converter serves every document; each document takes the components it references.
 */
export class ValibotConverter {
  readonly components = new Map<string, OpenApiSchema>();
  private readonly exported = exportedNames();
  private readonly componentOf = new Map<object, string>();
  private pkg = "io.k8s.api.core.v1";

  constructor() {
    this.components.set(INT_OR_STRING, {
      description: "IntOrString is a type that can hold an int32 or a string.",
      format: "int-or-string",
      oneOf: [{ type: "integer" }, { type: "string" }],
    });
    this.components.set(QUANTITY, {
      description: "Quantity is a fixed-point representation of a number, e.g. `500m` or `1Gi`.",
      oneOf: [{ type: "string" }, { type: "number" }],
    });
  }

  /**
   * The component name of a kind's top-level schema (`io.k8s.api.apps.v1.Deployment`), converted on
   * first use and tagged with the group-version-kinds served from it.
   */
  kind(gvk: { group: string; version: string; kind: string }, schema: AnySchema): string {
    const name = `${packageOf(gvk.group, gvk.version)}.${gvk.kind}`;
    let component = this.components.get(name);
    if (!component) {
      this.pkg = packageOf(gvk.group, gvk.version);
      this.componentOf.set(schema, name);
      component = this.object(schema as unknown as SchemaNode);
      this.components.set(name, component);
    }
    const tags = (component["x-kubernetes-group-version-kind"] ??= []) as object[];
    if (!tags.some((t) => JSON.stringify(t) === JSON.stringify(gvk))) tags.push(gvk);
    return name;
  }

  /** A named schema by its libs/api export (ObjectMeta, ListMeta), converted on first use. */
  named(schema: AnySchema): string {
    const result = this.convert(schema as unknown as SchemaNode);
    if (typeof result.$ref !== "string") throw new Error("not a named schema");
    return result.$ref.slice(REF_PREFIX.length);
  }

  /** A field's schema: a reference for named types, else inline. */
  private convert(node: SchemaNode): OpenApiSchema {
    if (WRAPPERS.has(node.type)) return this.convert(node.wrapped!);
    if (node.type === "lazy") return this.convert(this.lazyTarget(node));
    const special = this.wellKnown(node);
    if (special) return ref(special);
    const name = this.componentName(node);
    if (!name) return this.inline(node);
    if (!this.components.has(name)) {
      // Reserved before converting, so a recursive type refers to itself instead of looping.
      this.components.set(name, {});
      this.components.set(name, this.inline(node));
    }
    return ref(name);
  }

  /** The one recursive type of libs/api (JSONSchemaProps) is unexported: it is named after Kubernetes'. */
  private lazyTarget(node: SchemaNode): SchemaNode {
    const target = node.getter!(undefined);
    if (!this.exported.has(target) && !this.componentOf.has(target)) this.componentOf.set(target, `${this.pkg}.JSONSchemaProps`);
    return target;
  }

  private componentName(node: SchemaNode): string | undefined {
    const known = this.componentOf.get(node);
    if (known) return known;
    const exported = this.exported.get(node);
    if (!exported || (node.type !== "object" && node.type !== "loose_object")) return undefined;
    const name = `${META_TYPES.has(exported) ? META : this.pkg}.${exported}`;
    this.componentOf.set(node, name);
    return name;
  }

  /** IntOrString and Quantity, recognised by their shape: `intOrString()`/`quantity()` build new objects. */
  private wellKnown(node: SchemaNode): string | undefined {
    if (node.type !== "union") return undefined;
    const options = node.options ?? [];
    const types = options.map((o) => o.type).join(",");
    if (types === "number,string" && pipeOf(options[0]!).some((a) => a.type === "integer")) return INT_OR_STRING;
    if (types === "string,number" && pipeOf(node).some((a) => a.type === "raw_transform")) return QUANTITY;
    return undefined;
  }

  private inline(node: SchemaNode): OpenApiSchema {
    const description = pipeOf(node).find((a) => a.type === "description")?.description;
    const schema = this.typed(node);
    return description ? { description, ...schema } : schema;
  }

  private typed(node: SchemaNode): OpenApiSchema {
    switch (node.type) {
      case "object":
      case "loose_object":
        return this.object(node);
      case "array":
        return this.array(node);
      case "record":
        return { type: "object", additionalProperties: this.convert(node.value!) };
      case "string":
        return { type: "string" };
      case "boolean":
        return { type: "boolean" };
      case "number":
        return this.number(node);
      case "picklist":
        return { type: "string", enum: [...((node as { options?: unknown[] }).options ?? [])] };
      case "literal": {
        const literal = (node as { literal?: unknown }).literal;
        return { type: typeof literal === "number" ? "number" : typeof literal, enum: [literal] };
      }
      case "union": {
        // JSONSchemaPropsOrBool and similar: the object form describes the field.
        const options = (node.options ?? []).map((o) => (o.type === "lazy" ? this.lazyTarget(o) : o));
        const structured = options.find((o) => o.type === "object" || o.type === "loose_object" || o.type === "array");
        return structured ? this.convert(structured) : {};
      }
      default:
        // unknown/any: RawExtension-like content kept as sent.
        return { "x-kubernetes-preserve-unknown-fields": true };
    }
  }

  private number(node: SchemaNode): OpenApiSchema {
    const pipe = pipeOf(node);
    if (!pipe.some((a) => a.type === "integer")) return { type: "number", format: "double" };
    const min = pipe.find((a) => a.type === "min_value")?.requirement;
    return { type: "integer", format: typeof min === "number" && min >= -2147483648 ? "int32" : "int64" };
  }

  private object(node: SchemaNode): OpenApiSchema {
    const properties: Record<string, OpenApiSchema> = {};
    const required: string[] = [];
    for (const [field, entry] of Object.entries(node.entries ?? {})) {
      if (!OPTIONAL.has(entry.type)) required.push(field);
      properties[field] = this.property(field, entry);
    }
    const struct = (pipeOf(node).find((a) => a.type === "metadata")?.metadata ?? {}) as { mapType?: string };
    return {
      type: "object",
      ...(Object.keys(properties).length ? { properties } : {}),
      ...(required.length ? { required } : {}),
      ...(node.type === "loose_object" ? { "x-kubernetes-preserve-unknown-fields": true } : {}),
      ...(struct.mapType ? { "x-kubernetes-map-type": struct.mapType } : {}),
    };
  }

  /**
   * A member's schema with what Kubernetes puts on the field rather than on its type: the description
   * of apiVersion/kind/metadata and a struct's `retainKeys` patch strategy. Beside a `$ref` these go
   * in an `allOf` wrapper, as kube-openapi writes them in v3.
   */
  private property(field: string, entry: SchemaNode): OpenApiSchema {
    const schema = this.convert(entry);
    const extras: OpenApiSchema = {};
    if (field in TYPE_FIELDS) extras.description = TYPE_FIELDS[field as keyof typeof TYPE_FIELDS];
    if (
      this.unwrapped(entry).pipe?.some((a) => a.type === "metadata" && (a.metadata as { retainKeys?: boolean } | undefined)?.retainKeys)
    ) {
      extras["x-kubernetes-patch-strategy"] = "retainKeys";
    }
    if (!Object.keys(extras).length) return schema;
    return typeof schema.$ref === "string" ? { allOf: [schema], ...extras } : { ...schema, ...extras };
  }

  private unwrapped(node: SchemaNode): SchemaNode {
    return WRAPPERS.has(node.type) ? this.unwrapped(node.wrapped!) : node;
  }

  private array(node: SchemaNode): OpenApiSchema {
    const semantics = listSemantics(node as unknown as AnySchema);
    return {
      type: "array",
      items: this.convert(node.item!),
      ...(semantics?.patchMergeKey ? { "x-kubernetes-patch-merge-key": semantics.patchMergeKey } : {}),
      ...(semantics?.patchStrategy ? { "x-kubernetes-patch-strategy": semantics.patchStrategy } : {}),
      ...(semantics ? { "x-kubernetes-list-type": semantics.listType } : {}),
      ...(semantics?.listMapKeys ? { "x-kubernetes-list-map-keys": [...semantics.listMapKeys] } : {}),
    };
  }
}

/** The names of the components a set of schemas reaches through `$ref`s, themselves included. */
export function referencedComponents(roots: Iterable<string>, components: ReadonlyMap<string, OpenApiSchema>): Set<string> {
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== "object") return;
    for (const [key, member] of Object.entries(value)) {
      if (key === "$ref" && typeof member === "string" && member.startsWith(REF_PREFIX)) enter(member.slice(REF_PREFIX.length));
      else visit(member);
    }
  };
  const enter = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    visit(components.get(name));
  };
  for (const root of roots) enter(root);
  return seen;
}

// ---- custom resources (apiextensions-apiserver pkg/controller/openapi/builder) ----

/** `com.example.stable.v1.CronTab`: the group reversed, then version and kind (builder's ToRESTFriendlyName). */
export function customResourceComponent(group: string, version: string, kind: string): string {
  return [...group.split(".").reverse(), version, kind].join(".");
}

/**
 * A served version's schema as Kubernetes publishes it: the CRD's openAPIV3Schema (orch's `x-orch-*`
 * extensions spelled `x-kubernetes-*`, the names kubectl reads) with apiVersion, kind and an ObjectMeta
 * reference set on top, and the group-version-kind it serves. Without a schema the object keeps anything.
 */
export function customResourceSchema(
  declared: unknown,
  gvk: { group: string; version: string; kind: string },
  extensionPrefix: string,
): OpenApiSchema {
  const schema: OpenApiSchema = declared
    ? (renameExtensions(declared, extensionPrefix) as OpenApiSchema)
    : { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  const properties = { ...((schema.properties as Record<string, OpenApiSchema> | undefined) ?? {}) };
  properties.apiVersion = { description: TYPE_FIELDS.apiVersion, type: "string" };
  properties.kind = { description: TYPE_FIELDS.kind, type: "string" };
  properties.metadata = { description: TYPE_FIELDS.metadata, allOf: [ref(OBJECT_META)] };
  return { ...schema, type: "object", properties, "x-kubernetes-group-version-kind": [gvk] };
}

function renameExtensions(value: unknown, prefix: string): unknown {
  if (Array.isArray(value)) return value.map((v) => renameExtensions(v, prefix));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    const name = prefix !== "x-kubernetes" && key.startsWith(`${prefix}-`) ? `x-kubernetes-${key.slice(prefix.length + 1)}` : key;
    // `properties` and the like hold field names, which are not extensions even when they look like one.
    out[name] =
      key === "properties" || key === "patternProperties" || key === "definitions"
        ? renameKeysBelow(member, prefix)
        : renameExtensions(member, prefix);
  }
  return out;
}

function renameKeysBelow(members: unknown, prefix: string): unknown {
  if (!members || typeof members !== "object" || Array.isArray(members)) return members;
  return Object.fromEntries(Object.entries(members).map(([field, schema]) => [field, renameExtensions(schema, prefix)]));
}

// ---- Swagger 2.0 ----

const V3_ONLY = new Set(["nullable", "oneOf", "anyOf", "not", "x-kubernetes-validations"]);

/**
 * A v3 schema in Swagger 2.0's dialect, as kube-openapi's v2 output has it: `#/definitions/` references
 * without siblings, IntOrString and Quantity as formatted strings (2.0 has no oneOf).
 */
export function toSwaggerV2(schema: unknown, name?: string): unknown {
  if (name === INT_OR_STRING) return { description: (schema as OpenApiSchema).description, type: "string", format: "int-or-string" };
  if (name === QUANTITY) return { description: (schema as OpenApiSchema).description, type: "string" };
  if (Array.isArray(schema)) return schema.map((s) => toSwaggerV2(s));
  if (!schema || typeof schema !== "object") return schema;
  const node = schema as OpenApiSchema;
  const allOf = node.allOf as OpenApiSchema[] | undefined;
  if (allOf?.length === 1 && typeof allOf[0]!.$ref === "string") {
    const { allOf: _a, ...rest } = node;
    return { ...(toSwaggerV2(rest) as object), $ref: (allOf[0]!.$ref as string).replace(REF_PREFIX, "#/definitions/") };
  }
  const out: OpenApiSchema = {};
  for (const [key, member] of Object.entries(node)) {
    if (key === "$ref" && typeof member === "string") out.$ref = member.replace(REF_PREFIX, "#/definitions/");
    else if (key === "properties" || key === "definitions" || key === "patternProperties") {
      out[key] = Object.fromEntries(Object.entries(member as object).map(([k, v]) => [k, toSwaggerV2(v)]));
    } else if (V3_ONLY.has(key)) {
      // Not Swagger 2.0: Kubernetes drops them from v2 as well (an int-or-string field is left untyped).
    } else out[key] = typeof member === "object" ? toSwaggerV2(member) : member;
  }
  return out;
}
