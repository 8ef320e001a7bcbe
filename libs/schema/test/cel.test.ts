// CEL validation rules (x-kubernetes-validations / x-orch-validations) on the examples of Kubernetes'
// CustomResourceDefinition documentation: messages, messageExpression, reason and fieldPath,
// transition rules with oldSelf and optionalOldSelf, property name escaping, the runtime cost bound.
import { type JSONSchemaProps, crdSchemaFor } from "@orch/api";
import { type FieldError, fieldErrorText } from "@orch/machinery";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { type ExtensionPrefix, compileSchema } from "../src/index.js";

const compile = (raw: unknown, prefix: ExtensionPrefix = "x-kubernetes") =>
  compileSchema(v.parse(crdSchemaFor(prefix).JSONSchemaProps, raw) as JSONSchemaProps, { extensionPrefix: prefix });
const texts = (errs: FieldError[]) => errs.map(fieldErrorText);
const withSpec = (spec: unknown) => ({ type: "object", properties: { spec } });

describe("validation rules", () => {
  // The docs' replicas example.
  const replicas = compile(
    withSpec({
      type: "object",
      "x-kubernetes-validations": [
        { rule: "self.minReplicas <= self.replicas", message: "replicas should be greater than or equal to minReplicas." },
        { rule: "self.replicas <= self.maxReplicas", message: "replicas should be smaller than or equal to maxReplicas." },
      ],
      properties: { minReplicas: { type: "integer" }, replicas: { type: "integer" }, maxReplicas: { type: "integer" } },
      required: ["minReplicas", "replicas", "maxReplicas"],
    }),
  );

  it("reports a failed rule with its message at the rule's node", () => {
    expect(replicas.validate({ spec: { minReplicas: 0, replicas: 20, maxReplicas: 10 } })).toEqual([
      {
        type: "FieldValueInvalid",
        field: "spec",
        value: expect.anything(),
        detail: "replicas should be smaller than or equal to maxReplicas.",
      },
    ]);
    expect(texts(replicas.validate({ spec: { minReplicas: 0, replicas: 20, maxReplicas: 10 } }))).toEqual([
      'spec: Invalid value: "object": replicas should be smaller than or equal to maxReplicas.',
    ]);
    expect(replicas.validate({ spec: { minReplicas: 1, replicas: 5, maxReplicas: 10 } })).toEqual([]);
  });

  it("skips the rules when schema validation already failed on types or required fields", () => {
    expect(texts(replicas.validate({ spec: { minReplicas: 0, replicas: "x", maxReplicas: 10 } }))).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it("defaults the message to the rule, and shows the schema type as the value (Kubernetes 1.32)", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: { name: { type: "string", "x-kubernetes-validations": [{ rule: "self.startsWith('a')" }] } },
      }),
    );
    expect(texts(s.validate({ spec: { name: "bob" } }))).toEqual([
      "spec.name: Invalid value: \"string\": failed rule: self.startsWith('a')",
    ]);
  });

  it("uses messageExpression, reason and fieldPath", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: { x: { type: "integer" }, maxLimit: { type: "integer" } },
        "x-kubernetes-validations": [
          {
            rule: "self.x <= self.maxLimit",
            messageExpression: "'x exceeded max limit of ' + string(self.maxLimit)",
            reason: "FieldValueForbidden",
            fieldPath: ".x",
          },
        ],
      }),
    );
    expect(texts(s.validate({ spec: { x: 11, maxLimit: 10 } }))).toEqual(["spec.x: Forbidden: x exceeded max limit of 10"]);
    expect(s.validate({ spec: { x: 11, maxLimit: 10 } })[0]?.type).toBe("FieldValueForbidden");
  });

  it("maps the Required and Duplicate reasons to their error types", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: { a: { type: "string" } },
        "x-kubernetes-validations": [
          { rule: "has(self.a)", message: "a is required", reason: "FieldValueRequired", fieldPath: ".a" },
          { rule: "false", reason: "FieldValueDuplicate" },
        ],
      }),
    );
    expect(texts(s.validate({ spec: {} }))).toEqual(["spec.a: Required value: a is required", 'spec: Duplicate value: "object"']);
  });

  it("sees apiVersion, kind and metadata.name at the root", () => {
    const s = compile({
      type: "object",
      "x-kubernetes-validations": [{ rule: "self.metadata.name.startsWith('prod-') || self.kind == 'Other'", message: "bad name" }],
      properties: { spec: { type: "object" } },
    });
    expect(s.validate({ apiVersion: "x.io/v1", kind: "CronTab", metadata: { name: "prod-a" }, spec: {} })).toEqual([]);
    expect(texts(s.validate({ apiVersion: "x.io/v1", kind: "CronTab", metadata: { name: "dev-a" }, spec: {} }))).toEqual([
      '<nil>: Invalid value: "object": bad name',
    ]);
  });

  it("escapes property names that are not CEL identifiers", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: { "x-prop": { type: "integer" }, namespace: { type: "string" }, "a.b": { type: "string" } },
        "x-kubernetes-validations": [{ rule: "self.x__dash__prop > 0 && self.__namespace__ != '' && self.a__dot__b == 'c'" }],
      }),
    );
    expect(s.validate({ spec: { "x-prop": 1, namespace: "n", "a.b": "c" } })).toEqual([]);
    expect(s.validate({ spec: { "x-prop": 0, namespace: "n", "a.b": "c" } })).toHaveLength(1);
  });

  it("reports runtime errors with the rule", () => {
    const s = compile(
      withSpec({ type: "object", properties: { a: { type: "string" } }, "x-kubernetes-validations": [{ rule: "self.a == 'x'" }] }),
    );
    expect(texts(s.validate({ spec: {} }))).toEqual(["spec: Invalid value: \"object\": no such key: a evaluating rule: self.a == 'x'"]);
  });

  it("types maps, lists, int-or-string and formats", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: {
          labels: {
            type: "object",
            additionalProperties: { type: "string" },
            "x-kubernetes-validations": [{ rule: "self.all(k, self[k] != '')" }],
          },
          ports: {
            type: "array",
            items: { type: "integer" },
            "x-kubernetes-validations": [{ rule: "self.isSorted() && self.all(p, p < 65536)" }],
          },
          port: {
            "x-kubernetes-int-or-string": true,
            "x-kubernetes-validations": [{ rule: "type(self) == int ? self > 0 : self.endsWith('%')" }],
          },
          at: { type: "string", format: "date-time", "x-kubernetes-validations": [{ rule: "self > timestamp('2020-01-01T00:00:00Z')" }] },
          memory: { type: "string", "x-kubernetes-validations": [{ rule: "quantity(self).isGreaterThan(quantity('1Gi'))" }] },
        },
      }),
    );
    expect(s.validate({ spec: { labels: { a: "b" }, ports: [80, 443], port: "50%", at: "2024-01-01T00:00:00Z", memory: "2Gi" } })).toEqual(
      [],
    );
    expect(
      texts(s.validate({ spec: { labels: { a: "" }, ports: [443, 80], port: 0, at: "2019-01-01T00:00:00Z", memory: "1Mi" } })),
    ).toEqual([
      `spec.labels: Invalid value: "object": failed rule: self.all(k, self[k] != '')`,
      `spec.ports: Invalid value: "array": failed rule: self.isSorted() && self.all(p, p < 65536)`,
      `spec.port: Invalid value: "": failed rule: type(self) == int ? self > 0 : self.endsWith('%')`,
      "spec.at: Invalid value: \"string\": failed rule: self > timestamp('2020-01-01T00:00:00Z')",
      "spec.memory: Invalid value: \"string\": failed rule: quantity(self).isGreaterThan(quantity('1Gi'))",
    ]);
  });

  it("uses the naming profile's extension name", () => {
    const raw = withSpec({ type: "object", "x-orch-validations": [{ rule: "false", message: "never" }] });
    expect(texts(compile(raw, "x-orch").validate({ spec: {} }))).toEqual(['spec: Invalid value: "object": never']);
  });
});

