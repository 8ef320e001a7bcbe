// CustomResourceDefinition validation (spec 2.12), as apiextensions-apiserver
// pkg/apis/apiextensions/validation/validation.go does it for apiextensions/v1: names, group, scope,
// versions, structural schemas and their CEL rules, conversion, subresources, printer columns,
// selectable fields, stored versions, and what an update may not change. Paths are Kubernetes' (its
// internal types': `spec.conversion.webhookClientConfig`), extension names the profile's.
import { type CustomResourceDefinition, type ExtensionPrefix, type JSONSchemaProps, type ObjectHeader, schemaExtensions } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  fieldError,
  fieldImmutableErrorMsg,
  isDNS1035Label,
  isDNS1123Subdomain,
  jsonEqual,
  nameIsDNSSubdomain,
} from "@orch/machinery";
import {
  compilePattern,
  resolveSchemaFieldPath,
  schemaHasUnprunedDefaults,
  validateSchemaDefaults,
  validateSchemaRules,
} from "@orch/schema";
import { parseCertificate, pemBlocks } from "@orch/pki";
import { validateWebhookService, validateWebhookUrl } from "../admissionregistration/webhook-validation.js";

type Crd = CustomResourceDefinition;
type Version = Crd["spec"]["versions"][number];

const spec = FieldPath.root("spec");
const printerColumnTypes = ["boolean", "date", "integer", "number", "string"];
const printerColumnFormats = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"];
const openapiTypes = ["array", "boolean", "integer", "number", "object", "string"];
const acceptedConversionReviewVersions = ["v1", "v1beta1"];
const maxSelectableFields = 8;
const maxDeprecationWarningLength = 256;

/** metadata.name: a DNS subdomain that is exactly `<spec.names.plural>.<spec.group>`. */
export function validateCrdName(name: string, prefix: boolean, obj: ObjectHeader): string[] {
  const errs = nameIsDNSSubdomain(name, prefix);
  const s = (obj as { spec?: Crd["spec"] }).spec;
  if (name !== `${s?.names?.plural ?? ""}.${s?.group ?? ""}`) errs.push('must be spec.names.plural+"."+spec.group');
  return errs;
}

/** validateSimpleJSONPath. */
function simpleJSONPath(path: string, at: FieldPath): FieldError[] {
  if (path === "") return [fieldError.invalid(at, path, "must not be empty")];
  if (!path.startsWith(".")) return [fieldError.invalid(at, path, "must be a simple json path starting with .")];
  return [];
}

/** ValidateCustomResourceDefinitionNames (spec.names and status.acceptedNames). */
export function validateNames(names: Partial<Crd["spec"]["names"]>, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const label = (value: string | undefined, field: string, mixedCase: boolean) => {
    if (!value) return;
    const problems = isDNS1035Label(mixedCase ? value.toLowerCase() : value);
    if (problems.length) {
      const detail = mixedCase ? `may have mixed case, but should otherwise match: ${problems.join(",")}` : problems.join(",");
      errs.push(fieldError.invalid(at.child(field), value, detail));
    }
  };
  label(names.plural, "plural", false);
  label(names.singular, "singular", false);
  label(names.kind, "kind", true);
  label(names.listKind, "listKind", true);
  (names.shortNames ?? []).forEach((short, i) => {
    const problems = isDNS1035Label(short);
    if (problems.length) errs.push(fieldError.invalid(at.child("shortNames").index(i), short, problems.join(",")));
  });
  if (names.kind && names.kind === names.listKind)
    errs.push(fieldError.invalid(at.child("listKind"), names.listKind, "kind and listKind may not be the same"));
  (names.categories ?? []).forEach((category, i) => {
    const problems = isDNS1035Label(category);
    if (problems.length) errs.push(fieldError.invalid(at.child("categories").index(i), category, problems.join(",")));
  });
  return errs;
}

/**
 * The rules Kubernetes relaxes on update for CRDs that already broke them (validation.go's
 * requireAtomicSetType, requireMapListKeysMapSetValidation, requirePrunedDefaults): a CRD stored
 * before a rule existed stays updatable. A create always requires all three.
 */
interface SchemaRuleOptions {
  prefix: ExtensionPrefix;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  requirePrunedDefaults: boolean;
  /** An update's old schemas by version name: an unchanged one is spared the per-rule cost limit. */
  oldSchemas?: ReadonlyMap<string, unknown>;
}

const allRequired = (prefix: ExtensionPrefix): SchemaRuleOptions => ({
  prefix,
  requireAtomicSetType: true,
  requireMapListKeysMapSetValidation: true,
  requirePrunedDefaults: true,
});

/** Where a node sits, as specStandardValidatorV3 carries it down the walk. */
interface NodeContext {
  where: "root" | "property" | "items" | "additionalProperties";
  /** Why a default is not allowed here (`in top-level metadata`), undefined where it is. */
  defaultForbidden?: string;
  insideResourceMeta: boolean;
}

const resourceMetaFields = new Set(["apiVersion", "kind", "metadata"]);
const atomicSetItem = "must be atomic as item of a list with x-kubernetes-list-type=set";
const mapKeyNeedsDefault = "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property";

