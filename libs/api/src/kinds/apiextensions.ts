// apiextensions.{api_domain}/v1 CustomResourceDefinition. Mirrors
// k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go and types_jsonschema.go; defaults
// from defaults.go there.
//
// JSONSchemaProps carries seven vendor extensions. Kubernetes names them `x-kubernetes-*`; orch's own
// naming is `x-orch-*`. A naming profile (the extension prefix) picks which names a CRD schema
// decodes; names of the other profile are unknown fields there and are pruned like any other.
import { rfc3339 } from "@orch/machinery";
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, bool, bytes, float, int32, int64, mapList, mapOf, opt, rawJson, str } from "../schema.js";
import { ConditionFields, mapListReplacedOnPatch } from "./fields.js";
import { listOf } from "./meta-list.js";

export const extensionPrefixes = ["x-kubernetes", "x-orch"] as const;
export type ExtensionPrefix = (typeof extensionPrefixes)[number];

// ---------------------------------------------------------------------------------------------
// JSONSchemaProps
// ---------------------------------------------------------------------------------------------

export const ValidationRule = v.object({
  rule: str(),
  message: opt(str()),
  messageExpression: opt(str()),
  reason: opt(str()),
  fieldPath: opt(str()),
  optionalOldSelf: opt(bool()),
});
export type ValidationRule = v.InferOutput<typeof ValidationRule>;

export const ExternalDocumentation = v.object({
  description: opt(str()),
  url: opt(str()),
});

/** The extension fields, by their name without the prefix (`list-type` is `x-kubernetes-list-type`). */
const extensionEntries = {
  "preserve-unknown-fields": opt(bool()),
  "embedded-resource": opt(bool()),
  "int-or-string": opt(bool()),
  "list-map-keys": opt(atomicList(str())),
  "list-type": opt(str()),
  "map-type": opt(str()),
  validations: opt(mapList(ValidationRule, ["rule"])),
};
type ExtensionEntries = typeof extensionEntries;
export type ExtensionName = keyof ExtensionEntries;
export const extensionNames = Object.keys(extensionEntries) as ExtensionName[];

/** The extension values of one schema node, independent of the naming profile. */
export const SchemaExtensions = v.object(extensionEntries);
export type SchemaExtensions = v.InferOutput<typeof SchemaExtensions>;

type PrefixedEntries<P extends ExtensionPrefix> = {
  [K in ExtensionName as `${P}-${K}`]: ExtensionEntries[K];
};
/** The extension fields of a JSONSchemaProps under naming profile P, e.g. `x-orch-list-type`. */
export type PrefixedExtensions<P extends ExtensionPrefix> = {
  [K in ExtensionName as `${P}-${K}`]?: SchemaExtensions[K];
};

const prefixed = <P extends ExtensionPrefix>(prefix: P): PrefixedEntries<P> =>
  Object.fromEntries(Object.entries(extensionEntries).map(([name, schema]) => [`${prefix}-${name}`, schema])) as PrefixedEntries<P>;

/** The non-recursive fields of JSONSchemaProps. */
const scalarEntries = {
  id: opt(str()),
  $schema: opt(str()),
  $ref: opt(str()),
  description: opt(str()),
  type: opt(str()),
  format: opt(str()),
  title: opt(str()),
  default: opt(rawJson()),
  maximum: opt(float()),
  exclusiveMaximum: opt(bool()),
  minimum: opt(float()),
  exclusiveMinimum: opt(bool()),
  maxLength: opt(int64()),
  minLength: opt(int64()),
  pattern: opt(str()),
  maxItems: opt(int64()),
  minItems: opt(int64()),
  uniqueItems: opt(bool()),
  multipleOf: opt(float()),
  enum: opt(atomicList(rawJson())),
  maxProperties: opt(int64()),
  minProperties: opt(int64()),
  required: opt(atomicList(str())),
  externalDocs: opt(ExternalDocumentation),
  example: opt(rawJson()),
  nullable: opt(bool()),
};
type ScalarFields = v.InferOutput<v.ObjectSchema<typeof scalarEntries, undefined>>;

/** The recursive fields of JSONSchemaProps; valibot cannot infer a recursive type, so it is written here. */
interface RecursiveFields<P extends ExtensionPrefix> {
  /** JSONSchemaPropsOrArray: one schema for every item, or one per position. */
  items?: JSONSchemaProps<P> | JSONSchemaProps<P>[];
  allOf?: JSONSchemaProps<P>[];
  oneOf?: JSONSchemaProps<P>[];
  anyOf?: JSONSchemaProps<P>[];
  not?: JSONSchemaProps<P>;
  properties?: Record<string, JSONSchemaProps<P>>;
  /** JSONSchemaPropsOrBool: `true` allows anything, `false` nothing. */
  additionalProperties?: boolean | JSONSchemaProps<P>;
  patternProperties?: Record<string, JSONSchemaProps<P>>;
  /** JSONSchemaPropsOrStringArray values. */
  dependencies?: Record<string, JSONSchemaProps<P> | string[]>;
  additionalItems?: boolean | JSONSchemaProps<P>;
  definitions?: Record<string, JSONSchemaProps<P>>;
}

