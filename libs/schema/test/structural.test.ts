// Pruning, defaulting, schema validation and shapes of custom resources, on the examples of
// Kubernetes' CustomResourceDefinition documentation (tasks/extend-kubernetes/custom-resources).
import { type JSONSchemaProps, crdSchemaFor } from "@orch/api";
import { type FieldError, fieldErrorText } from "@orch/machinery";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { type ExtensionPrefix, compileSchema } from "../src/index.js";

/** Decodes a schema as the apiserver decodes a CRD's openAPIV3Schema. */
const schemaOf = (raw: unknown, prefix: ExtensionPrefix = "x-kubernetes"): JSONSchemaProps =>
  v.parse(crdSchemaFor(prefix).JSONSchemaProps, raw);
const compile = (raw: unknown, prefix: ExtensionPrefix = "x-kubernetes") =>
  compileSchema(schemaOf(raw, prefix), { extensionPrefix: prefix });
const texts = (errs: FieldError[]) => errs.map(fieldErrorText);

const root = (spec: unknown) => ({ type: "object", properties: { spec } });
const cronTab = (spec: unknown) => ({
  apiVersion: "stable.example.com/v1",
  kind: "CronTab",
  metadata: { name: "my-new-cron-object" },
  spec,
});

// The CronTab schema of the docs' "Validation" section.
const cronTabSchema = root({
  type: "object",
  properties: {
    cronSpec: { type: "string", pattern: String.raw`^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$` },
    image: { type: "string" },
    replicas: { type: "integer", minimum: 1, maximum: 10 },
  },
});

describe("pruning", () => {
  it("drops unknown fields and reports their paths (docs: someRandomField)", () => {
    const s = compile(cronTabSchema);
    const obj = cronTab({ cronSpec: "* * * * */5", image: "my-awesome-cron-image", someRandomField: 42 });
    expect(s.prune(obj)).toEqual(["spec.someRandomField"]);
    expect(obj.spec).toEqual({ cronSpec: "* * * * */5", image: "my-awesome-cron-image" });
  });

  it("keeps apiVersion, kind and metadata at the root and does not prune metadata", () => {
    const s = compile(cronTabSchema);
    const obj = { ...cronTab({}), metadata: { name: "x", labels: { a: "b" }, whatever: 1 }, status: { x: 1 } };
    expect(s.prune(obj)).toEqual(["status"]);
    expect(obj.metadata).toEqual({ name: "x", labels: { a: "b" }, whatever: 1 });
  });

  it("reports list items by index and nested members by dots", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          list: { type: "array", items: { type: "object", properties: { a: { type: "string" } } } },
          map: { type: "object", additionalProperties: { type: "object", properties: { a: { type: "string" } } } },
        },
      }),
    );
    const obj = { spec: { list: [{ a: "x" }, { a: "y", b: 1 }], map: { k: { a: "x", c: 2 } } } };
    expect(s.prune(obj)).toEqual(["spec.list[1].b", "spec.map.k.c"]);
    expect(obj.spec).toEqual({ list: [{ a: "x" }, { a: "y" }], map: { k: { a: "x" } } });
  });

  it("keeps unknown fields under x-kubernetes-preserve-unknown-fields, and prunes the known ones below", () => {
    const s = compile(
      root({
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
        properties: { known: { type: "object", properties: { a: { type: "string" } } } },
      }),
    );
    const obj = { spec: { anything: { deep: [1, { x: 2 }] }, known: { a: "x", b: "y" } } };
    expect(s.prune(obj)).toEqual(["spec.known.b"]);
    expect(obj.spec).toEqual({ anything: { deep: [1, { x: 2 }] }, known: { a: "x" } });
  });

  it("keeps apiVersion, kind and metadata of an embedded resource (docs: x-kubernetes-embedded-resource)", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          foo: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true },
          bar: { type: "object", "x-kubernetes-embedded-resource": true, properties: { spec: { type: "object" } } },
        },
      }),
    );
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", bogus: 1 }, spec: { containers: [] } };
    const obj = { spec: { foo: structuredClone(pod), bar: { ...structuredClone(pod), extra: true } } };
    expect(s.prune(obj)).toEqual(["spec.foo.metadata.bogus", "spec.bar.metadata.bogus", "spec.bar.spec.containers", "spec.bar.extra"]);
    expect(obj.spec.foo).toEqual({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [] } });
    expect(obj.spec.bar).toEqual({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: {} });
  });

  it("uses the naming profile's extension names only", () => {
    const raw = root({ type: "object", "x-orch-preserve-unknown-fields": true });
    const orch = compile(raw, "x-orch");
    const kept = { spec: { a: 1 } };
    expect(orch.prune(kept)).toEqual([]);
    expect(kept).toEqual({ spec: { a: 1 } });
    const kube = compile(raw, "x-kubernetes");
    const dropped = { spec: { a: 1 } };
    expect(kube.prune(dropped)).toEqual(["spec.a"]);
  });
});