/** validateMapListKeysMapSet: set and map list items never null; map keys required or defaulted, never null. */
function validateMapListKeysMapSet(
  s: JSONSchemaProps,
  at: FieldPath,
  listType: string | undefined,
  keys: readonly string[],
  prefix: string,
) {
  const items = s.items;
  if (!items || Array.isArray(items) || (listType !== "set" && listType !== "map")) return [];
  const errs: FieldError[] = [];
  if (items.nullable)
    errs.push(fieldError.forbidden(at.child("items", "nullable"), `cannot be nullable when ${prefix}-list-type is ${listType}`));
  if (listType !== "map") return errs;
  const required = new Set(items.required ?? []);
  for (const key of keys) {
    const keySchema = items.properties?.[key];
    if (!keySchema) continue;
    const keyAt = at.child("items", "properties").key(key);
    if (!required.has(key) && (keySchema.default === undefined || keySchema.default === null))
      errs.push(fieldError.required(keyAt.child("default"), mapKeyNeedsDefault.replace("x-kubernetes", prefix)));
    if (keySchema.nullable)
      errs.push(fieldError.forbidden(keyAt.child("nullable"), `this property is in ${prefix}-list-map-keys, so it cannot be nullable`));
  }
  return errs;
}

/** The list-type rules of one node (ValidateCustomResourceDefinitionOpenAPISchema). */
function validateListType(s: JSONSchemaProps, at: FieldPath, options: SchemaRuleOptions): FieldError[] {
  const { prefix } = options;
  const errs: FieldError[] = [];
  const ext = schemaExtensions(s as JSONSchemaProps<typeof prefix>, prefix);
  const x = (name: string) => at.child(`${prefix}-${name}`);
  const type = s.type ?? "";
  const listType = ext["list-type"];
  const keys = ext["list-map-keys"] ?? [];
  const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
  if (listType !== undefined && type !== "array") {
    const detail = `must be array if ${prefix}-list-type is specified`;
    errs.push(type === "" ? fieldError.required(at.child("type"), detail) : fieldError.invalid(at.child("type"), type, detail));
  } else if (options.requireAtomicSetType && listType === "set" && items) {
    const itemExt = schemaExtensions(items as JSONSchemaProps<typeof prefix>, prefix);
    const detail = atomicSetItem.replace("x-kubernetes", prefix);
    if (items.type === "array" && itemExt["list-type"] !== undefined && itemExt["list-type"] !== "atomic")
      errs.push(fieldError.invalid(at.child("items", `${prefix}-list-type`), itemExt["list-type"], detail));
    // Kubernetes reports the item's list type (a nil pointer prints "null") here, not its map type.
    if (items.type === "object" && itemExt["map-type"] !== "atomic")
      errs.push(fieldError.invalid(at.child("items", `${prefix}-map-type`), itemExt["list-type"] ?? "null", detail));
  }
  if (listType !== undefined && !["atomic", "set", "map"].includes(listType))
    errs.push(fieldError.notSupported(x("list-type"), listType, ["atomic", "set", "map"]));
  if (keys.length > 0) {
    const detail = `must be map if ${prefix}-list-map-keys is non-empty`;
    if (listType === undefined) errs.push(fieldError.required(x("list-type"), detail));
    else if (listType !== "map") errs.push(fieldError.invalid(x("list-type"), listType, detail));
  }
  if (listType === "map") {
    if (keys.length === 0) errs.push(fieldError.required(x("list-map-keys"), `must not be empty if ${prefix}-list-type is map`));
    if (!s.items) errs.push(fieldError.required(at.child("items"), `must have a schema if ${prefix}-list-type is map`));
    else if (!items)
      errs.push(fieldError.invalid(at.child("items"), s.items, `must only have a single schema if ${prefix}-list-type is map`));
    else if ((items.type ?? "") !== "object")
      errs.push(
        fieldError.invalid(at.child("items", "type"), items.type ?? "", `must be object if parent array's ${prefix}-list-type is map`),
      );
    else {
      const seen = new Set<string>();
      for (const key of keys) {
        const keySchema = items.properties?.[key];
        if (!keySchema) errs.push(fieldError.invalid(x("list-map-keys"), keys, "entries must all be names of item properties"));
        else if (keySchema.type === "array" || keySchema.type === "object")
          // Kubernetes reports the item's type ("object"), not the key's.
          errs.push(
            fieldError.invalid(
              at.child("items", "properties").key(key).child("type"),
              items.type,
              `must be a scalar type if parent array's ${prefix}-list-type is map`,
            ),
          );
        if (seen.has(key)) errs.push(fieldError.invalid(x("list-map-keys"), keys, "must not contain duplicate entries"));
        seen.add(key);
      }
    }
  }
  if (options.requireMapListKeysMapSetValidation) errs.push(...validateMapListKeysMapSet(s, at, listType, keys, prefix));
  return errs;
}

const isIntOrStringAlternatives = (alternatives: readonly JSONSchemaProps[] | undefined) =>
  alternatives?.length === 2 && alternatives.every((a, i) => Object.keys(a).length === 1 && a.type === (i === 0 ? "integer" : "string"));