/** A JSON Schema (draft 4 subset) node with the extension fields of naming profile P. */
export type JSONSchemaProps<P extends ExtensionPrefix = ExtensionPrefix> = ScalarFields & RecursiveFields<P> & PrefixedExtensions<P>;

const jsonSchemaPropsEntries = <P extends ExtensionPrefix>(self: v.GenericSchema<JSONSchemaProps<P>>, prefix: P) => {
  const schemaList = atomicList(self);
  return {
    ...scalarEntries,
    items: opt(v.union([self, schemaList])),
    allOf: opt(schemaList),
    oneOf: opt(schemaList),
    anyOf: opt(schemaList),
    not: opt(self),
    properties: opt(mapOf(self)),
    additionalProperties: opt(v.union([bool(), self])),
    patternProperties: opt(mapOf(self)),
    dependencies: opt(mapOf(v.union([self, atomicList(str())]))),
    additionalItems: opt(v.union([bool(), self])),
    definitions: opt(mapOf(self)),
    ...prefixed(prefix),
  };
};

// The written type and what the entries decode must agree for each concrete profile (TypeScript
// cannot relate them for a generic P, hence the cast in jsonSchemaPropsFor).
type Decoded<P extends ExtensionPrefix> =
  ReturnType<typeof jsonSchemaPropsEntries<P>> extends infer E extends v.ObjectEntries
    ? v.InferOutput<v.ObjectSchema<E, undefined>>
    : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const profilesAgree: Same<Decoded<"x-kubernetes">, JSONSchemaProps<"x-kubernetes">> & Same<Decoded<"x-orch">, JSONSchemaProps<"x-orch">> =
  true;
void profilesAgree;

function jsonSchemaPropsFor<P extends ExtensionPrefix>(prefix: P): v.GenericSchema<JSONSchemaProps<P>> {
  let schema: v.GenericSchema<JSONSchemaProps<P>>;
  const self = v.lazy((): v.GenericSchema<JSONSchemaProps<P>> => schema);
  schema = v.object(jsonSchemaPropsEntries(self, prefix)) as unknown as v.GenericSchema<JSONSchemaProps<P>>;
  return schema;
}

/** Reads the extension fields of one schema node under a naming profile. */
export function schemaExtensions<P extends ExtensionPrefix>(props: JSONSchemaProps<P>, prefix: P): SchemaExtensions {
  const fields = props as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of extensionNames) {
    const value = fields[`${prefix}-${name}`];
    if (value !== undefined) out[name] = value;
  }
  return out as SchemaExtensions;
}

// ---------------------------------------------------------------------------------------------
// The parts of a CustomResourceDefinition that do not depend on the naming profile
// ---------------------------------------------------------------------------------------------

export const CustomResourceDefinitionNames = v.object({
  plural: str(),
  singular: opt(str()),
  shortNames: opt(atomicList(str())),
  kind: str(),
  listKind: opt(str()),
  categories: opt(atomicList(str())),
});
export type CustomResourceDefinitionNames = v.InferOutput<typeof CustomResourceDefinitionNames>;

export const ServiceReference = v.object({
  namespace: str(),
  name: str(),
  path: opt(str()),
  port: opt(int32(), 443),
});

export const WebhookClientConfig = v.object({
  url: opt(str()),
  service: opt(ServiceReference),
  caBundle: opt(bytes()),
});

export const WebhookConversion = v.object({
  clientConfig: opt(WebhookClientConfig),
  conversionReviewVersions: atomicList(str()),
});

export const CustomResourceConversion = v.object({
  strategy: str(),
  webhook: opt(WebhookConversion),
});

export const CustomResourceSubresourceStatus = v.object({});

export const CustomResourceSubresourceScale = v.object({
  specReplicasPath: str(),
  statusReplicasPath: str(),
  labelSelectorPath: opt(str()),
});

export const CustomResourceSubresources = v.object({
  status: opt(CustomResourceSubresourceStatus),
  scale: opt(CustomResourceSubresourceScale),
});

export const CustomResourceColumnDefinition = v.object({
  name: str(),
  type: str(),
  format: opt(str()),
  description: opt(str()),
  priority: opt(int32()),
  jsonPath: str(),
});

export const SelectableField = v.object({
  jsonPath: str(),
});

export const CustomResourceDefinitionCondition = v.pick(ConditionFields, [
  "type",
  "status",
  "lastTransitionTime",
  "reason",
  "message",
  "observedGeneration",
]);

// conditions and storedVersions have no omitempty: Go clients send null for them.
export const CustomResourceDefinitionStatus = v.object({
  conditions: opt(v.nullable(mapListReplacedOnPatch(CustomResourceDefinitionCondition, ["type"]))),
  acceptedNames: opt(CustomResourceDefinitionNames),
  storedVersions: opt(v.nullable(atomicList(str()))),
  observedGeneration: opt(int64()),
});