describe("transition rules", () => {
  // The docs' immutability example.
  const immutable = compile(
    withSpec({
      type: "object",
      properties: { value: { type: "string", "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "Value is immutable" }] } },
    }),
  );

  it("run only on update, against the old value", () => {
    expect(immutable.validate({ spec: { value: "a" } })).toEqual([]);
    expect(immutable.validate({ spec: { value: "a" } }, { spec: { value: "a" } })).toEqual([]);
    expect(texts(immutable.validate({ spec: { value: "b" } }, { spec: { value: "a" } }))).toEqual([
      'spec.value: Invalid value: "string": Value is immutable',
    ]);
  });

  it("do not run when the field is new in the update", () => {
    expect(immutable.validate({ spec: { value: "b" } }, { spec: {} })).toEqual([]);
  });

  it("correlate list-type map items by key, and not atomic list items", () => {
    const itemRule = {
      type: "object",
      properties: {
        name: { type: "string" },
        size: { type: "integer", "x-kubernetes-validations": [{ rule: "self >= oldSelf", message: "may not shrink" }] },
      },
    };
    const s = compile(
      withSpec({
        type: "object",
        properties: {
          keyed: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], items: itemRule },
          atomic: { type: "array", items: itemRule },
        },
      }),
    );
    const old = {
      spec: {
        keyed: [
          { name: "a", size: 5 },
          { name: "b", size: 5 },
        ],
        atomic: [{ name: "a", size: 5 }],
      },
    };
    const next = {
      spec: {
        keyed: [
          { name: "b", size: 4 },
          { name: "a", size: 6 },
        ],
        atomic: [{ name: "a", size: 1 }],
      },
    };
    expect(texts(s.validate(next, old))).toEqual(['spec.keyed[0].size: Invalid value: "integer": may not shrink']);
  });

  it("with optionalOldSelf also run on create, with oldSelf empty", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: {
          count: {
            type: "integer",
            "x-kubernetes-validations": [
              { rule: "oldSelf.hasValue() ? self >= oldSelf.value() : self == 0", message: "starts at 0 and grows", optionalOldSelf: true },
            ],
          },
        },
      }),
    );
    expect(texts(s.validate({ spec: { count: 3 } }))).toEqual(['spec.count: Invalid value: "integer": starts at 0 and grows']);
    expect(s.validate({ spec: { count: 0 } })).toEqual([]);
    expect(s.validate({ spec: { count: 4 } }, { spec: { count: 3 } })).toEqual([]);
    expect(s.validate({ spec: { count: 2 } }, { spec: { count: 3 } })).toHaveLength(1);
  });
});

describe("cost", () => {
  it("stops a rule that exceeds the per-call cost limit and runs no further rules", () => {
    const s = compile(
      withSpec({
        type: "object",
        properties: { list: { type: "array", items: { type: "integer" } } },
        "x-kubernetes-validations": [
          { rule: "self.list.all(a, self.list.all(b, self.list.all(c, a + b + c >= 0)))" },
          { rule: "false", message: "never reached" },
        ],
      }),
    );
    const list = Array.from({ length: 120 }, (_, i) => i);
    expect(texts(s.validate({ spec: { list } }))).toEqual([
      "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.list.all(a, self.list.all(b, self.list.all(c, a + b + c >= 0)))",
    ]);
    expect(s.validate({ spec: { list: [1, 2, 3] } }).map((e) => e.detail)).toEqual(["never reached"]);
  });
});