/**
 * validateNestedValueValidation: inside allOf/anyOf/oneOf/not a schema may only constrain values;
 * what shapes them (types, defaults, nullability, extensions, rules, metadata) must sit outside.
 */
function validateNestedValueValidation(s: JSONSchemaProps | undefined, at: FieldPath, prefix: string, skipAnyOf = false): FieldError[] {
  if (!s) return [];
  const errs = validateValueValidation(s, at, prefix, skipAnyOf);
  errs.push(...validateNestedValueValidation(Array.isArray(s.items) ? undefined : s.items, at.child("items"), prefix));
  for (const [name, prop] of Object.entries(s.properties ?? {}))
    errs.push(...validateNestedValueValidation(prop, at.child("properties").key(name), prefix));
  const ext = schemaExtensions(s as JSONSchemaProps<ExtensionPrefix>, prefix as ExtensionPrefix);
  const forbid = (field: string, detail: string) => errs.push(fieldError.forbidden(at.child(field), detail));
  if (s.type) forbid("type", "must be empty to be structural");
  if (s.additionalProperties !== undefined) forbid("additionalProperties", "must be undefined to be structural");
  if (s.default !== undefined && s.default !== null) forbid("default", "must be undefined to be structural");
  if (s.title) forbid("title", "must be empty to be structural");
  if (s.description) forbid("description", "must be empty to be structural");
  if (s.nullable) forbid("nullable", "must be false to be structural");
  if (ext["preserve-unknown-fields"]) forbid(`${prefix}-preserve-unknown-fields`, "must be false to be structural");
  if (ext["embedded-resource"]) forbid(`${prefix}-embedded-resource`, "must be false to be structural");
  if (ext["int-or-string"]) forbid(`${prefix}-int-or-string`, "must be false to be structural");
  if ((ext["list-map-keys"] ?? []).length) forbid(`${prefix}-list-map-keys`, "must be empty to be structural");
  if (ext["list-type"] !== undefined) forbid(`${prefix}-list-type`, "must be undefined to be structural");
  if (ext["map-type"] !== undefined) forbid(`${prefix}-map-type`, "must be undefined to be structural");
  if ((ext.validations ?? []).length) forbid(`${prefix}-validations`, "must be empty to be structural");
  if (s.properties?.metadata)
    errs.push(fieldError.forbidden(at.child("properties").key("metadata"), "must not be specified in a nested context"));
  return errs;
}

/** validateValueValidation: the junctors of a node, each nested schema checked; int-or-string's anyOf excepted. */
function validateValueValidation(s: JSONSchemaProps, at: FieldPath, prefix: string, skipAnyOf = false): FieldError[] {
  const errs: FieldError[] = [];
  const skipFirstAllOfAnyOf = isIntOrStringAlternatives(s.allOf?.[0]?.anyOf);
  if (!skipAnyOf && !isIntOrStringAlternatives(s.anyOf))
    (s.anyOf ?? []).forEach((sub, i) => errs.push(...validateNestedValueValidation(sub, at.child("anyOf").index(i), prefix)));
  (s.allOf ?? []).forEach((sub, i) =>
    errs.push(...validateNestedValueValidation(sub, at.child("allOf").index(i), prefix, skipFirstAllOfAnyOf && i === 0)),
  );
  (s.oneOf ?? []).forEach((sub, i) => errs.push(...validateNestedValueValidation(sub, at.child("oneOf").index(i), prefix)));
  errs.push(...validateNestedValueValidation(s.not, at.child("not"), prefix));
  return errs;
}

/**
 * validateStructuralCompleteness: a property or items a junctor constrains must also be declared by
 * the structural part of the schema at the same place. Kubernetes checks it from the root's junctors.
 */
function validateCompleteness(v: JSONSchemaProps, s: JSONSchemaProps, sAt: FieldPath, vAt: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...nestedCompleteness(v.not, s, sAt, vAt.child("not")));
  (v.allOf ?? []).forEach((sub, i) => errs.push(...nestedCompleteness(sub, s, sAt, vAt.child("allOf").index(i))));
  (v.anyOf ?? []).forEach((sub, i) => errs.push(...nestedCompleteness(sub, s, sAt, vAt.child("anyOf").index(i))));
  (v.oneOf ?? []).forEach((sub, i) => errs.push(...nestedCompleteness(sub, s, sAt, vAt.child("oneOf").index(i))));
  return errs;
}

function nestedCompleteness(v: JSONSchemaProps | undefined, s: JSONSchemaProps | undefined, sAt: FieldPath, vAt: FieldPath): FieldError[] {
  if (!v) return [];
  if (!s) return [fieldError.required(sAt, `because it is defined in ${vAt}`)];
  const errs = validateCompleteness(v, s, sAt, vAt);
  const single = (items: JSONSchemaProps["items"]) => (Array.isArray(items) ? undefined : items);
  errs.push(...nestedCompleteness(single(v.items), single(s.items), sAt.child("items"), vAt.child("items")));
  for (const [name, prop] of Object.entries(v.properties ?? {})) {
    const structural = s.properties?.[name];
    const propAt = vAt.child("properties").key(name);
    if (!structural) errs.push(fieldError.required(sAt.child("properties").key(name), `because it is defined in ${propAt}`));
    else errs.push(...nestedCompleteness(prop, structural, sAt.child("properties").key(name), propAt));
  }
  return errs;
}

