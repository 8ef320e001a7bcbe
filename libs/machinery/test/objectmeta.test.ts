// Expected errors were produced by running Kubernetes' ValidateObjectMeta / ValidateObjectMetaUpdate
// (k8s.io/apimachinery v0.36.3 pkg/api/validation, plus pkg/apis/core/validation's finalizer rule for
// `kubeFinalizers`) on each object; cases follow pkg/api/validation/objectmeta_test.go.
import { describe, expect, it } from "vitest";
import { type FieldError, fieldErrorText, omitValue } from "../src/validation/field-errors.js";
import { goBadValue } from "../src/values/go-format.js";
import { nameIsDNS1035Label, nameIsDNSLabel } from "../src/validation/names.js";
import {
  type ObjectMetaLike,
  type ObjectMetaValidationOptions,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "../src/validation/objectmeta.js";

const typeText: Record<string, string> = {
  FieldValueRequired: "Required value",
  FieldValueInvalid: "Invalid value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
};

// field.Error.Error() with Go's value rendering (%q, json.Marshal). fieldErrorText (field.ts) renders
// values with JSON.stringify, which agrees except for escapes such as \t, non-ASCII spaces and <&>.
function goText(e: FieldError): string {
  const printsValue = e.type === "FieldValueInvalid" && e.value !== omitValue;
  let body = typeText[e.type] ?? e.type;
  if (printsValue) body += `: ${goBadValue(e.value)}`;
  if (e.detail) body += `: ${e.detail}`;
  return `${e.field}: ${body}`;
}

const rendered = (errs: FieldError[]) => errs.map((e): [string, string] => [e.type, goText(e)]);

const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const labelNameMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const labelKeySlashesMsg = `a valid label key ${labelNameMsg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const dns1123LabelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const dns1035LabelMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

type Expected = [type: string, text: string][];

const createCases: [string, ObjectMetaLike, ObjectMetaValidationOptions, Expected][] = [
  ["valid namespaced", { name: "test", namespace: "default" }, { namespaced: true }, []],
  ["valid cluster-scoped", { name: "test" }, { namespaced: false }, []],
  [
    "name required",
    { namespace: "default" },
    { namespaced: true },
    [["FieldValueRequired", "metadata.name: Required value: name or generateName is required"]],
  ],
  [
    "generateName not yet resolved",
    { generateName: "web-", namespace: "default" },
    { namespaced: true },
    [["FieldValueRequired", "metadata.name: Required value: name or generateName is required"]],
  ],
  ["generateName with trailing dash", { name: "foo-abcde", generateName: "foo-" }, { namespaced: false }, []],
  [
    "invalid generateName",
    { name: "foo-abcde", generateName: "Foo-" },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.generateName: Invalid value: "Foo-": ${subdomainMsg}`]],
  ],
  [
    "invalid name",
    { name: "Foo_bar" },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.name: Invalid value: "Foo_bar": ${subdomainMsg}`]],
  ],
  [
    "name too long",
    { name: "a".repeat(254) },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.name: Invalid value: "${"a".repeat(254)}": must be no more than 253 characters`]],
  ],
  [
    "name too long and invalid",
    { name: "A".repeat(254) },
    { namespaced: false },
    [
      ["FieldValueInvalid", `metadata.name: Invalid value: "${"A".repeat(254)}": must be no more than 253 characters`],
      ["FieldValueInvalid", `metadata.name: Invalid value: "${"A".repeat(254)}": ${subdomainMsg}`],
    ],
  ],
  [
    "dns label name",
    { name: "a.b" },
    { namespaced: false, nameValidator: nameIsDNSLabel },
    [["FieldValueInvalid", 'metadata.name: Invalid value: "a.b": must not contain dots']],
  ],
  [
    "dns 1035 name",
    { name: "1abc" },
    { namespaced: false, nameValidator: nameIsDNS1035Label },
    [["FieldValueInvalid", `metadata.name: Invalid value: "1abc": ${dns1035LabelMsg}`]],
  ],
  ["namespace required", { name: "test" }, { namespaced: true }, [["FieldValueRequired", "metadata.namespace: Required value"]]],
  [
    "namespace forbidden",
    { name: "test", namespace: "default" },
    { namespaced: false },
    [["FieldValueForbidden", "metadata.namespace: Forbidden: not allowed on this type"]],
  ],
  [
    "namespace with dots",
    { name: "test", namespace: "foo.bar" },
    { namespaced: true },
    [["FieldValueInvalid", 'metadata.namespace: Invalid value: "foo.bar": must not contain dots']],
  ],
  [
    "namespace too long",
    { name: "test", namespace: "Ab".repeat(32) },
    { namespaced: true },
    [
      ["FieldValueInvalid", `metadata.namespace: Invalid value: "${"Ab".repeat(32)}": must be no more than 63 characters`],
      ["FieldValueInvalid", `metadata.namespace: Invalid value: "${"Ab".repeat(32)}": ${dns1123LabelMsg}`],
    ],
  ],
  [
    "negative generation",
    { name: "test", generation: -1 },
    { namespaced: false },
    [["FieldValueInvalid", "metadata.generation: Invalid value: -1: must be greater than or equal to 0"]],
  ],
  [
    "label key with two slashes",
    { name: "t", labels: { "a/b/c": "x" } },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.labels: Invalid value: "a/b/c": ${labelKeySlashesMsg}`]],
  ],
  [
    "label value with a space",
    { name: "t", labels: { k: "bad value" } },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.labels: Invalid value: "bad value": ${labelValueMsg}`]],
  ],
  [
    "label key and value bad",
    { name: "t", labels: { "-k": "v-" } },
    { namespaced: false },
    [
      ["FieldValueInvalid", `metadata.labels: Invalid value: "-k": name part ${labelNameMsg}`],
      ["FieldValueInvalid", `metadata.labels: Invalid value: "v-": ${labelValueMsg}`],
    ],
  ],
  ["empty label value", { name: "t", labels: { Ok: "" } }, { namespaced: false }, []],
  [
    "label value too long",
    { name: "t", labels: { k: "a".repeat(64) } },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.labels: Invalid value: "${"a".repeat(64)}": must be no more than 63 bytes`]],
  ],
  [
    "annotation key bad",
    { name: "t", annotations: { "nospecialchars^=@": "bar" } },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.annotations: Invalid value: "nospecialchars^=@": name part ${labelNameMsg}`]],
  ],
  ["annotation key case ignored", { name: "t", annotations: { "Example.COM/UpperCase123": "v" } }, { namespaced: false }, []],
  [
    "annotation key with two slashes",
    { name: "t", annotations: { "only/one/slash": "bar" } },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.annotations: Invalid value: "only/one/slash": ${labelKeySlashesMsg}`]],
  ],
  [
    "annotation prefix too long",
    { name: "t", annotations: { [`${"a".repeat(254)}/x`]: "bar" } },
    { namespaced: false },
    [["FieldValueInvalid", `metadata.annotations: Invalid value: "${"a".repeat(254)}/x": prefix part must be no more than 253 bytes`]],
  ],
  ["annotations at the size limit", { name: "t", annotations: { a: "b".repeat(262143) } }, { namespaced: false }, []],
  [
    "annotations over the size limit",
    { name: "t", annotations: { a: "b".repeat(131072), c: "d".repeat(131072) } },
    { namespaced: false },
    [["FieldValueTooLong", "metadata.annotations: Too long: may not be more than 262144 bytes"]],
  ],
  [
    "owner reference missing fields",
    { name: "t", ownerReferences: [{}] },
    { namespaced: false },
    [
      ["FieldValueInvalid", 'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty'],
      ["FieldValueInvalid", 'metadata.ownerReferences.kind: Invalid value: "": must not be empty'],
      ["FieldValueInvalid", 'metadata.ownerReferences.name: Invalid value: "": must not be empty'],
      ["FieldValueInvalid", 'metadata.ownerReferences.uid: Invalid value: "": must not be empty'],
    ],
  ],
  [
    "owner reference empty version",
    { name: "t", ownerReferences: [{ apiVersion: "apps/", kind: "K", name: "n", uid: "u" }] },
    { namespaced: false },
    [["FieldValueInvalid", 'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty']],
  ],
  [
    "owner reference bad apiVersion",
    { name: "t", ownerReferences: [{ apiVersion: "a/b/c", kind: "K", name: "n", uid: "u" }] },
    { namespaced: false },
    [["FieldValueInvalid", 'metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty']],
  ],
  [
    "owner reference third party ok",
    { name: "t", ownerReferences: [{ apiVersion: "customresourceVersion", kind: "customresourceKind", name: "name", uid: "1" }] },
    { namespaced: false },
    [],
  ],
  [
    "event may not own",
    { name: "t", ownerReferences: [{ apiVersion: "v1", kind: "Event", name: "name", uid: "1", blockOwnerDeletion: false }] },
    { namespaced: false },
    [
      [
        "FieldValueInvalid",
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"name","uid":"1","blockOwnerDeletion":false}: /v1, Kind=Event is disallowed from being an owner',
      ],
    ],
  ],
  [
    "one controller ok",
    {
      name: "t",
      ownerReferences: [
        { apiVersion: "v", kind: "k", name: "n", uid: "1", controller: false },
        { apiVersion: "v", kind: "k", name: "n", uid: "2", controller: true },
        { apiVersion: "v", kind: "k", name: "n", uid: "3" },
      ],
    },
    { namespaced: false },
    [],
  ],
  [
    "three controllers",
    {
      name: "t",
      ownerReferences: [
        { apiVersion: "v", kind: "k1", name: "n", uid: "1", controller: true },
        { apiVersion: "v", kind: "k2", name: "n", uid: "2", controller: true },
        { apiVersion: "v", kind: "k3", name: "n<&>", uid: "3", controller: true },
      ],
    },
    { namespaced: false },
    [
      [
        "FieldValueInvalid",
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"v","kind":"k1","name":"n","uid":"1","controller":true},{"apiVersion":"v","kind":"k2","name":"n","uid":"2","controller":true},{"apiVersion":"v","kind":"k3","name":"n\\u003c\\u0026\\u003e","uid":"3","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for k1/n and k2/n',
      ],
      [
        "FieldValueInvalid",
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"v","kind":"k1","name":"n","uid":"1","controller":true},{"apiVersion":"v","kind":"k2","name":"n","uid":"2","controller":true},{"apiVersion":"v","kind":"k3","name":"n\\u003c\\u0026\\u003e","uid":"3","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for k1/n and k3/n<&>',
      ],
    ],
  ],
  ["qualified finalizers", { name: "t", finalizers: ["x/a", "kubernetes", "custom"] }, { namespaced: false }, []],
  [
    "conflicting finalizers",
    { name: "t", finalizers: ["orphan", "foregroundDeletion"] },
    { namespaced: false },
    [
      [
        "FieldValueInvalid",
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
      ],
    ],
  ],
  [
    "bad finalizers",
    { name: "t", finalizers: ["bad name", ""] },
    { namespaced: false },
    [
      ["FieldValueInvalid", `metadata.finalizers: Invalid value: "bad name": name part ${labelNameMsg}`],
      ["FieldValueInvalid", 'metadata.finalizers: Invalid value: "": name part must be non-empty'],
      ["FieldValueInvalid", `metadata.finalizers: Invalid value: "": name part ${labelNameMsg}`],
    ],
  ],
  [
    "kube finalizers",
    { name: "t", finalizers: ["custom", "example.com/ok", "kubernetes", "orphan", "bad/x/y"] },
    { namespaced: false, kubeFinalizers: true },
    [
      ["FieldValueInvalid", `metadata.finalizers: Invalid value: "bad/x/y": ${labelKeySlashesMsg}`],
      [
        "FieldValueInvalid",
        'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
      ],
    ],
  ],
  [
    "managed fields",
    {
      name: "t",
      managedFields: [
        { operation: "Apply", manager: "m", fieldsType: "FieldsV1" },
        { manager: "a\tb\u00a0" },
        { operation: "Bogus", fieldsType: "FieldsV2", manager: "x".repeat(129), subresource: "s".repeat(257) },
      ],
    },
    { namespaced: false },
    [
      ["FieldValueInvalid", 'metadata.managedFields[1].operation: Invalid value: "": must be `Apply` or `Update`'],
      ["FieldValueInvalid", 'metadata.managedFields[1].manager: Invalid value: "a\\tb\\u00a0": invalid character U+0009 (at position 1)'],
      ["FieldValueInvalid", 'metadata.managedFields[1].manager: Invalid value: "a\\tb\\u00a0": invalid character U+00A0 (at position 3)'],
      ["FieldValueInvalid", 'metadata.managedFields[2].operation: Invalid value: "Bogus": must be `Apply` or `Update`'],
      ["FieldValueInvalid", 'metadata.managedFields[2].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`'],
      ["FieldValueTooLong", "metadata.managedFields[2].manager: Too long: may not be more than 128 bytes"],
      ["FieldValueTooLong", "metadata.managedFields[2].subresource: Too long: may not be more than 256 bytes"],
    ],
  ],
];