// ---------------------------------------------------------------------------------------------
// Profile-dependent schemas
// ---------------------------------------------------------------------------------------------

function buildCrdSchemas<P extends ExtensionPrefix>(prefix: P) {
  const JSONSchemaProps = jsonSchemaPropsFor(prefix);
  const CustomResourceValidation = v.object({
    openAPIV3Schema: opt(JSONSchemaProps),
  });
  const CustomResourceDefinitionVersion = v.object({
    name: str(),
    served: bool(),
    storage: bool(),
    deprecated: opt(bool()),
    deprecationWarning: opt(str()),
    schema: opt(CustomResourceValidation),
    subresources: opt(CustomResourceSubresources),
    additionalPrinterColumns: opt(atomicList(CustomResourceColumnDefinition)),
    selectableFields: opt(atomicList(SelectableField)),
  });
  const CustomResourceDefinitionSpec = v.object({
    group: str(),
    names: CustomResourceDefinitionNames,
    scope: str(),
    versions: atomicList(CustomResourceDefinitionVersion),
    conversion: opt(CustomResourceConversion, { strategy: "None" }),
    preserveUnknownFields: opt(bool()),
  });
  const CustomResourceDefinition = objectOf({
    spec: CustomResourceDefinitionSpec,
    status: opt(CustomResourceDefinitionStatus, {}),
  });
  return {
    prefix,
    JSONSchemaProps,
    CustomResourceValidation,
    CustomResourceDefinitionVersion,
    CustomResourceDefinitionSpec,
    CustomResourceDefinition,
    CustomResourceDefinitionList: listOf(CustomResourceDefinition),
  };
}

export type CrdSchemas<P extends ExtensionPrefix> = ReturnType<typeof buildCrdSchemas<P>>;

/** The CRD schemas of both naming profiles, built once. */
export const crdSchemas: { [P in ExtensionPrefix]: CrdSchemas<P> } = {
  "x-kubernetes": buildCrdSchemas("x-kubernetes"),
  "x-orch": buildCrdSchemas("x-orch"),
};

/** The CustomResourceDefinition schemas (and their parts) for a naming profile. */
export const crdSchemaFor = <P extends ExtensionPrefix>(extensionPrefix: P): CrdSchemas<P> => crdSchemas[extensionPrefix] as CrdSchemas<P>;

export type CustomResourceDefinition<P extends ExtensionPrefix = ExtensionPrefix> = v.InferOutput<
  CrdSchemas<P>["CustomResourceDefinition"]
>;
export type CustomResourceDefinitionSpec<P extends ExtensionPrefix = ExtensionPrefix> = v.InferOutput<
  CrdSchemas<P>["CustomResourceDefinitionSpec"]
>;
export type CustomResourceDefinitionVersion<P extends ExtensionPrefix = ExtensionPrefix> = v.InferOutput<
  CrdSchemas<P>["CustomResourceDefinitionVersion"]
>;

/**
 * SetDefaults_CustomResourceDefinition: `names.singular` is the lower-cased kind, `names.listKind` is
 * `<kind>List`, conversion is `None`, and `status.storedVersions` starts with the storage version.
 */
export function defaultCustomResourceDefinition<P extends ExtensionPrefix>(crd: CustomResourceDefinition<P>): void {
  const names = crd.spec.names;
  if (!names.singular) names.singular = names.kind.toLowerCase();
  if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  if (!crd.spec.conversion.strategy) crd.spec.conversion.strategy = "None";
  if (!crd.status.storedVersions?.length) {
    const storage = crd.spec.versions.find((version) => version.storage);
    if (storage) crd.status.storedVersions = [storage.name];
  }
}

// ---------------------------------------------------------------------------------------------
// Conditions, as apiextensions' apihelpers handles them (used by the apiserver and the crd-controller)
// ---------------------------------------------------------------------------------------------

export type CustomResourceDefinitionConditionValue = NonNullable<NonNullable<CustomResourceDefinition["status"]["conditions"]>>[number];

export const findCrdCondition = (crd: CustomResourceDefinition, type: string): CustomResourceDefinitionConditionValue | undefined =>
  crd.status?.conditions?.find((c) => c.type === type);

export const crdConditionTrue = (crd: CustomResourceDefinition, type: string): boolean => findCrdCondition(crd, type)?.status === "True";

/**
 * SetCRDCondition: replaces the condition of that type (its transition time moves only when the status
 * changes) or appends it.
 */
export function setCrdCondition(
  crd: CustomResourceDefinition,
  condition: Omit<CustomResourceDefinitionConditionValue, "lastTransitionTime">,
): void {
  crd.status ??= {};
  const conditions = (crd.status.conditions ??= []);
  const existing = conditions.find((c) => c.type === condition.type);
  if (!existing) {
    conditions.push({ ...condition, lastTransitionTime: rfc3339() });
    return;
  }
  if (existing.status !== condition.status || !existing.lastTransitionTime) existing.lastTransitionTime = rfc3339();
  Object.assign(existing, condition);
}