/** Every default in a subtree where none is allowed (the root's metadata, checked apart above). */
function forbiddenDefaults(s: JSONSchemaProps, at: FieldPath, detail: string): FieldError[] {
  const errs = s.default !== undefined && s.default !== null ? [fieldError.forbidden(at.child("default"), detail)] : [];
  for (const [name, prop] of Object.entries(s.properties ?? {}))
    errs.push(...forbiddenDefaults(prop, at.child("properties").key(name), detail));
  if (s.items && !Array.isArray(s.items)) errs.push(...forbiddenDefaults(s.items, at.child("items"), detail));
  if (typeof s.additionalProperties === "object")
    errs.push(...forbiddenDefaults(s.additionalProperties, at.child("additionalProperties"), detail));
  return errs;
}

/** The structural-schema rules (schema/validation.go) and the unsupported JSON Schema features. */
function validateSchemaNode(s: JSONSchemaProps, at: FieldPath, options: SchemaRuleOptions, ctx: NodeContext): FieldError[] {
  const { prefix } = options;
  const { where } = ctx;
  const errs: FieldError[] = [];
  const ext = schemaExtensions(s as JSONSchemaProps<typeof prefix>, prefix);
  const x = (name: string) => at.child(`${prefix}-${name}`);
  const type = s.type ?? "";
  if (type !== "" && !openapiTypes.includes(type)) errs.push(fieldError.notSupported(at.child("type"), type, openapiTypes));
  if (type === "null") errs.push(fieldError.forbidden(at.child("type"), "type cannot be set to null, use nullable as an alternative"));
  if (where === "root" && type !== "object") errs.push(fieldError.invalid(at.child("type"), type, "must be object at the root"));
  if (where === "root" && s.nullable) errs.push(fieldError.forbidden(at.child("nullable"), "nullable cannot be true at the root"));
  if (type === "" && !ext["int-or-string"] && !ext["preserve-unknown-fields"] && !ext["embedded-resource"] && where !== "root") {
    const detail = where === "items" ? "must not be empty for specified array items" : "must not be empty for specified object fields";
    errs.push(fieldError.required(at.child("type"), detail));
  }
  if (s.default !== undefined && s.default !== null && ctx.defaultForbidden !== undefined) {
    errs.push(fieldError.forbidden(at.child("default"), `must not be set${ctx.defaultForbidden ? ` ${ctx.defaultForbidden}` : ""}`));
  }
  if (ext["preserve-unknown-fields"] === false)
    errs.push(fieldError.invalid(x("preserve-unknown-fields"), false, "must be true or undefined"));
  if (ext["embedded-resource"] && type !== "object")
    errs.push(fieldError.invalid(at.child("type"), type, `must be object if ${prefix}-embedded-resource is true`));
  if (ctx.insideResourceMeta && ext["embedded-resource"])
    errs.push(fieldError.forbidden(x("embedded-resource"), "must not be used inside of resource meta"));
  if (s.id) errs.push(fieldError.forbidden(at.child("id"), "id is not supported"));
  if (s.$ref) errs.push(fieldError.forbidden(at.child("$ref"), "$ref is not supported"));
  if (s.patternProperties && Object.keys(s.patternProperties).length)
    errs.push(fieldError.forbidden(at.child("patternProperties"), "patternProperties is not supported"));
  if (s.definitions && Object.keys(s.definitions).length)
    errs.push(fieldError.forbidden(at.child("definitions"), "definitions is not supported"));
  if (s.dependencies) errs.push(fieldError.forbidden(at.child("dependencies"), "dependencies is not supported"));
  if (s.additionalItems !== undefined) errs.push(fieldError.forbidden(at.child("additionalItems"), "additionalItems is not supported"));
  if (s.uniqueItems)
    errs.push(
      fieldError.forbidden(at.child("uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
    );
  if (s.additionalProperties === false)
    errs.push(fieldError.forbidden(at.child("additionalProperties"), "additionalProperties cannot be set to false"));
  if (s.additionalProperties !== undefined && s.additionalProperties !== false && s.properties && Object.keys(s.properties).length) {
    errs.push(fieldError.forbidden(at.child("additionalProperties"), "additionalProperties and properties are mutual exclusive"));
  }
  if (s.additionalProperties !== undefined && where === "root")
    errs.push(fieldError.forbidden(at.child("additionalProperties"), "must not be used at the root"));
  if (s.additionalProperties !== undefined && ext["embedded-resource"])
    errs.push(fieldError.forbidden(at.child("additionalProperties"), `must not be used if ${prefix}-embedded-resource is set`));
  if (s.pattern !== undefined) {
    const compiled = compilePattern(s.pattern);
    if (typeof compiled === "string")
      errs.push(fieldError.invalid(at.child("pattern"), s.pattern, `must be a valid regular expression, but isn't: ${compiled}`));
  }
  errs.push(...validateValueValidation(s, at, prefix));
  if (where === "root") errs.push(...validateCompleteness(s, s, at, at));
  errs.push(...validateListType(s, at, options));
  const mapType = ext["map-type"];
  if (mapType !== undefined) {
    if (!["granular", "atomic"].includes(mapType)) errs.push(fieldError.notSupported(x("map-type"), mapType, ["granular", "atomic"]));
    else if (type !== "object") errs.push(fieldError.invalid(x("map-type"), mapType, "must only be used if type is object"));
  }
  if (where === "root" && s.properties?.metadata) {
    const metadata = s.properties.metadata;
    const metaAt = at.child("properties").key("metadata");
    if ((metadata.type ?? "object") !== "object") errs.push(fieldError.invalid(metaAt.child("type"), metadata.type, "must be object"));
    const others = Object.keys(metadata.properties ?? {}).filter((k) => k !== "name" && k !== "generateName");
    if (others.length)
      errs.push(
        fieldError.forbidden(metaAt, "must not specify anything other than name and generateName, but metadata is implicitly specified"),
      );
  }
  const resource = where === "root" || ext["embedded-resource"] === true;
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    const propAt = at.child("properties").key(name);
    const child: NodeContext = { where: "property", insideResourceMeta: ctx.insideResourceMeta, defaultForbidden: ctx.defaultForbidden };
    if (resource && resourceMetaFields.has(name)) {
      child.insideResourceMeta = true;
      if (where === "root") child.defaultForbidden = `in top-level ${name}`;
    }
    // The root's metadata is ObjectMeta's: only its defaults are checked here, the rest above.
    if (where === "root" && name === "metadata") {
      errs.push(...forbiddenDefaults(prop, propAt, `must not be set ${child.defaultForbidden}`));
      continue;
    }
    errs.push(...validateSchemaNode(prop, propAt, options, child));
  }
  if (Array.isArray(s.items)) errs.push(fieldError.forbidden(at.child("items"), "items must be a schema object and not an array"));
  else if (s.items) errs.push(...validateSchemaNode(s.items, at.child("items"), options, { ...ctx, where: "items" }));
  else if (type === "array") errs.push(fieldError.required(at.child("items"), "must be specified"));
  if (typeof s.additionalProperties === "object") {
    const child: NodeContext = { ...ctx, where: "additionalProperties" };
    // Pruning a defaulted map value inside metadata would be ambiguous.
    if (ctx.insideResourceMeta) child.defaultForbidden = "inside additionalProperties applying to object metadata";
    errs.push(...validateSchemaNode(s.additionalProperties, at.child("additionalProperties"), options, child));
  }
  return errs;
}

function validateSubresources(subresources: Version["subresources"], at: FieldPath): FieldError[] {
  const scale = subresources?.scale;
  if (!scale) return [];
  const errs: FieldError[] = [];
  const under = (path: string, field: string, prefixes: string[], detail: string) => {
    const fieldAt = at.child(`scale.${field}`);
    const problems = simpleJSONPath(path, fieldAt);
    if (problems.length) errs.push(...problems);
    else if (!prefixes.some((p) => path.startsWith(p))) errs.push(fieldError.invalid(fieldAt, path, detail));
  };
  if (!scale.specReplicasPath) errs.push(fieldError.required(at.child("scale.specReplicasPath")));
  else under(scale.specReplicasPath, "specReplicasPath", [".spec."], "should be a json path under .spec");
  if (!scale.statusReplicasPath) errs.push(fieldError.required(at.child("scale.statusReplicasPath")));
  else under(scale.statusReplicasPath, "statusReplicasPath", [".status."], "should be a json path under .status");
  if (scale.labelSelectorPath)
    under(scale.labelSelectorPath, "labelSelectorPath", [".spec.", ".status."], "should be a json path under either .spec or .status");
  return errs;
}

function validatePrinterColumn(column: NonNullable<Version["additionalPrinterColumns"]>[number], at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!column.name) errs.push(fieldError.required(at.child("name")));
  const mustBe = `must be one of ${printerColumnTypes.join(",")}`;
  if (!column.type) errs.push(fieldError.required(at.child("type"), mustBe));
  else if (!printerColumnTypes.includes(column.type)) errs.push(fieldError.invalid(at.child("type"), column.type, mustBe));
  if (column.format && !printerColumnFormats.includes(column.format)) {
    errs.push(fieldError.invalid(at.child("format"), column.format, `must be one of ${printerColumnFormats.join(",")}`));
  }
  if (!column.jsonPath) errs.push(fieldError.required(at.child("jsonPath")));
  else errs.push(...simpleJSONPath(column.jsonPath, at.child("jsonPath")));
  return errs;
}

