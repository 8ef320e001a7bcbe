// The structural-schema and default checks a CRD's schema gets, ported from Kubernetes 1.32's
// k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation/validation_test.go (case names
// quoted) and pkg/apiserver/schema/validation.go; the schemas sit under `spec.properties[x]` since a
// v1 CRD's root must be an object. Each expectation is Kubernetes' field path and message.
import type { CustomResourceDefinition, JSONSchemaProps } from "@orch/api";
import { fieldErrorText } from "@orch/machinery";
import { describe, expect, it } from "vitest";
import { validateCrd, validateCrdUpdate } from "../src/kinds/apiextensions/crd-validation.js";

type Schema = JSONSchemaProps<"x-kubernetes">;
const at = "spec.versions[0].schema.openAPIV3Schema";
const x = `${at}.properties[spec].properties[x]`;

function crdWithRoot(root: Schema): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.com" },
    spec: {
      group: "example.com",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      scope: "Namespaced",
      conversion: { strategy: "None" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: root } }],
    },
    status: { storedVersions: ["v1"] },
  } as unknown as CustomResourceDefinition;
}

const crdWith = (field: Schema) => crdWithRoot({ type: "object", properties: { spec: { type: "object", properties: { x: field } } } });
const errorsOf = (crd: CustomResourceDefinition) => validateCrd(crd, "x-kubernetes").map(fieldErrorText);
const errors = (field: Schema) => errorsOf(crdWith(field));

const setOf = (items: Schema): Schema => ({ type: "array", "x-kubernetes-list-type": "set", items });
const mapListOf = (items: Schema, keys = ["key"]): Schema => ({
  type: "array",
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": keys,
  items,
});