describe("validateObjectMeta", () => {
  it.each(createCases)("%s", (_name, meta, options, want) => {
    expect(rendered(validateObjectMeta(meta, options))).toEqual(want);
  });
});

const updateCases: [string, ObjectMetaLike, ObjectMetaLike, boolean, Expected][] = [
  ["unchanged", { name: "test", resourceVersion: "1" }, { name: "test", resourceVersion: "1" }, false, []],
  [
    "resourceVersion required",
    { name: "test" },
    { name: "test", resourceVersion: "1" },
    false,
    [["FieldValueInvalid", 'metadata.resourceVersion: Invalid value: "": must be specified for an update']],
  ],
  [
    "identity is immutable",
    { name: "b", namespace: "y", uid: "u2", resourceVersion: "1" },
    { name: "a", namespace: "x", uid: "u1", resourceVersion: "1" },
    false,
    [
      ["FieldValueInvalid", 'metadata.name: Invalid value: "b": field is immutable'],
      ["FieldValueInvalid", 'metadata.namespace: Invalid value: "y": field is immutable'],
      ["FieldValueInvalid", 'metadata.uid: Invalid value: "u2": field is immutable'],
    ],
  ],
  [
    "identity cleared",
    { resourceVersion: "1" },
    { name: "a", namespace: "x", uid: "u1", resourceVersion: "1" },
    false,
    [
      ["FieldValueInvalid", 'metadata.name: Invalid value: "": field is immutable'],
      ["FieldValueInvalid", 'metadata.namespace: Invalid value: "": field is immutable'],
      ["FieldValueInvalid", 'metadata.uid: Invalid value: "": field is immutable'],
    ],
  ],
  [
    "creationTimestamp set",
    { name: "t", resourceVersion: "1", creationTimestamp: "1970-01-01T00:00:10Z" },
    { name: "t", resourceVersion: "1" },
    false,
    [["FieldValueInvalid", 'metadata.creationTimestamp: Invalid value: "1970-01-01T00:00:10Z": field is immutable']],
  ],
  [
    "creationTimestamp cleared",
    { name: "t", resourceVersion: "1" },
    { name: "t", resourceVersion: "1", creationTimestamp: "1970-01-01T00:00:10Z" },
    false,
    [["FieldValueInvalid", "metadata.creationTimestamp: Invalid value: null: field is immutable"]],
  ],
  [
    "creationTimestamp changed",
    { name: "t", resourceVersion: "1", creationTimestamp: "1970-01-01T00:00:10Z" },
    { name: "t", resourceVersion: "1", creationTimestamp: "1970-01-01T00:00:11Z" },
    false,
    [["FieldValueInvalid", 'metadata.creationTimestamp: Invalid value: "1970-01-01T00:00:10Z": field is immutable']],
  ],
  [
    "creationTimestamp same instant",
    { name: "t", resourceVersion: "1", creationTimestamp: "1970-01-01T01:00:10+01:00" },
    { name: "t", resourceVersion: "1", creationTimestamp: "1970-01-01T00:00:10Z" },
    false,
    [],
  ],
  [
    "deletion fields unchanged",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:16:40Z", deletionGracePeriodSeconds: 30 },
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:16:40Z", deletionGracePeriodSeconds: 30 },
    false,
    [],
  ],
  [
    "deletionTimestamp set",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:16:40Z" },
    { name: "t", resourceVersion: "1" },
    false,
    [["FieldValueInvalid", 'metadata.deletionTimestamp: Invalid value: "1970-01-01T00:16:40Z": field is immutable']],
  ],
  [
    "deletionTimestamp set with offset",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T02:16:40+02:00" },
    { name: "t", resourceVersion: "1" },
    false,
    [["FieldValueInvalid", 'metadata.deletionTimestamp: Invalid value: "1970-01-01T00:16:40Z": field is immutable']],
  ],
  [
    "deletionTimestamp cleared",
    { name: "t", resourceVersion: "1" },
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:16:40Z" },
    false,
    [["FieldValueInvalid", "metadata.deletionTimestamp: Invalid value: null: field is immutable"]],
  ],
  [
    "deletionTimestamp changed",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:33:20Z" },
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:16:40Z" },
    false,
    [["FieldValueInvalid", 'metadata.deletionTimestamp: Invalid value: "1970-01-01T00:33:20Z": field is immutable']],
  ],
  [
    "grace period set",
    { name: "t", resourceVersion: "1", deletionGracePeriodSeconds: 30 },
    { name: "t", resourceVersion: "1" },
    false,
    [["FieldValueInvalid", "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"]],
  ],
  [
    "grace period cleared",
    { name: "t", resourceVersion: "1" },
    { name: "t", resourceVersion: "1", deletionGracePeriodSeconds: 30 },
    false,
    [["FieldValueInvalid", "metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable"]],
  ],
  [
    "grace period changed",
    { name: "t", resourceVersion: "1", deletionGracePeriodSeconds: 40 },
    { name: "t", resourceVersion: "1", deletionGracePeriodSeconds: 30 },
    false,
    [["FieldValueInvalid", "metadata.deletionGracePeriodSeconds: Invalid value: 40: field is immutable"]],
  ],
  [
    "grace period zero vs unset",
    { name: "t", resourceVersion: "1", deletionGracePeriodSeconds: 0 },
    { name: "t", resourceVersion: "1" },
    false,
    [["FieldValueInvalid", "metadata.deletionGracePeriodSeconds: Invalid value: 0: field is immutable"]],
  ],
  [
    "generation decremented",
    { name: "t", resourceVersion: "1", generation: 4 },
    { name: "t", resourceVersion: "1", generation: 5 },
    false,
    [["FieldValueInvalid", "metadata.generation: Invalid value: 4: must not be decremented"]],
  ],
  [
    "generation incremented",
    { name: "t", resourceVersion: "1", generation: 2 },
    { name: "t", resourceVersion: "1", generation: 1 },
    false,
    [],
  ],
  [
    "negative generation not rechecked",
    { name: "t", resourceVersion: "1", generation: -3 },
    { name: "t", resourceVersion: "1", generation: -5 },
    false,
    [],
  ],
  [
    "finalizer added while deleting",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:00:01Z", finalizers: ["x/a", "y/b"] },
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:00:01Z", finalizers: ["x/a"] },
    false,
    [
      [
        "FieldValueForbidden",
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"y/b"}',
      ],
    ],
  ],
  [
    "finalizers replaced while deleting",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:00:01Z", finalizers: ["z/c", "x/b", "z/c"] },
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:00:01Z", finalizers: ["x/a"] },
    false,
    [
      [
        "FieldValueForbidden",
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x/b", "z/c"}',
      ],
    ],
  ],
  [
    "finalizer removed while deleting",
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:00:01Z", finalizers: ["x/a"] },
    { name: "t", resourceVersion: "1", deletionTimestamp: "1970-01-01T00:00:01Z", finalizers: ["x/a", "y/b"] },
    false,
    [],
  ],
  [
    "finalizer added when not deleting",
    { name: "t", resourceVersion: "1", finalizers: ["x/a", "y/b"] },
    { name: "t", resourceVersion: "1", finalizers: ["x/a"] },
    false,
    [],
  ],
  [
    "finalizer names not checked on update",
    { name: "t", resourceVersion: "1", finalizers: ["bad name", "orphan", "foregroundDeletion"] },
    { name: "t", resourceVersion: "1" },
    false,
    [],
  ],
  [
    "kube finalizer names checked on update",
    { name: "t", resourceVersion: "1", finalizers: ["custom"] },
    { name: "t", resourceVersion: "1" },
    true,
    [
      [
        "FieldValueInvalid",
        'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
      ],
    ],
  ],
  [
    "labels annotations and owners rechecked",
    {
      name: "t",
      resourceVersion: "1",
      labels: { k: "bad value" },
      annotations: { "a/b/c": "v" },
      ownerReferences: [{ apiVersion: "v1", kind: "K", name: "n" }],
    },
    { name: "t", resourceVersion: "1" },
    false,
    [
      ["FieldValueInvalid", `metadata.labels: Invalid value: "bad value": ${labelValueMsg}`],
      ["FieldValueInvalid", `metadata.annotations: Invalid value: "a/b/c": ${labelKeySlashesMsg}`],
      ["FieldValueInvalid", 'metadata.ownerReferences.uid: Invalid value: "": must not be empty'],
    ],
  ],
];

describe("validateObjectMetaUpdate", () => {
  it.each(updateCases)("%s", (_name, newMeta, oldMeta, kubeFinalizers, want) => {
    expect(rendered(validateObjectMetaUpdate(newMeta, oldMeta, { kubeFinalizers }))).toEqual(want);
  });
});

describe("rendering through field.ts", () => {
  it("matches Go for values without special characters", () => {
    for (const [, meta, options] of createCases) {
      for (const e of validateObjectMeta(meta, options)) {
        if (/[\u0000-\u001f\u007f-\u00a0<>&]/.test(JSON.stringify(e.value) ?? "")) continue;
        expect(fieldErrorText(e)).toBe(goText(e));
      }
    }
  });
});