function validateSelectableFields(version: Version, at: FieldPath, prefix: ExtensionPrefix): FieldError[] {
  const fields = version.selectableFields ?? [];
  if (fields.length === 0) return [];
  const schema = version.schema?.openAPIV3Schema;
  if (!schema) return [fieldError.invalid(at, "", "selectableFields may only be set when version.schema.openAPIV3Schema is not included")];
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const pathAt = at.index(i).child("jsonPath");
    if (!f.jsonPath) {
      errs.push(fieldError.required(pathAt));
      return;
    }
    const resolved = resolveSchemaFieldPath(schema, { extensionPrefix: prefix }, f.jsonPath);
    if ("error" in resolved) {
      errs.push(fieldError.invalid(pathAt, f.jsonPath, `is an invalid path: ${resolved.error}`));
      return;
    }
    if (resolved.path === "metadata" || resolved.path.startsWith("metadata.")) {
      errs.push(fieldError.invalid(pathAt, f.jsonPath, "must not point to fields in metadata"));
    }
    if (!["string", "boolean", "integer"].includes(resolved.type)) {
      errs.push(
        fieldError.invalid(
          pathAt,
          f.jsonPath,
          "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
        ),
      );
    }
    if (unique.has(resolved.path)) errs.push(fieldError.duplicate(pathAt, f.jsonPath));
    else unique.add(resolved.path);
  });
  if (unique.size > maxSelectableFields) errs.push(fieldError.tooMany(at, unique.size, maxSelectableFields));
  return errs;
}