describe("set lists: items scalar or atomic (requireAtomicSetType)", () => {
  it("allowed list-type set with scalar items, atomic map items, atomic or unspecified list items", () => {
    expect(errors(setOf({ type: "string" }))).toEqual([]);
    expect(errors(setOf({ type: "object", "x-kubernetes-map-type": "atomic", properties: { a: { type: "string" } } }))).toEqual([]);
    expect(errors(setOf({ type: "array", "x-kubernetes-list-type": "atomic", items: { type: "string" } }))).toEqual([]);
    expect(errors(setOf({ type: "array", items: { type: "string" } }))).toEqual([]);
  });

  it("invalid list-type set with non-atomic map items / unspecified map-type for map items", () => {
    expect(errors(setOf({ type: "object", "x-kubernetes-map-type": "granular", properties: { a: { type: "string" } } }))).toEqual([
      `${x}.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
    expect(errors(setOf({ type: "object", properties: { a: { type: "string" } } }))).toEqual([
      `${x}.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
  });

  it("invalid list-type set with with non-atomic list items", () => {
    expect(errors(setOf({ type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } }))).toEqual([
      `${x}.items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
  });

  it("non-atomic items in lists of type set allowed if pre-existing; rejected if not", () => {
    const granular = crdWith(setOf({ type: "object", properties: { a: { type: "string" } } }));
    expect(validateCrdUpdate(granular, structuredClone(granular), "x-kubernetes").map(fieldErrorText)).toEqual([]);
    const before = crdWith(setOf({ type: "string" }));
    expect(validateCrdUpdate(granular, before, "x-kubernetes").map(fieldErrorText)).toEqual([
      `${x}.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
  });

  it("invalid set with nullable items (requireMapListKeysMapSetValidation)", () => {
    expect(errors(setOf({ type: "string", nullable: true }))).toEqual([
      `${x}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set`,
    ]);
  });
});

describe("map lists: keys scalar, and required or defaulted", () => {
  it("invalid map with non-required key and no default", () => {
    expect(errors(mapListOf({ type: "object", properties: { key: { type: "string" } } }))).toEqual([
      `${x}.items.properties[key].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
    ]);
  });

  it("allowed map with required key and no default; with non-required key and default", () => {
    expect(errors(mapListOf({ type: "object", required: ["key"], properties: { key: { type: "string" } } }))).toEqual([]);
    expect(errors(mapListOf({ type: "object", properties: { key: { type: "string", default: "stuff" } } }))).toEqual([]);
  });

  it("invalid map with nullable key; with nullable items", () => {
    expect(errors(mapListOf({ type: "object", properties: { key: { type: "string", nullable: true } } }))).toEqual([
      `${x}.items.properties[key].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${x}.items.properties[key].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
    ]);
    expect(errors(mapListOf({ type: "object", nullable: true, required: ["key"], properties: { key: { type: "string" } } }))).toEqual([
      `${x}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
    ]);
  });

  it("a key of object or array type is refused (Kubernetes prints the item's type); keys are unique", () => {
    expect(
      errors(mapListOf({ type: "object", required: ["key"], properties: { key: { type: "object", "x-kubernetes-map-type": "atomic" } } })),
    ).toEqual([
      `${x}.items.properties[key].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
    ]);
    expect(errors(mapListOf({ type: "object", required: ["key"], properties: { key: { type: "string" } } }, ["key", "key"]))).toEqual([
      `${x}.x-kubernetes-list-map-keys: Invalid value: ["key","key"]: must not contain duplicate entries`,
    ]);
  });

  it("list-map-keys need list-type map", () => {
    expect(
      errors({ type: "array", "x-kubernetes-list-map-keys": ["key"], items: { type: "object", properties: { key: { type: "string" } } } }),
    ).toEqual([`${x}.x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`]);
  });
});

describe("forbidden keywords and structural junctors", () => {
  it("patternProperties, id, definitions, dependencies and type null are refused with Kubernetes' messages", () => {
    expect(errors({ type: "object", patternProperties: { "^a": { type: "string" } } })).toEqual([
      `${x}.patternProperties: Forbidden: patternProperties is not supported`,
    ]);
    expect(errors({ type: "string", id: "an-id" })).toEqual([`${x}.id: Forbidden: id is not supported`]);
    expect(errors({ type: "object", definitions: { a: { type: "string" } } })).toEqual([
      `${x}.definitions: Forbidden: definitions is not supported`,
    ]);
    expect(errors({ type: "null" })).toEqual([
      `${x}.type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${x}.type: Forbidden: type cannot be set to null, use nullable as an alternative`,
    ]);
  });

  it("value validations under allOf/anyOf/oneOf/not may not shape values", () => {
    expect(
      errors({
        type: "object",
        properties: { a: { type: "string" } },
        anyOf: [
          { type: "object", description: "d", nullable: true, properties: { a: { default: "x", "x-kubernetes-list-type": "atomic" } } },
        ],
        not: { "x-kubernetes-validations": [{ rule: "true" }], properties: { metadata: {} } },
      }),
    ).toEqual([
      `${x}.anyOf[0].properties[a].default: Forbidden: must be undefined to be structural`,
      `${x}.anyOf[0].properties[a].x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
      `${x}.anyOf[0].type: Forbidden: must be empty to be structural`,
      `${x}.anyOf[0].description: Forbidden: must be empty to be structural`,
      `${x}.anyOf[0].nullable: Forbidden: must be false to be structural`,
      `${x}.not.x-kubernetes-validations: Forbidden: must be empty to be structural`,
      `${x}.not.properties[metadata]: Forbidden: must not be specified in a nested context`,
    ]);
  });

  it("int-or-string's anyOf [integer, string] stays allowed, plain and under allOf", () => {
    const alternatives: Schema[] = [{ type: "integer" }, { type: "string" }];
    expect(errors({ "x-kubernetes-int-or-string": true, anyOf: alternatives })).toEqual([]);
    expect(errors({ "x-kubernetes-int-or-string": true, allOf: [{ anyOf: alternatives }, { pattern: "^[0-9]+%?$" }] })).toEqual([]);
  });

  it("a property constrained in a root junctor must be declared (completeness); no additionalProperties at the root", () => {
    expect(
      errorsOf(
        crdWithRoot({ type: "object", properties: { spec: { type: "object" } }, anyOf: [{ properties: { status: { required: ["a"] } } }] }),
      ),
    ).toEqual([`${at}.properties[status]: Required value: because it is defined in ${at}.anyOf[0].properties[status]`]);
    expect(errorsOf(crdWithRoot({ type: "object", additionalProperties: { type: "string" } }))).toEqual([
      `${at}.additionalProperties: Forbidden: must not be used at the root`,
    ]);
  });

  it("nullable cannot be true at the root; defaults not in top-level metadata nor in metadata maps", () => {
    expect(errorsOf(crdWithRoot({ type: "object", nullable: true }))).toEqual([
      `${at}.nullable: Forbidden: nullable cannot be true at the root`,
    ]);
    expect(errorsOf(crdWithRoot({ type: "object", properties: { metadata: { type: "object", default: { name: "a" } } } }))).toEqual([
      `${at}.properties[metadata].default: Forbidden: must not be set in top-level metadata`,
    ]);
    expect(
      errorsOf(
        crdWithRoot({
          type: "object",
          properties: { metadata: { type: "object", properties: { name: { type: "string", default: "a" } } } },
        }),
      ),
    ).toEqual([`${at}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`]);
    expect(
      errors({
        type: "object",
        "x-kubernetes-embedded-resource": true,
        properties: {
          metadata: { type: "object", properties: { labels: { type: "object", additionalProperties: { type: "string", default: "v" } } } },
        },
      }),
    ).toEqual([
      `${x}.properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata`,
    ]);
  });
});

describe("defaults are validated against their schema and pruned (ValidateDefaults)", () => {
  it("a default of the wrong type, out of bounds or not in the enum → kube-openapi's message under .default", () => {
    expect(errors({ type: "integer", default: "one" })).toEqual([
      // kube-openapi names the default's root "", hence the leading space.
      `${x}.default: Invalid value: "string":  in body must be of type integer: "string"`,
    ]);
    expect(errors({ type: "integer", maximum: 3, default: 5 })).toEqual([
      `${x}.default: Invalid value: 5:  in body should be less than or equal to 3`,
    ]);
    expect(errors({ type: "object", properties: { mode: { type: "string", enum: ["a", "b"] } }, default: { mode: "c" } })).toEqual([
      `${x}.default.mode: Unsupported value: "c": supported values: "a", "b"`,
    ]);
  });

  it("a default with unknown fields → must not have unknown fields; allowed if pre-existing", () => {
    const unpruned = crdWith({ type: "object", properties: { a: { type: "string" } }, default: { a: "x", b: "y" } });
    expect(errorsOf(unpruned)).toEqual([`${x}.default: Invalid value: {"a":"x","b":"y"}: must not have unknown fields`]);
    expect(validateCrdUpdate(unpruned, structuredClone(unpruned), "x-kubernetes").map(fieldErrorText)).toEqual([]);
  });

  it("a default must pass the node's validation rules", () => {
    expect(
      errors({
        type: "string",
        default: "abc",
        "x-kubernetes-validations": [{ rule: "self.startsWith('x')", message: "must start with x" }],
      }),
    ).toEqual([`${x}.default: Invalid value: "string": must start with x`]);
  });

  it("valid default with x-kubernetes-validations / invalid default with x-kubernetes-validations", () => {
    const root = (name: string, value: string, object: { field1: number; field2: number }): Schema => ({
      type: "object",
      properties: {
        embedded: {
          type: "object",
          properties: {
            metadata: {
              type: "object",
              "x-kubernetes-embedded-resource": true,
              properties: { name: { type: "string", "x-kubernetes-validations": [{ rule: "self == 'singleton'" }], default: name } },
            },
          },
        },
        value: { type: "string", "x-kubernetes-validations": [{ rule: "self.startsWith('kube')" }], default: value },
        object: {
          type: "object",
          properties: { field1: { type: "integer" }, field2: { type: "integer" } },
          "x-kubernetes-validations": [{ rule: "self.field1 < self.field2" }],
          default: object,
        },
      },
    });
    expect(errorsOf(crdWithRoot(root("singleton", "kube-everything", { field1: 1, field2: 2 })))).toEqual([]);
    expect(errorsOf(crdWithRoot(root("nope", "nope", { field1: 2, field2: 1 })))).toEqual([
      `${at}.properties[embedded].properties[metadata].properties[name].default: Invalid value: "string": failed rule: self == 'singleton'`,
      `${at}.properties[value].default: Invalid value: "string": failed rule: self.startsWith('kube')`,
      `${at}.properties[object].default: Invalid value: "object": failed rule: self.field1 < self.field2`,
    ]);
  });

  it("a default under an embedded resource's metadata must result in valid metadata", () => {
    const embedded = (name: unknown): Schema => ({
      type: "object",
      "x-kubernetes-embedded-resource": true,
      properties: {
        apiVersion: { type: "string" },
        kind: { type: "string" },
        metadata: { type: "object", properties: { name: { type: "string", default: name } } },
      },
    });
    expect(errors(embedded("fine-name"))).toEqual([]);
    expect(errors(embedded("Not/A/Name"))).toEqual([
      `${x}.properties[metadata].properties[name].default: Invalid value: "Not/A/Name": must result in valid metadata: metadata.name: Invalid value: "Not/A/Name": may not contain '/'`,
    ]);
  });

  it("valid defaults, nested ones included, pass", () => {
    expect(
      errors({
        type: "object",
        default: { a: "x" },
        properties: { a: { type: "string", default: "y", pattern: "^[xy]$" }, n: { type: "integer", minimum: 0, default: 0 } },
      }),
    ).toEqual([]);
  });
});

describe("validation rules: a multi-line rule needs a message", () => {
  it("message must be specified if rule contains line breaks", () => {
    expect(errors({ type: "string", "x-kubernetes-validations": [{ rule: "self.size() > 0 &&\nself.size() < 5" }] })).toEqual([
      `${x}.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks`,
    ]);
    expect(
      errors({ type: "string", "x-kubernetes-validations": [{ rule: "self.size() > 0 &&\nself.size() < 5", message: "1 to 4" }] }),
    ).toEqual([]);
  });
});

describe("estimated rule cost on update (validation.go suppressExpressionCostForUnchangedSchema)", () => {
  // A rule under an unbounded list: over the per-rule limit, and over the schema's total.
  const expensive: Schema = { type: "array", items: { type: "string", "x-kubernetes-validations": [{ rule: "self.contains('a')" }] } };
  const perRule = `${x}.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x`;
  const total = `${at}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget`;

  it("spares a version whose schema is unchanged the per-rule limit, not the total", () => {
    const stored = crdWith(expensive);
    const updated = structuredClone(stored);
    (updated.metadata as { labels?: Record<string, string> }).labels = { touched: "yes" };
    const errs = validateCrdUpdate(updated, stored, "x-kubernetes").map(fieldErrorText);
    expect(errs.some((e) => e.startsWith(perRule))).toBe(false);
    expect(errs.some((e) => e.startsWith(total))).toBe(true);
  });

  it("applies the per-rule limit again once the schema changes", () => {
    const stored = crdWith(expensive);
    const updated = crdWith({ ...expensive, description: "changed" });
    expect(
      validateCrdUpdate(updated, stored, "x-kubernetes")
        .map(fieldErrorText)
        .some((e) => e.startsWith(perRule)),
    ).toBe(true);
    expect(errorsOf(stored).some((e) => e.startsWith(perRule))).toBe(true);
  });
});
