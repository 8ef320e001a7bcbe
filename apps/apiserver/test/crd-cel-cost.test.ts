// The cost limits of CRD validation rules, through the real apiserver under the kubernetes profile:
// at create, a rule whose estimated cost times how often it can run (the maxItems/maxProperties above
// it, or what fits in a request when unbounded) exceeds 10,000,000 is refused, and so is a schema whose
// rules together exceed 100,000,000, with Kubernetes' messages at Kubernetes' field paths; bounding the
// list makes the same CRD acceptable. At run time, all rules of one object share a budget of
// 10,000,000, and exhausting it refuses the object with Kubernetes' message.
import { describe, expect, it } from "vitest";
import { establishCrd, freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer({ profile: "kubernetes" });
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
let groups = 0;

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

function crd(spec: Record<string, unknown>) {
  const group = `cost${++groups}.example.com`;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec } } } }],
    },
  };
}

const SCHEMA = "spec.versions[0].schema.openAPIV3Schema";
const HINT = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

/**
 * `spec.tags`: strings of at most 2,500 characters, each with `rules` (one evaluation of
 * `self.contains('a')` is estimated at ceil(4 × 2,500 × 0.1) × ceil(1 × 0.1) + 1 = 1,001).
 */
const tagsSpec = (rules: string[], maxItems?: number) => ({
  type: "object",
  properties: {
    tags: {
      type: "array",
      ...(maxItems === undefined ? {} : { maxItems }),
      items: { type: "string", maxLength: 2500, "x-kubernetes-validations": rules.map((rule) => ({ rule })) },
    },
  },
});
const tagsRule = `${SCHEMA}.properties[spec].properties[tags].items.x-kubernetes-validations`;

describe("estimated rule cost at CRD create", () => {
  it("refuses a rule under an unbounded list, and accepts it once the list has maxItems", async () => {
    // Unbounded: the rule can run once per 3-byte string in a 3 MiB request, 1,048,576 times.
    const unbounded = await t.api.post(CRDS, crd(tagsSpec(["self.contains('a')"])));
    expect(unbounded.status, unbounded.text).toBe(422);
    expect(unbounded.body.reason).toBe("Invalid");
    // 1,049,624,576 also exceeds the schema's total, which names the rule a second time (as Kubernetes does).
    expect(causes(unbounded.body)).toEqual([
      `${tagsRule}[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${HINT}`,
      `${tagsRule}[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${SCHEMA}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 10.5x ${HINT}`,
    ]);

    // 20,000 items: 20,020,000, twice the limit.
    const tooMany = await t.api.post(CRDS, crd(tagsSpec(["self.contains('a')"], 20000)));
    expect(tooMany.status, tooMany.text).toBe(422);
    expect(causes(tooMany.body)).toEqual([`${tagsRule}[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 2.0x ${HINT}`]);

    // 10,000 items: 10,010,000, just above (Go's %f below 1.5x).
    const justAbove = await t.api.post(CRDS, crd(tagsSpec(["self.contains('a')"], 10000)));
    expect(causes(justAbove.body)).toEqual([
      `${tagsRule}[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.001000x ${HINT}`,
    ]);

    const bounded = await t.api.post(CRDS, crd(tagsSpec(["self.contains('a')"], 9000)));
    expect(bounded.status, bounded.text).toBe(201);
  });

  it("refuses an O(n²) rule on a list unless the list is small", async () => {
    const spec = (maxItems?: number) => ({
      type: "object",
      "x-kubernetes-validations": [{ rule: "self.names.all(x, self.names.exists_one(y, x == y))", message: "names must be unique" }],
      properties: { names: { type: "array", ...(maxItems === undefined ? {} : { maxItems }), items: { type: "string", maxLength: 63 } } },
    });
    const refused = await t.api.post(CRDS, crd(spec()));
    expect(refused.status, refused.text).toBe(422);
    const rule = `${SCHEMA}.properties[spec].x-kubernetes-validations[0].rule`;
    expect(causes(refused.body)).toEqual([
      `${rule}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${HINT}`,
      `${rule}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${SCHEMA}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${HINT}`,
    ]);
    const accepted = await t.api.post(CRDS, crd(spec(64)));
    expect(accepted.status, accepted.text).toBe(201);
  });

  it("refuses rules that are each within the limit but together exceed the schema's budget", async () => {
    // Twelve rules of 9,009,000 each: 108,108,000 in all. The four most expensive are named.
    const rules = "abcdefghijkl".split("").map((c) => `self.contains('${c}')`);
    const refused = await t.api.post(CRDS, crd(tagsSpec(rules, 9000)));
    expect(refused.status, refused.text).toBe(422);
    expect(causes(refused.body)).toEqual([
      ...[0, 1, 2, 3].map(
        (i) =>
          `${tagsRule}[${i}].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      ),
      `${SCHEMA}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.081080x ${HINT}`,
    ]);
    const fewer = await t.api.post(CRDS, crd(tagsSpec(rules.slice(0, 11), 9000)));
    expect(fewer.status, fewer.text).toBe(201);
  });
});

describe("runtime cost budget", () => {
  it("refuses an object whose rules together run out of the budget, and stops evaluating", async () => {
    // Twenty O(n²) rules over 300 numbers: each call stays under the per-call limit, all of them
    // together spend more than the 10,000,000 one object may use.
    const rules = Array.from({ length: 20 }, (_, i) => ({ rule: `self.values.all(x, self.values.all(y, x == y || x != y)) || ${i} < 0` }));
    const created = await t.api.post(
      CRDS,
      crd({
        type: "object",
        "x-kubernetes-validations": rules,
        properties: { values: { type: "array", maxItems: 300, items: { type: "integer" } } },
      }),
    );
    expect(created.status, created.text).toBe(201);
    const ns = await freshNamespace(t.api);
    const { group } = created.body.spec;
    const path = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    await establishCrd(t.api, CRDS, created.body, path);
    const widget = (name: string, values: number[]) => ({
      apiVersion: `${group}/v1`,
      kind: "Widget",
      metadata: { name },
      spec: { values },
    });

    const small = await t.api.post(path, widget("small", [1, 2, 3]));
    expect(small.status, small.text).toBe(201);

    const large = await t.api.post(
      path,
      widget(
        "large",
        Array.from({ length: 300 }, (_, i) => i),
      ),
    );
    expect(large.status, large.text).toBe(422);
    expect(causes(large.body)).toEqual([
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    expect((await t.api.get(`${path}/large`)).status).toBe(404);
  });
});