function validateVersion(version: Version, at: FieldPath, options: SchemaRuleOptions): FieldError[] {
  const { prefix } = options;
  const errs: FieldError[] = [];
  const problems = isDNS1035Label(version.name);
  if (problems.length) errs.push(fieldError.invalid(at.child("name"), version.name, problems.join(",")));
  const schema = version.schema?.openAPIV3Schema;
  const schemaAt = at.child("schema", "openAPIV3Schema");
  if (!schema) errs.push(fieldError.required(schemaAt, "schemas are required"));
  else {
    const structural = validateSchemaNode(schema, schemaAt, options, { where: "root", insideResourceMeta: false });
    errs.push(...structural);
    // As Kubernetes: defaults and rules are only checked against a schema that is structural.
    if (structural.length === 0) {
      const defaults = validateSchemaDefaults(
        schema,
        { extensionPrefix: prefix, requirePrunedDefaults: options.requirePrunedDefaults },
        schemaAt,
      );
      errs.push(...defaults);
      // validation.go suppressExpressionCostForUnchangedSchema: a version whose schema an update leaves
      // as it was keeps its rules even if one is estimated over the per-rule limit (not the total).
      const unchanged = options.oldSchemas?.has(version.name) && jsonEqual(options.oldSchemas.get(version.name), schema);
      if (defaults.length === 0) {
        errs.push(...validateSchemaRules(schema, { extensionPrefix: prefix }, schemaAt, { suppressPerExpressionCost: !!unchanged }));
      }
    }
  }
  errs.push(...validateSubresources(version.subresources, at.child("subresources")));
  (version.additionalPrinterColumns ?? []).forEach((c, i) =>
    errs.push(...validatePrinterColumn(c, at.child("additionalPrinterColumns").index(i))),
  );
  errs.push(...validateSelectableFields(version, at.child("selectableFields"), prefix));
  if (version.deprecationWarning !== undefined) {
    const warningAt = at.child("deprecationWarning");
    if (!version.deprecated)
      errs.push(fieldError.invalid(warningAt, version.deprecationWarning, "can only be set for deprecated versions"));
    else if (version.deprecationWarning.length > maxDeprecationWarningLength)
      errs.push(fieldError.tooLong(warningAt, "", maxDeprecationWarningLength));
    else if (/[^\P{C}\t]/u.test(version.deprecationWarning))
      errs.push(fieldError.invalid(warningAt, version.deprecationWarning, "must only contain printable UTF-8 characters"));
  }
  return errs;
}

/** Options of validateCustomResourceConversion that depend on the stored definition (an update's old one). */
interface ConversionOptions {
  /** conversionReviewVersions must name one orch speaks (unless the old definition already named none). */
  requireRecognizedReviewVersion: boolean;
  /** A caBundle that is not PEM certificates is let through (a create, or an old definition not serving yet). */
  allowInvalidCABundle: boolean;
}

/** webhook.ValidateCABundle: at least one PEM certificate Go's CertPool.AppendCertsFromPEM would take. */
function validateCABundle(bundle: string, at: FieldPath): FieldError[] {
  const pem = Buffer.from(bundle, "base64").toString("latin1");
  const certificates = pemBlocks(pem).filter((b) => b.type === "CERTIFICATE" && Object.keys(b.headers).length === 0);
  const parses = certificates.some((b) => {
    try {
      parseCertificate(b.der);
      return true;
    } catch {
      return false;
    }
  });
  return parses ? [] : [fieldError.invalid(at, bundle, "unable to load root certificates: unable to parse bytes as PEM block")];
}

/** validateConversionReviewVersions. */
function validateConversionReviewVersions(versions: readonly string[], requireRecognized: boolean, at: FieldPath): FieldError[] {
  if (versions.length === 0) return [fieldError.required(at)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldError.invalid(at.index(i), v, "duplicate version"));
      return;
    }
    seen.add(v);
    for (const problem of isDNS1035Label(v)) errs.push(fieldError.invalid(at.index(i), v, problem));
  });
  if (requireRecognized && !versions.some((v) => acceptedConversionReviewVersions.includes(v))) {
    errs.push(fieldError.invalid(at, versions, `must include at least one of ${acceptedConversionReviewVersions.join(", ")}`));
  }
  return errs;
}

