// CustomResourceDefinition rules (spec 2.12), as apiextensions-apiserver's CRD validation enforces
// them: each bad definition is refused with 422 Invalid, a Status whose causes name the field, and
// nothing stored; a good definition is accepted.
import { describe, expect, it } from "vitest";
import { useTestServer } from "./harness.js";

const t = useTestServer();

const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
let counter = 0;

const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        mode: { type: "string" },
        labels: { type: "object", additionalProperties: { type: "string" } },
      },
    },
    status: { type: "object", properties: { replicas: { type: "integer" } } },
  },
};

/** A valid CRD in a group of its own; `edit` breaks one thing. */
function crd(edit: (c: any) => void = () => {}) {
  const n = ++counter;
  const c: any = {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.g${n}.example.com` },
    spec: {
      group: `g${n}.example.com`,
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList", shortNames: ["wd"] },
      scope: "Namespaced",
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: structuredClone(schema) } }],
    },
  };
  edit(c);
  return c;
}

interface Cause {
  field: string;
  message: string;
  reason: string;
}

/** Posts the CRD and expects a 422 whose causes are exactly `expected` (field → message), nothing stored. */
async function refused(body: any, expected: [string, string][]) {
  const r = await t.api.post(CRDS, body);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body).toMatchObject({ kind: "Status", reason: "Invalid", code: 422 });
  const causes = r.body.details.causes as Cause[];
  expect(causes.map((c) => [c.field, c.message])).toEqual(expected);
  expect((await t.api.get(`${CRDS}/${body.metadata.name}`)).status).toBe(404);
}

const v0 = "spec.versions[0]";
const root = `${v0}.schema.openAPIV3Schema`;

describe("CustomResourceDefinition: a good definition", () => {
  it("is stored, with the storage version recorded in status.storedVersions", async () => {
    const body = crd((c) => {
      c.spec.versions[0].subresources = {
        status: {},
        scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
      };
      c.spec.versions[0].additionalPrinterColumns = [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }];
      c.spec.versions[0].selectableFields = [{ jsonPath: ".spec.mode" }];
      c.spec.versions[0].schema.openAPIV3Schema.properties.spec["x-orch-validations"] = [
        { rule: "self.replicas >= 0", message: "no negative replicas" },
      ];
    });
    const r = await t.api.post(CRDS, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.status.storedVersions).toEqual(["v1"]);
    expect(r.body.spec.conversion).toEqual({ strategy: "None" });
  });
});

describe("CustomResourceDefinition: names", () => {
  it("metadata.name must be <plural>.<group> → 422 metadata.name", async () => {
    await refused(
      crd((c) => (c.metadata.name = "gadgets.example.com")),
      [["metadata.name", 'Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group']],
    );
  });

  it("plural, singular, shortNames are DNS-1035 labels; kind and listKind differ → 422 spec.names.*", async () => {
    await refused(
      crd((c) => {
        c.spec.names.shortNames = ["Bad_Short"];
        c.spec.names.listKind = "Widget";
      }),
      [
        [
          "spec.names.shortNames[0]",
          "Invalid value: \"Bad_Short\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ],
        ["spec.names.listKind", 'Invalid value: "Widget": kind and listKind may not be the same'],
      ],
    );
  });

  it("the group has a dot → 422 spec.group", async () => {
    const body = crd((c) => {
      c.spec.group = "example";
      c.metadata.name = "widgets.example";
    });
    await refused(body, [["spec.group", 'Invalid value: "example": should be a domain with at least one dot']]);
  });
});

describe("CustomResourceDefinition: scope and versions", () => {
  it("scope is Cluster or Namespaced → 422 spec.scope", async () => {
    await refused(
      crd((c) => (c.spec.scope = "Global")),
      [["spec.scope", 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"']],
    );
  });

  it("exactly one storage version, unique names → 422 spec.versions", async () => {
    const second = (c: any) => ({ ...structuredClone(c.spec.versions[0]), name: "v1" });
    const r = await t.api.post(
      CRDS,
      crd((c) => c.spec.versions.push(second(c))),
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((x: Cause) => [x.field, x.message.replace(/^Invalid value: .*: (must)/, "$1")])).toEqual([
      ["spec.versions", "must contain unique version names"],
      ["spec.versions", "must have exactly one version marked as storage version"],
    ]);
  });

  it("each version has a schema → 422 …schema.openAPIV3Schema", async () => {
    await refused(
      crd((c) => delete c.spec.versions[0].schema),
      [[root, "Required value: schemas are required"]],
    );
  });
});

describe("CustomResourceDefinition: structural schemas", () => {
  it("every field has a type; the root is an object → 422 at the schema path", async () => {
    await refused(
      crd((c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode = { description: "no type" })),
      [[`${root}.properties[spec].properties[mode].type`, "Required value: must not be empty for specified object fields"]],
    );
  });

  it("root metadata may only restrict name and generateName → 422 properties[metadata]", async () => {
    await refused(
      crd(
        (c) =>
          (c.spec.versions[0].schema.openAPIV3Schema.properties.metadata = { type: "object", properties: { labels: { type: "object" } } }),
      ),
      [
        [
          `${root}.properties[metadata]`,
          "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
        ],
      ],
    );
  });

  it("additionalProperties excludes properties, and is never false → 422", async () => {
    await refused(
      crd((c) => {
        c.spec.versions[0].schema.openAPIV3Schema.properties.spec.additionalProperties = { type: "string" };
        c.spec.versions[0].schema.openAPIV3Schema.properties.status.additionalProperties = false;
      }),
      [
        [`${root}.properties[spec].additionalProperties`, "Forbidden: additionalProperties and properties are mutual exclusive"],
        [`${root}.properties[status].additionalProperties`, "Forbidden: additionalProperties cannot be set to false"],
      ],
    );
  });

  it("list-type map needs keys that are item properties → 422 x-orch-list-map-keys", async () => {
    await refused(
      crd(
        (c) =>
          (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.ports = {
            type: "array",
            "x-orch-list-type": "map",
            items: { type: "object", properties: { name: { type: "string" } } },
          }),
      ),
      [[`${root}.properties[spec].properties[ports].x-orch-list-map-keys`, "Required value: must not be empty if x-orch-list-type is map"]],
    );
  });

  it("a pattern is a valid regular expression → 422 pattern", async () => {
    const r = await t.api.post(
      CRDS,
      crd((c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.pattern = "(")),
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].field).toBe(`${root}.properties[spec].properties[mode].pattern`);
    expect(r.body.details.causes[0].message).toMatch(/^Invalid value: "\(": must be a valid regular expression, but isn't: /);
  });
});

describe("CustomResourceDefinition: validation rules", () => {
  it("a rule that does not compile → 422 x-orch-validations[i].rule with the CEL message", async () => {
    const body = crd(
      (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec["x-orch-validations"] = [{ rule: "self.nope > 0" }]),
    );
    const r = await t.api.post(CRDS, body);
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((x: Cause) => x.field)).toEqual([`${root}.properties[spec].x-orch-validations[0].rule`]);
    expect(r.body.details.causes[0].message).toContain("compilation failed: ERROR: <input>:1:5:");
    expect((await t.api.get(`${CRDS}/${body.metadata.name}`)).status).toBe(404);
  });

  it("a rule must be boolean; reason and fieldPath must be valid → 422", async () => {
    const body = crd(
      (c) =>
        (c.spec.versions[0].schema.openAPIV3Schema.properties.spec["x-orch-validations"] = [
          { rule: "self.mode", reason: "Teapot" },
          { rule: "self.replicas > 0", fieldPath: ".nope" },
        ]),
    );
    const r = await t.api.post(CRDS, body);
    expect(r.status).toBe(422);
    const at = `${root}.properties[spec].x-orch-validations`;
    expect(
      r.body.details.causes.map((x: Cause) => [x.field, x.message.replace(/^Invalid value: \{.*?\}: /, "Invalid value: <rule>: ")]),
    ).toEqual([
      [`${at}[0].rule`, "Invalid value: <rule>: cel expression must evaluate to a bool"],
      [
        `${at}[0].reason`,
        'Unsupported value: "Teapot": supported values: "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"',
      ],
      [`${at}[1].fieldPath`, 'Invalid value: ".nope": fieldPath must be a valid path: does not refer to a valid field'],
    ]);
  });
});

describe("CustomResourceDefinition: conversion, subresources, columns, selectable fields", () => {
  it("a Webhook strategy needs a client config and review versions → 422 spec.conversion.*", async () => {
    await refused(
      crd((c) => (c.spec.conversion = { strategy: "Webhook" })),
      [
        ["spec.conversion.webhookClientConfig", "Required value: required when strategy is set to Webhook"],
        ["spec.conversion.conversionReviewVersions", "Required value"],
      ],
    );
  });

  it("scale paths sit under .spec and .status → 422 subresources.scale.*", async () => {
    await refused(
      crd(
        (c) =>
          (c.spec.versions[0].subresources = { scale: { specReplicasPath: ".status.replicas", statusReplicasPath: "status.replicas" } }),
      ),
      [
        [`${v0}.subresources.scale.specReplicasPath`, 'Invalid value: ".status.replicas": should be a json path under .spec'],
        [`${v0}.subresources.scale.statusReplicasPath`, 'Invalid value: "status.replicas": must be a simple json path starting with .'],
      ],
    );
  });

  it("printer columns have a known type and a json path → 422 additionalPrinterColumns[i].*", async () => {
    await refused(
      crd((c) => (c.spec.versions[0].additionalPrinterColumns = [{ name: "X", type: "float", jsonPath: "spec.x" }])),
      [
        [`${v0}.additionalPrinterColumns[0].type`, 'Invalid value: "float": must be one of boolean,date,integer,number,string'],
        [`${v0}.additionalPrinterColumns[0].jsonPath`, 'Invalid value: "spec.x": must be a simple json path starting with .'],
      ],
    );
  });

  it("selectable fields point to scalar fields outside metadata, once each → 422 selectableFields[i].jsonPath", async () => {
    await refused(
      crd(
        (c) =>
          (c.spec.versions[0].selectableFields = [{ jsonPath: ".spec.mode" }, { jsonPath: ".spec.labels" }, { jsonPath: ".spec.mode" }]),
      ),
      [
        [
          `${v0}.selectableFields[1].jsonPath`,
          'Invalid value: ".spec.labels": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ],
        [`${v0}.selectableFields[2].jsonPath`, 'Duplicate value: ".spec.mode"'],
      ],
    );
  });
});

describe("CustomResourceDefinition: updates", () => {
  async function created() {
    const body = crd();
    const r = await t.api.post(CRDS, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  }

  it("a stored version cannot be removed from spec.versions → 422 status.storedVersions[i]", async () => {
    const c = await created();
    c.spec.versions = [
      { ...c.spec.versions[0], storage: false },
      { ...structuredClone(c.spec.versions[0]), name: "v2", storage: true },
    ];
    const moved = await t.api.put(`${CRDS}/${c.metadata.name}`, c);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.status.storedVersions).toEqual(["v1", "v2"]);
    moved.body.spec.versions = [moved.body.spec.versions[1]];
    const r = await t.api.put(`${CRDS}/${c.metadata.name}`, moved.body);
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((x: Cause) => [x.field, x.message])).toEqual([
      ["status.storedVersions[0]", 'Invalid value: "v1": must appear in spec.versions'],
    ]);
    expect((await t.api.get(`${CRDS}/${c.metadata.name}`)).body.spec.versions).toHaveLength(2);
  });

  it("group and plural never change; scope not once established → 422 field is immutable", async () => {
    const c = await created();
    c.status = {
      ...c.status,
      conditions: [
        {
          type: "Established",
          status: "True",
          reason: "InitialNamesAccepted",
          message: "",
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        },
      ],
    };
    const established = await t.api.put(`${CRDS}/${c.metadata.name}/status`, c);
    expect(established.status, JSON.stringify(established.body)).toBe(200);
    const changed = structuredClone(established.body);
    changed.spec.scope = "Cluster";
    const r = await t.api.put(`${CRDS}/${c.metadata.name}`, changed);
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((x: Cause) => [x.field, x.message])).toEqual([
      ["spec.scope", 'Invalid value: "Cluster": field is immutable'],
    ]);
    expect((await t.api.get(`${CRDS}/${c.metadata.name}`)).body.spec.scope).toBe("Namespaced");
  });
});