describe("nulls and defaulting", () => {
  it("defaults missing fields (docs: cronSpec and replicas defaults)", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          cronSpec: { type: "string", default: "5 0 * * *" },
          image: { type: "string" },
          replicas: { type: "integer", minimum: 1, maximum: 10, default: 1 },
        },
      }),
    );
    const obj = cronTab({ image: "my-awesome-cron-image" });
    s.prune(obj);
    s.applyDefaults(obj);
    expect(obj.spec).toEqual({ cronSpec: "5 0 * * *", image: "my-awesome-cron-image", replicas: 1 });
  });

  it("drops non-nullable nulls, defaults them when there is a default, keeps nullable ones (docs: foo, bar, baz)", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          foo: { type: "string", nullable: false, default: "default" },
          bar: { type: "string", nullable: true },
          baz: { type: "string" },
        },
      }),
    );
    const obj = { spec: { foo: null, bar: null, baz: null } };
    s.prune(obj);
    s.applyDefaults(obj);
    expect(obj.spec).toEqual({ foo: "default", bar: null });
  });

  it("applies defaults in nested defaults and deep-copies them", () => {
    const s = compile(
      root({
        type: "object",
        default: {},
        properties: {
          a: {
            type: "object",
            default: { x: [1] },
            properties: { x: { type: "array", items: { type: "integer" } }, y: { type: "string", default: "y" } },
          },
        },
      }),
    );
    const one: Record<string, unknown> = {};
    const two: Record<string, unknown> = {};
    s.applyDefaults(one);
    s.applyDefaults(two);
    expect(one).toEqual({ spec: { a: { x: [1], y: "y" } } });
    (one.spec as { a: { x: number[] } }).a.x.push(2);
    expect(two).toEqual({ spec: { a: { x: [1], y: "y" } } });
  });

  it("does not default under a missing parent", () => {
    const s = compile(root({ type: "object", properties: { a: { type: "string", default: "x" } } }));
    const obj: Record<string, unknown> = { metadata: {} };
    s.applyDefaults(obj);
    expect(obj).toEqual({ metadata: {} });
  });
});