/**
 * validateCustomResourceConversion, with the paths of Kubernetes' internal types
 * (`spec.conversion.webhookClientConfig`, `spec.conversion.conversionReviewVersions`).
 */
function validateConversion(conversion: Crd["spec"]["conversion"], at: FieldPath, options: ConversionOptions): FieldError[] {
  const errs: FieldError[] = [];
  const strategies = ["None", "Webhook"];
  if (!conversion.strategy) errs.push(fieldError.required(at.child("strategy")));
  else if (!strategies.includes(conversion.strategy))
    errs.push(fieldError.notSupported(at.child("strategy"), conversion.strategy, strategies));
  const config = conversion.webhook?.clientConfig;
  const reviewVersions = conversion.webhook?.conversionReviewVersions ?? [];
  if (conversion.strategy === "Webhook") {
    const configAt = at.child("webhookClientConfig");
    if (!config) errs.push(fieldError.required(configAt, "required when strategy is set to Webhook"));
    else {
      if ((config.url === undefined) === (config.service === undefined))
        errs.push(fieldError.required(configAt, "exactly one of url or service is required"));
      else if (config.url !== undefined) errs.push(...validateWebhookUrl(config.url, configAt.child("url")));
      else if (config.service) errs.push(...validateWebhookService(config.service, configAt.child("service")));
      if (config.caBundle && !options.allowInvalidCABundle) errs.push(...validateCABundle(config.caBundle, configAt.child("caBundle")));
    }
    errs.push(
      ...validateConversionReviewVersions(reviewVersions, options.requireRecognizedReviewVersion, at.child("conversionReviewVersions")),
    );
  } else {
    if (config) errs.push(fieldError.forbidden(at.child("webhookClientConfig"), "should not be set when strategy is not set to Webhook"));
    if (reviewVersions.length)
      errs.push(fieldError.forbidden(at.child("conversionReviewVersions"), "should not be set when strategy is not set to Webhook"));
  }
  return errs;
}

/** A create: every rule, except that a caBundle is not checked (the CRD serves nothing yet). */
const conversionOnCreate: ConversionOptions = { requireRecognizedReviewVersion: true, allowInvalidCABundle: true };

/**
 * An update ratchets: a review version list that already named none orch speaks may stay so, and a
 * caBundle is checked once the old definition is established with a valid (or no) bundle.
 */
function conversionOnUpdate(old: Crd): ConversionOptions {
  const oldVersions = old.spec.conversion?.webhook?.conversionReviewVersions ?? [];
  const oldBundle = old.spec.conversion?.webhook?.clientConfig?.caBundle;
  return {
    requireRecognizedReviewVersion: oldVersions.length === 0 || oldVersions.some((v) => acceptedConversionReviewVersions.includes(v)),
    allowInvalidCABundle: !isEstablished(old) || (!!oldBundle && validateCABundle(oldBundle, FieldPath.root("caBundle")).length > 0),
  };
}

/** ValidateCustomResourceDefinitionSpec (apiextensions/v1 options: schemas required and structural). */
function validateSpec(s: Crd["spec"], options: SchemaRuleOptions, conversion: ConversionOptions): FieldError[] {
  const { prefix } = options;
  const errs: FieldError[] = [];
  if (!s.group) errs.push(fieldError.required(spec.child("group")));
  else {
    const problems = isDNS1123Subdomain(s.group);
    if (problems.length) errs.push(fieldError.invalid(spec.child("group"), s.group, problems.join(",")));
    else if (s.group.split(".").length < 2)
      errs.push(fieldError.invalid(spec.child("group"), s.group, "should be a domain with at least one dot"));
  }
  const scopes = ["Cluster", "Namespaced"];
  if (!s.scope) errs.push(fieldError.required(spec.child("scope")));
  else if (!scopes.includes(s.scope)) errs.push(fieldError.notSupported(spec.child("scope"), s.scope, scopes));
  const versionsAt = spec.child("versions");
  const names = new Set<string>();
  let unique = true;
  let storage = 0;
  s.versions.forEach((version, i) => {
    if (version.storage) storage++;
    if (names.has(version.name)) unique = false;
    names.add(version.name);
    errs.push(...validateVersion(version, versionsAt.index(i), options));
  });
  if (s.versions.length === 0)
    errs.push(fieldError.invalid(versionsAt, s.versions, "must have exactly one version marked as storage version"));
  else {
    if (!unique) errs.push(fieldError.invalid(versionsAt, s.versions, "must contain unique version names"));
    if (storage !== 1) errs.push(fieldError.invalid(versionsAt, s.versions, "must have exactly one version marked as storage version"));
  }
  const namesAt = spec.child("names");
  if (!s.names.plural) errs.push(fieldError.required(namesAt.child("plural")));
  if (!s.names.singular) errs.push(fieldError.required(namesAt.child("singular")));
  if (!s.names.kind) errs.push(fieldError.required(namesAt.child("kind")));
  if (!s.names.listKind) errs.push(fieldError.required(namesAt.child("listKind")));
  errs.push(...validateNames(s.names, namesAt));
  if (s.conversion.strategy !== "None" && s.preserveUnknownFields) {
    errs.push(
      fieldError.invalid(spec.child("conversion", "strategy"), s.conversion.strategy, "must be None if spec.preserveUnknownFields is true"),
    );
  }
  errs.push(...validateConversion(s.conversion, spec.child("conversion"), conversion));
  if (s.preserveUnknownFields) {
    errs.push(
      fieldError.invalid(
        spec.child("preserveUnknownFields"),
        true,
        `cannot set to true, set ${prefix}-preserve-unknown-fields to true in spec.versions[*].schema instead`,
      ),
    );
  }
  return errs;
}

