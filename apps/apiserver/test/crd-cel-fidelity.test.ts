// CRDs whose rules and patterns orch used to refuse at create (issue 11): Go RE2 patterns, has() on an
// indexed element, the IP/CIDR/format/URL libraries, self == oldSelf on objects, set lists compared
// regardless of order. Each installs through the real apiserver, and objects are accepted or refused
// with Kubernetes' messages.
import { describe, expect, it } from "vitest";
import { type Client, freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();

const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
let groupCounter = 0;
const freshGroup = () => `cel${++groupCounter}.example.com`;

const gatewaySchema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      "x-orch-validations": [
        { rule: "!has(self.rules) || size(self.rules) == 0 || has(self.rules[0].matches)", message: "the first rule needs matches" },
        { rule: "!has(self.address) || isIP(self.address)", message: "address must be an IP address" },
        {
          rule: "!has(self.network) || (isCIDR(self.network) && cidr(self.network).containsIP(self.address))",
          message: "address must be in network",
        },
        {
          rule: "!has(self.hostname) || !format.dns1123Subdomain().validate(self.hostname).hasValue()",
          message: "hostname must be a DNS subdomain",
        },
        { rule: "!has(self.url) || (isURL(self.url) && url(self.url).getScheme() == 'https')", message: "url must be https" },
        { rule: "!has(self.mode) || self.mode.matches('^(?i)(abort|warn)$')", message: "mode must be abort or warn" },
      ],
      properties: {
        mode: { type: "string", pattern: "^(?i)(abort|warn)?$" },
        code: { type: "string", pattern: "^[[:alpha:]]+\\z" },
        address: { type: "string" },
        network: { type: "string" },
        // Bounded, as Kubernetes requires: validate() on an unbounded string is estimated over the cost limit.
        hostname: { type: "string", maxLength: 253 },
        url: { type: "string" },
        tags: { type: "array", items: { type: "string" }, "x-orch-list-type": "set" },
        immutable: {
          type: "object",
          "x-orch-validations": [{ rule: "self == oldSelf", message: "immutable may not change" }],
          properties: { tags: { type: "array", items: { type: "string" }, "x-orch-list-type": "set" }, owner: { type: "string" } },
        },
        rules: { type: "array", items: { type: "object", properties: { matches: { type: "string" } } } },
      },
    },
  },
};

async function defineGateways(api: Client, group: string) {
  const crd = {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gateways.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "gateways", singular: "gateway", kind: "Gateway", listKind: "GatewayList" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: gatewaySchema } }],
    },
  };
  const created = await api.post(CRDS, crd);
  expect(created.status, created.text).toBe(201);
  const stored = (await api.get(`${CRDS}/gateways.${group}`)).body;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  stored.status = {
    acceptedNames: stored.spec.names,
    conditions: [
      { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found", lastTransitionTime: now },
      {
        type: "Established",
        status: "True",
        reason: "InitialNamesAccepted",
        message: "the initial names have been accepted",
        lastTransitionTime: now,
      },
    ],
  };
  expect((await api.put(`${CRDS}/gateways.${group}/status`, stored)).status).toBe(200);
}

const gateway = (group: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${group}/v1`,
  kind: "Gateway",
  metadata: { name },
  spec,
});

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

describe("CRDs with Kubernetes' CEL libraries and RE2 patterns", () => {
  it("installs, accepts valid objects and refuses invalid ones with Kubernetes' messages", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineGateways(t.api, group);
    const path = `/apis/${group}/v1/namespaces/${ns}/gateways`;

    const good = gateway(group, "good", {
      mode: "WARN",
      code: "abc",
      address: "10.0.0.5",
      network: "10.0.0.0/24",
      hostname: "gw.example.com",
      url: "https://example.com/hook",
      rules: [{ matches: "/" }],
      immutable: { tags: ["a", "b"], owner: "x" },
    });
    const created = await t.api.post(path, good);
    expect(created.status, created.text).toBe(201);

    const bad = await t.api.post(
      path,
      gateway(group, "bad", {
        mode: "block",
        code: "abc\n",
        address: "10.0.1.5",
        network: "10.0.0.0/24",
        hostname: "Not_A_Host",
        url: "http://example.com",
        rules: [{}],
      }),
    );
    expect(bad.status, bad.text).toBe(422);
    expect(causes(bad.body).sort()).toEqual(
      [
        "spec.code: Invalid value: \"abc\\n\": spec.code in body should match '^[[:alpha:]]+\\z'",
        "spec.mode: Invalid value: \"block\": spec.mode in body should match '^(?i)(abort|warn)?$'",
        'spec: Invalid value: "object": the first rule needs matches',
        'spec: Invalid value: "object": address must be in network',
        'spec: Invalid value: "object": hostname must be a DNS subdomain',
        'spec: Invalid value: "object": url must be https',
        'spec: Invalid value: "object": mode must be abort or warn',
      ].sort(),
    );
  });

  it("self == oldSelf on an object compares set lists regardless of order", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineGateways(t.api, group);
    const path = `/apis/${group}/v1/namespaces/${ns}/gateways`;
    const created = await t.api.post(path, gateway(group, "g", { immutable: { tags: ["a", "b"], owner: "x" } }));
    expect(created.status, created.text).toBe(201);

    const reordered = { ...created.body, spec: { immutable: { tags: ["b", "a"], owner: "x" } } };
    const same = await t.api.put(`${path}/g`, reordered);
    expect(same.status, same.text).toBe(200);

    const changed = { ...same.body, spec: { immutable: { tags: ["b", "a"], owner: "y" } } };
    const refused = await t.api.put(`${path}/g`, changed);
    expect(refused.status, refused.text).toBe(422);
    expect(causes(refused.body)).toContain('spec.immutable: Invalid value: "object": immutable may not change');
  });

  it("refuses at create a rule with a constant pattern RE2 refuses, with cel-go's message", async () => {
    const group = freshGroup();
    const schema = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: { s: { type: "string", "x-orch-validations": [{ rule: "self.matches('(a)\\\\1')" }] } },
        },
      },
    };
    const r = await t.api.post(CRDS, {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `things.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "things", singular: "thing", kind: "Thing", listKind: "ThingList" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
    });
    expect(r.status, r.text).toBe(422);
    expect(r.text).toContain("invalid matches argument");
  });
});