describe("validation", () => {
  it("reports the docs' CronTab errors with Kubernetes' paths and messages", () => {
    const s = compile(cronTabSchema);
    expect(texts(s.validate(cronTab({ cronSpec: "* * * *", image: "my-awesome-cron-image", replicas: 15 })))).toEqual([
      String.raw`spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'`,
      "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
    ]);
    expect(s.validate(cronTab({ cronSpec: "* * * * */5", image: "x", replicas: 5 }))).toEqual([]);
  });

  it("checks types: integer vs number, strings, objects, arrays, booleans", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          i: { type: "integer" },
          n: { type: "number" },
          s: { type: "string" },
          b: { type: "boolean" },
          o: { type: "object" },
          a: { type: "array", items: { type: "string" } },
        },
      }),
    );
    expect(texts(s.validate({ spec: { i: 1.5, n: 2, s: 3, b: "true", o: [], a: [1] } }))).toEqual([
      'spec.i: Invalid value: "number": spec.i in body must be of type integer: "number"',
      '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.i',
      'spec.s: Invalid value: "integer": spec.s in body must be of type string: "integer"',
      'spec.b: Invalid value: "string": spec.b in body must be of type boolean: "string"',
      'spec.o: Invalid value: "array": spec.o in body must be of type object: "array"',
      'spec.a[0]: Invalid value: "integer": spec.a[0] in body must be of type string: "integer"',
    ]);
    expect(s.validate({ spec: { i: 1, n: 1.5, s: "", b: false, o: {}, a: [] } })).toEqual([]);
  });

  it("reports a type error with Kubernetes' TypeInvalid type", () => {
    const s = compile(root({ type: "object", properties: { i: { type: "integer" } } }));
    expect(s.validate({ spec: { i: "x" } })).toEqual([
      { type: "FieldValueTypeInvalid", field: "spec.i", value: "string", detail: 'spec.i in body must be of type integer: "string"' },
    ]);
  });

  it("accepts x-kubernetes-int-or-string values and nulls only where nullable", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          port: { "x-kubernetes-int-or-string": true },
          maybe: { type: "string", nullable: true },
          never: { type: "string" },
        },
      }),
    );
    expect(s.validate({ spec: { port: 80, maybe: null } })).toEqual([]);
    expect(s.validate({ spec: { port: "http" } })).toEqual([]);
    expect(texts(s.validate({ spec: { port: true, never: null } }))).toEqual([
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      'spec.never: Invalid value: "null": spec.never in body must be of type string: "null"',
    ]);
  });

  it("checks enum, required, bounds and multipleOf", () => {
    const s = compile(
      root({
        type: "object",
        required: ["mode"],
        properties: {
          mode: { type: "string", enum: ["a", "b"] },
          n: { type: "integer", enum: [1, 2] },
          low: { type: "number", minimum: 1.5, exclusiveMinimum: true },
          high: { type: "integer", maximum: 10, exclusiveMaximum: true },
          step: { type: "integer", multipleOf: 5 },
          fstep: { type: "number", multipleOf: 0.5 },
        },
      }),
    );
    expect(texts(s.validate({ spec: { n: 3, low: 1.5, high: 10, step: 7, fstep: 0.7 } }))).toEqual([
      'spec.n: Unsupported value: 3: supported values: "1", "2"',
      "spec.low: Invalid value: 1.5: spec.low in body should be greater than 1.5",
      "spec.high: Invalid value: 10: spec.high in body should be less than 10",
      "spec.step: Invalid value: 7: spec.step in body should be a multiple of 5",
      "spec.fstep: Invalid value: 0.7: spec.fstep in body should be a multiple of 0.5",
      "spec.mode: Required value",
    ]);
    expect(texts(s.validate({ spec: { mode: "c" } }))).toEqual(['spec.mode: Unsupported value: "c": supported values: "a", "b"']);
    expect(s.validate({ spec: { mode: "a", n: 2, low: 1.6, high: 9, step: 10, fstep: 1.5 } })).toEqual([]);
  });

  it("checks string lengths (in characters) and array and object sizes", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          short: { type: "string", maxLength: 3 },
          long: { type: "string", minLength: 2 },
          few: { type: "array", maxItems: 1, items: { type: "string" } },
          many: { type: "array", minItems: 2, items: { type: "string" } },
          small: { type: "object", maxProperties: 1, additionalProperties: { type: "string" } },
          big: { type: "object", minProperties: 2, additionalProperties: { type: "string" } },
        },
      }),
    );
    expect(s.validate({ spec: { short: "ééé", long: "ab" } })).toEqual([]);
    expect(
      texts(s.validate({ spec: { short: "abcd", long: "a", few: ["a", "b"], many: ["a"], small: { a: "", b: "" }, big: { a: "" } } })),
    ).toEqual([
      "spec.short: Too long: may not be more than 3 bytes",
      'spec.long: Invalid value: "a": spec.long in body should be at least 2 chars long',
      "spec.few: Too many: 2: must have at most 1 items",
      "spec.many: Invalid value: 1: spec.many in body should have at least 2 items",
      "spec.small: Too many: 2: must have at most 1 items",
      "spec.big: Invalid value: 1: spec.big in body should have at least 2 properties",
    ]);
  });

  it("checks the formats Kubernetes validates and ignores the others", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          ip: { type: "string", format: "ipv4" },
          when: { type: "string", format: "date-time" },
          id: { type: "string", format: "uuid" },
          mail: { type: "string", format: "email" },
          host: { type: "string", format: "hostname" },
          data: { type: "string", format: "byte" },
          span: { type: "string", format: "duration" },
          other: { type: "string", format: "not-a-format" },
          count: { type: "integer", format: "int32" },
        },
      }),
    );
    expect(
      s.validate({
        spec: {
          ip: "10.0.0.1",
          when: "2024-02-29T10:00:00Z",
          id: "7b3c1f0e-9a3b-4f1e-8c3a-1b2c3d4e5f60",
          mail: "a@example.com",
          host: "example.com",
          data: "aGVsbG8=",
          span: "1h30m",
          other: "anything",
          count: 3,
        },
      }),
    ).toEqual([]);
    expect(texts(s.validate({ spec: { ip: "10.0.0", when: "2023-02-29T10:00:00Z", id: "nope", span: "soon" } }))).toEqual([
      'spec.ip: Invalid value: "10.0.0": spec.ip in body must be of type ipv4: "10.0.0"',
      'spec.when: Invalid value: "2023-02-29T10:00:00Z": spec.when in body must be of type date-time: "2023-02-29T10:00:00Z"',
      'spec.id: Invalid value: "nope": spec.id in body must be of type uuid: "nope"',
      'spec.span: Invalid value: "soon": spec.span in body must be of type duration: "soon"',
    ]);
  });

  it("checks allOf, anyOf, oneOf and not", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          any: { type: "string", anyOf: [{ pattern: "^a" }, { pattern: "^b" }] },
          one: { type: "integer", oneOf: [{ minimum: 5 }, { maximum: 10 }] },
          all: { type: "string", allOf: [{ minLength: 2 }, { maxLength: 3 }] },
          none: { type: "string", not: { enum: ["x"] } },
        },
      }),
    );
    expect(s.validate({ spec: { any: "ab", one: 11, all: "ab", none: "y" } })).toEqual([]);
    expect(texts(s.validate({ spec: { any: "c", one: 7, all: "abcd", none: "x" } }))).toEqual([
      '<nil>: Invalid value: "": "spec.any" must validate at least one schema (anyOf)',
      "spec.any: Invalid value: \"c\": spec.any in body should match '^a'",
      '<nil>: Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      "spec.all: Too long: may not be more than 3 bytes",
      '<nil>: Invalid value: "": "spec.all" must validate all the schemas (allOf)',
      '<nil>: Invalid value: "": "spec.none" must not validate the schema (not)',
    ]);
  });

  it("rejects duplicates in list-type set and map lists", () => {
    const s = compile(
      root({
        type: "object",
        properties: {
          tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
          ports: {
            type: "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "protocol"],
            items: {
              type: "object",
              required: ["name"],
              properties: { name: { type: "string" }, protocol: { type: "string", default: "TCP" }, port: { type: "integer" } },
            },
          },
        },
      }),
    );
    const obj = {
      spec: {
        tags: ["a", "b", "a", "a"],
        ports: [
          { name: "http", port: 80 },
          { name: "http", protocol: "UDP", port: 80 },
          { name: "http", port: 8080 },
        ],
      },
    };
    s.applyDefaults(obj);
    expect(texts(s.validate(obj))).toEqual([
      'spec.tags[2]: Duplicate value: "a"',
      'spec.ports[2]: Duplicate value: {"name":"http","protocol":"TCP"}',
    ]);
  });

  it("validates embedded resources' apiVersion, kind and metadata", () => {
    const s = compile(
      root({
        type: "object",
        properties: { template: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true } },
      }),
    );
    expect(s.validate({ spec: { template: { apiVersion: "v1", kind: "Pod", metadata: { labels: { app: "x" } } } } })).toEqual([]);
    expect(texts(s.validate({ spec: { template: { apiVersion: "a/b/c", kind: "Not_A_Kind", metadata: { name: "a/b" } } } }))).toEqual([
      'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      "spec.template.kind: Invalid value: \"Not_A_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]);
    expect(texts(s.validate({ spec: { template: {} } }))).toEqual([
      "spec.template.apiVersion: Required value: must not be empty",
      "spec.template.kind: Required value: must not be empty",
    ]);
  });
});