/** ValidateCustomResourceDefinitionStoredVersions: non-empty, each in spec.versions, the storage one included. */
export function validateStoredVersions(stored: readonly string[] | null | undefined, versions: readonly Version[]): FieldError[] {
  const at = FieldPath.root("status", "storedVersions");
  if (!stored?.length) return [fieldError.invalid(at, stored ?? [], "must have at least one stored version")];
  const errs: FieldError[] = [];
  for (const v of versions) {
    if (v.storage && !stored.includes(v.name)) errs.push(fieldError.invalid(at, v, `must have the storage version ${v.name}`));
  }
  stored.forEach((name, i) => {
    if (!versions.some((v) => v.name === name)) errs.push(fieldError.invalid(at.index(i), name, "must appear in spec.versions"));
  });
  return errs;
}

/** A new CustomResourceDefinition. */
export function validateCrd(crd: Crd, prefix: ExtensionPrefix): FieldError[] {
  return [
    ...validateSpec(crd.spec, allRequired(prefix), conversionOnCreate),
    ...validateNames(crd.status.acceptedNames ?? {}, FieldPath.root("status", "acceptedNames")),
    ...validateStoredVersions(crd.status.storedVersions, crd.spec.versions),
  ];
}

/**
 * The options of an update: a rule the old definition already broke is not required of the new one
 * (requireAtomicSetType, requireMapListKeysMapSetValidation, requirePrunedDefaults in validation.go).
 */
function ratchetedOptions(old: Crd, prefix: ExtensionPrefix): SchemaRuleOptions {
  const oldSchemas = old.spec.versions.flatMap((v) => (v.schema?.openAPIV3Schema ? [v.schema.openAPIV3Schema] : []));
  const oldErrors = oldSchemas.flatMap((schema) =>
    validateSchemaNode(schema, FieldPath.root(), allRequired(prefix), { where: "root", insideResourceMeta: false }),
  );
  const broke = (test: (e: FieldError) => boolean) => oldErrors.some(test);
  return {
    prefix,
    requireAtomicSetType: !broke((e) => e.detail === atomicSetItem.replace("x-kubernetes", prefix)),
    requireMapListKeysMapSetValidation: !broke(
      (e) => e.detail.startsWith("cannot be nullable when") || e.detail.startsWith(`this property is in ${prefix}-list-map-keys`),
    ),
    requirePrunedDefaults: !oldSchemas.some((schema) => schemaHasUnprunedDefaults(schema, { extensionPrefix: prefix })),
    oldSchemas: new Map(old.spec.versions.flatMap((v) => (v.schema?.openAPIV3Schema ? [[v.name, v.schema.openAPIV3Schema] as const] : []))),
  };
}

const isEstablished = (crd: Crd) => (crd.status.conditions ?? []).some((c) => c.type === "Established" && c.status === "True");

/**
 * An update: everything a create checks; group and names.plural never change (they are the object's
 * name); scope and names.kind not once the old definition is established (its objects are stored).
 */
export function validateCrdUpdate(crd: Crd, old: Crd, prefix: ExtensionPrefix): FieldError[] {
  const errs = validateSpec(crd.spec, ratchetedOptions(old, prefix), conversionOnUpdate(old));
  const immutable = (value: unknown, oldValue: unknown, at: FieldPath) => {
    if (!jsonEqual(value, oldValue)) errs.push(fieldError.invalid(at, value, fieldImmutableErrorMsg));
  };
  if (isEstablished(old)) {
    immutable(crd.spec.scope, old.spec.scope, spec.child("scope"));
    immutable(crd.spec.names.kind, old.spec.names.kind, spec.child("names", "kind"));
  }
  immutable(crd.spec.group, old.spec.group, spec.child("group"));
  immutable(crd.spec.names.plural, old.spec.names.plural, spec.child("names", "plural"));
  errs.push(...validateNames(crd.status.acceptedNames ?? {}, FieldPath.root("status", "acceptedNames")));
  errs.push(...validateStoredVersions(crd.status.storedVersions, crd.spec.versions));
  return errs;
}

/** The /status endpoint: accepted names (ValidateUpdateCustomResourceDefinitionStatus). */
export function validateCrdStatus(crd: Crd): FieldError[] {
  return validateNames(crd.status.acceptedNames ?? {}, FieldPath.root("status", "acceptedNames"));
}

/** PrepareForCreate/PrepareForUpdate: the storage version is recorded in status.storedVersions. */
export function recordStorageVersion(crd: Crd): void {
  const storage = crd.spec.versions.find((v) => v.storage);
  if (!storage) return;
  const stored = crd.status.storedVersions ?? [];
  if (!stored.includes(storage.name)) crd.status.storedVersions = [...stored, storage.name];
}