describe("shape", () => {
  const s = compile({
    type: "object",
    properties: {
      spec: {
        type: "object",
        "x-kubernetes-map-type": "atomic",
        properties: {
          ports: {
            type: "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            items: { type: "object", properties: { name: { type: "string" } } },
          },
          tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
          args: { type: "array", items: { type: "string" } },
          labels: { type: "object", additionalProperties: { type: "string" } },
          raw: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          port: { "x-kubernetes-int-or-string": true },
        },
      },
    },
  });

  it("describes objects, list types, maps and untyped members", () => {
    const top = s.shape;
    expect(top.kind).toBe("object");
    if (top.kind !== "object") return;
    expect(top.field("metadata")?.kind).toBe("object");
    expect(top.field("kind")).toEqual({ kind: "scalar" });
    expect(top.field("nope")).toBeUndefined();
    const spec = top.field("spec");
    expect(spec).toMatchObject({ kind: "object", mapType: "atomic" });
    if (spec?.kind !== "object") return;
    expect(spec.field("ports")).toMatchObject({ kind: "list", listType: "map", listMapKeys: ["name"], item: { kind: "object" } });
    expect(spec.field("tags")).toMatchObject({ kind: "list", listType: "set", item: { kind: "scalar" } });
    expect(spec.field("args")).toMatchObject({ kind: "list", listType: "atomic" });
    expect(spec.field("labels")).toEqual({ kind: "map", value: { kind: "scalar" } });
    expect(spec.field("raw")).toEqual({ kind: "untyped" });
    expect(spec.field("port")).toEqual({ kind: "scalar" });
  });
});
