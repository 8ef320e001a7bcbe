// Custom resources served from CustomResourceDefinitions: the apiserver registers a CRD's kinds once it
// is Established (here the test sets the condition through /status itself, playing the crd-controller)
// and serves them through the generic store: CRUD, watch, selectors, pruning, defaults, validation,
// /status, /scale, printer columns, several versions and clean-up on deletion.
import { describe, expect, it } from "vitest";
import { type Client, freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();

const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";

let groupCounter = 0;
/** A group of its own per test, so CRDs of different tests never meet. */
const freshGroup = () => `g${++groupCounter}.example.com`;

const cronTabSchema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        cronSpec: { type: "string" },
        image: { type: "string" },
        replicas: { type: "integer", minimum: 0, default: 1 },
      },
    },
    status: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        labelSelector: { type: "string" },
        conditions: {
          type: "array",
          items: { type: "object", properties: { type: { type: "string" }, status: { type: "string" } } },
        },
      },
    },
  },
};

interface VersionOptions {
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
}

function version(name: string, o: VersionOptions = {}) {
  return {
    name,
    served: o.served ?? true,
    storage: o.storage ?? true,
    ...(o.deprecated ? { deprecated: true } : {}),
    schema: { openAPIV3Schema: cronTabSchema },
    subresources: {
      status: {},
      scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.labelSelector" },
    },
    additionalPrinterColumns: [
      { name: "Spec", type: "string", jsonPath: ".spec.cronSpec" },
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
      { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
    selectableFields: [{ jsonPath: ".spec.image" }],
  };
}

function cronTabCrd(group: string, versions: object[] = [version("v1")], scope = "Namespaced") {
  return {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `crontabs.${group}` },
    spec: {
      group,
      scope,
      names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"], categories: ["all"] },
      versions,
    },
  };
}

/** What the crd-controller does: accept the names and establish the CRD, through /status. */
async function establish(api: Client, name: string) {
  const crd = (await api.get(`${CRDS}/${name}`)).body;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  crd.status = {
    ...crd.status,
    acceptedNames: crd.spec.names,
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
  const r = await api.put(`${CRDS}/${name}/status`, crd);
  expect(r.status, r.text).toBe(200);
}

async function defineCronTabs(api: Client, group: string, versions: object[] = [version("v1")], scope = "Namespaced") {
  const created = await api.post(CRDS, cronTabCrd(group, versions, scope));
  expect(created.status, created.text).toBe(201);
  await establish(api, `crontabs.${group}`);
}

const cronTab = (group: string, name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}, v = "v1") => ({
  apiVersion: `${group}/${v}`,
  kind: "CronTab",
  metadata: { name, labels },
  spec: { cronSpec: "* * * * */5", image: "my-cron-image", ...spec },
});

const collection = (group: string, ns: string, v = "v1") => `/apis/${group}/${v}/namespaces/${ns}/crontabs`;

describe("serving custom resources", () => {
  it("serves a CRD's kind only once it is Established, and lists it in discovery", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(CRDS, cronTabCrd(group))).status).toBe(201);
    expect((await t.api.get(collection(group, ns))).status).toBe(404);
    expect((await t.api.get("/apis")).body.groups.map((g: { name: string }) => g.name)).not.toContain(group);

    await establish(t.api, `crontabs.${group}`);
    expect((await t.api.get(collection(group, ns))).status).toBe(200);
    const groups = (await t.api.get("/apis")).body.groups;
    expect(groups.find((g: { name: string }) => g.name === group)).toEqual({
      name: group,
      versions: [{ groupVersion: `${group}/v1`, version: "v1" }],
      preferredVersion: { groupVersion: `${group}/v1`, version: "v1" },
    });
    const resources = (await t.api.get(`/apis/${group}/v1`)).body.resources;
    expect(resources.map((r: { name: string }) => r.name)).toEqual(["crontabs", "crontabs/scale", "crontabs/status"]);
    expect(resources[0]).toMatchObject({
      singularName: "crontab",
      namespaced: true,
      kind: "CronTab",
      shortNames: ["ct"],
      categories: ["all"],
    });
    const aggregated = await t.api.get("/apis", { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" });
    const entry = aggregated.body.items.find((g: { metadata: { name: string } }) => g.metadata.name === group);
    expect(entry.versions[0].resources[0]).toMatchObject({
      resource: "crontabs",
      responseKind: { group, version: "v1", kind: "CronTab" },
      scope: "Namespaced",
      shortNames: ["ct"],
    });
  });

  it("creates, reads, lists with selectors, updates and deletes custom objects", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const created = await t.api.post(collection(group, ns), {
      ...cronTab(group, "a", {}, { tier: "front" }),
      status: { replicas: 9 },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: `${group}/v1`,
      kind: "CronTab",
      metadata: { name: "a", namespace: ns, generation: 1 },
    });
    // With a status subresource, create ignores status.
    expect(created.body.status).toBeUndefined();
    await t.api.post(collection(group, ns), cronTab(group, "b", { image: "other" }, { tier: "back" }));

    expect((await t.api.get(`${collection(group, ns)}/a`)).body.spec.cronSpec).toBe("* * * * */5");
    const byLabel = await t.api.get(`${collection(group, ns)}?labelSelector=tier%3Dfront`);
    expect(byLabel.body.kind).toBe("CronTabList");
    expect(byLabel.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(["a"]);
    const byField = await t.api.get(`${collection(group, ns)}?fieldSelector=spec.image%3Dother`);
    expect(byField.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(["b"]);
    const unknownField = await t.api.get(`${collection(group, ns)}?fieldSelector=spec.cronSpec%3Dx`);
    expect(unknownField.status).toBe(400);
    const all = await t.api.get(`/apis/${group}/v1/crontabs`);
    expect(all.body.items).toHaveLength(2);

    const current = (await t.api.get(`${collection(group, ns)}/a`)).body;
    const updated = await t.api.put(`${collection(group, ns)}/a`, {
      ...current,
      spec: { ...current.spec, image: "new" },
      status: { replicas: 3 },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.metadata.generation).toBe(2);
    expect(updated.body.status).toBeUndefined();
    const patched = await t.api.patch(
      `${collection(group, ns)}/a`,
      [{ op: "replace", path: "/spec/cronSpec", value: "0 * * * *" }],
      "application/json-patch+json",
    );
    expect(patched.body.spec.cronSpec).toBe("0 * * * *");
    expect(patched.body.metadata.generation).toBe(3);
    // Metadata alone is not a new generation.
    const labelled = await t.api.patch(`${collection(group, ns)}/a`, { metadata: { labels: { extra: "yes" } } });
    expect(labelled.body.metadata.generation).toBe(3);

    const deleted = await t.api.delete(`${collection(group, ns)}/a`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: "Status", status: "Success", details: { name: "a", group, kind: "crontabs" } });
    expect((await t.api.get(`${collection(group, ns)}/a`)).status).toBe(404);
    const collectionDeleted = await t.api.delete(collection(group, ns));
    expect(collectionDeleted.status).toBe(200);
    expect((await t.api.get(collection(group, ns))).body.items).toEqual([]);
  });

  it("writes status only through /status, without a new generation", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const created = (await t.api.post(collection(group, ns), cronTab(group, "a"))).body;
    const r = await t.api.put(`${collection(group, ns)}/a/status`, {
      ...created,
      spec: { ...created.spec, image: "ignored" },
      status: { replicas: 2, conditions: [{ type: "Ready", status: "True" }] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toEqual({ replicas: 2, conditions: [{ type: "Ready", status: "True" }] });
    expect(r.body.spec.image).toBe("my-cron-image");
    expect(r.body.metadata.generation).toBe(1);
    expect((await t.api.get(`${collection(group, ns)}/a/status`)).body.status.replicas).toBe(2);
  });

  it("without a status subresource, status is written on the main endpoint and bumps the generation", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    const { subresources: _none, ...plain } = version("v1");
    await defineCronTabs(t.api, group, [plain]);
    const created = await t.api.post(collection(group, ns), { ...cronTab(group, "a"), status: { replicas: 1 } });
    expect(created.body.status).toEqual({ replicas: 1 });
    const updated = await t.api.patch(`${collection(group, ns)}/a`, { status: { replicas: 2 } });
    expect(updated.body.status).toEqual({ replicas: 2 });
    expect(updated.body.metadata.generation).toBe(2);
    expect((await t.api.get(`${collection(group, ns)}/a/status`)).status).toBe(404);
    expect((await t.api.get(`${collection(group, ns)}/a/scale`)).status).toBe(404);
  });

  it("prunes unknown fields (warning, or 400 under fieldValidation=Strict), defaults and validates", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const pruned = await t.api.post(collection(group, ns), { ...cronTab(group, "a", { color: "red" }), extra: true });
    expect(pruned.status, pruned.text).toBe(201);
    expect(pruned.body.spec).toEqual({ cronSpec: "* * * * */5", image: "my-cron-image", replicas: 1 });
    expect(pruned.body.extra).toBeUndefined();
    expect(pruned.warnings.sort()).toEqual(['unknown field "extra"', 'unknown field "spec.color"']);

    const strict = await t.api.post(`${collection(group, ns)}?fieldValidation=Strict`, cronTab(group, "b", { color: "red" }));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      `CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.color"`,
    );

    const invalid = await t.api.post(collection(group, ns), cronTab(group, "c", { replicas: -1 }));
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ reason: "Invalid", details: { name: "c", group, kind: "CronTab" } });
    expect(invalid.body.message).toMatch(new RegExp(`^CronTab\\.${group.replace(/\./g, "\\.")} "c" is invalid: `));
    expect(invalid.body.details.causes.map((c: { field: string }) => c.field)).toContain("spec.replicas");

    const badName = await t.api.post(collection(group, ns), cronTab(group, "Not_A_Name"));
    expect(badName.status).toBe(422);
    expect(badName.body.details.causes[0].field).toBe("metadata.name");
  });

  it("applies a default added to the schema after objects exist when they are read, without writing them", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const created = await t.api.post(collection(group, ns), cronTab(group, "a"));
    expect(created.status, created.text).toBe(201);
    expect(created.body.spec.policy).toBeUndefined();
    const watch = await t.api.watch(`${collection(group, ns)}?resourceVersion=${created.body.metadata.resourceVersion}`);

    const crd = (await t.api.get(`${CRDS}/crontabs.${group}`)).body;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.policy = { type: "string", default: "Allow" };
    expect((await t.api.put(`${CRDS}/crontabs.${group}`, crd)).status).toBe(200);

    const read = await t.api.get(`${collection(group, ns)}/a`);
    expect(read.body.spec).toMatchObject({ policy: "Allow", replicas: 1 });
    // Defaulting on read is not a write: the object keeps its resourceVersion.
    expect(read.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    const listed = await t.api.get(collection(group, ns));
    expect(listed.body.items[0].spec.policy).toBe("Allow");
    await t.api.patch(`${collection(group, ns)}/a`, { spec: { image: "other" } });
    const [modified] = await watch.take(1);
    watch.close();
    expect(modified!.object.spec).toMatchObject({ image: "other", policy: "Allow" });
  });

  it("watches custom objects, with label selectors", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const list = await t.api.get(collection(group, ns));
    const watch = await t.api.watch(
      `${collection(group, ns)}?resourceVersion=${list.body.metadata.resourceVersion}&labelSelector=watched%3Dyes`,
    );
    expect(watch.status).toBe(200);
    await t.api.post(collection(group, ns), cronTab(group, "ignored"));
    await t.api.post(collection(group, ns), cronTab(group, "seen", {}, { watched: "yes" }));
    await t.api.patch(`${collection(group, ns)}/seen`, { spec: { image: "v2" } });
    await t.api.delete(`${collection(group, ns)}/seen`);
    const events = await watch.take(3);
    watch.close();
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.apiVersion])).toEqual([
      ["ADDED", "seen", `${group}/v1`],
      ["MODIFIED", "seen", `${group}/v1`],
      ["DELETED", "seen", `${group}/v1`],
    ]);
  });

  it("serves /scale from the declared paths", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const created = (await t.api.post(collection(group, ns), cronTab(group, "a", { replicas: 2 }))).body;
    await t.api.put(`${collection(group, ns)}/a/status`, { ...created, status: { replicas: 1, labelSelector: "app=cron" } });
    const scale = await t.api.get(`${collection(group, ns)}/a/scale`);
    expect(scale.body).toMatchObject({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      spec: { replicas: 2 },
      status: { replicas: 1, selector: "app=cron" },
    });
    const patched = await t.api.patch(`${collection(group, ns)}/a/scale`, { spec: { replicas: 5 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.spec.replicas).toBe(5);
    const obj = (await t.api.get(`${collection(group, ns)}/a`)).body;
    expect(obj.spec.replicas).toBe(5);
    expect(obj.metadata.generation).toBe(2);
    const negative = await t.api.patch(`${collection(group, ns)}/a/scale`, { spec: { replicas: -1 } });
    expect(negative.status).toBe(422);
  });

  it("prints the declared columns as a Table", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    const created = (await t.api.post(collection(group, ns), cronTab(group, "a", { replicas: 3 }))).body;
    await t.api.put(`${collection(group, ns)}/a/status`, { ...created, status: { conditions: [{ type: "Ready", status: "True" }] } });
    await t.api.post(collection(group, ns), cronTab(group, "b"));
    const table = await t.api.get(collection(group, ns), { accept: TABLE });
    expect(table.status).toBe(200);
    expect(table.body.columnDefinitions.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual([
      ["Name", "string"],
      ["Spec", "string"],
      ["Replicas", "integer"],
      ["Ready", "string"],
      ["Age", "date"],
    ]);
    expect(table.body.columnDefinitions[1].description).toBe("Custom resource definition column (in JSONPath format): .spec.cronSpec");
    const rows = table.body.rows.map((r: { cells: unknown[] }) => r.cells);
    expect(rows[0].slice(0, 4)).toEqual(["a", "* * * * */5", 3, "True"]);
    expect(rows[1].slice(0, 4)).toEqual(["b", "* * * * */5", 1, null]);
    expect(rows[0][4]).toMatch(/^\d+s$/);
  });

  it("prints only the age when a version declares no columns", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group, [{ ...version("v1"), additionalPrinterColumns: [] }]);
    await t.api.post(collection(group, ns), cronTab(group, "a"));
    const table = await t.api.get(`${collection(group, ns)}/a`, { accept: TABLE });
    expect(table.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Age"]);
  });

  it("serves several versions from one storage, each object in the version asked for", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group, [version("v1beta1", { storage: false, deprecated: true }), version("v1")]);
    const created = await t.api.post(collection(group, ns, "v1beta1"), cronTab(group, "a", {}, {}, "v1beta1"));
    expect(created.status, created.text).toBe(201);
    expect(created.body.apiVersion).toBe(`${group}/v1beta1`);
    expect(created.warnings).toContain(`${group}/v1beta1 CronTab is deprecated; use ${group}/v1 CronTab`);
    const wrongVersion = await t.api.post(collection(group, ns), cronTab(group, "b", {}, {}, "v1beta1"));
    expect(wrongVersion.status).toBe(400);

    expect((await t.api.get(`${collection(group, ns)}/a`)).body.apiVersion).toBe(`${group}/v1`);
    expect((await t.api.get(`${collection(group, ns, "v1beta1")}/a`)).body.apiVersion).toBe(`${group}/v1beta1`);
    const listed = await t.api.get(collection(group, ns));
    expect(listed.body.items.map((o: { apiVersion: string }) => o.apiVersion)).toEqual([`${group}/v1`]);
    const watch = await t.api.watch(collection(group, ns, "v1beta1"));
    const [initial] = await watch.take(1);
    await t.api.patch(`${collection(group, ns)}/a`, { spec: { image: "from-v1" } });
    const [modified] = await watch.take(1);
    watch.close();
    expect(initial!.object.apiVersion).toBe(`${group}/v1beta1`);
    expect(modified!.object).toMatchObject({ apiVersion: `${group}/v1beta1`, spec: { image: "from-v1" } });
    const groupDoc = (await t.api.get(`/apis/${group}`)).body;
    expect(groupDoc.versions.map((v: { version: string }) => v.version)).toEqual(["v1", "v1beta1"]);

    // A version no longer served is gone; the other still serves the same objects.
    const crd = (await t.api.get(`${CRDS}/crontabs.${group}`)).body;
    crd.spec.versions[0].served = false;
    expect((await t.api.put(`${CRDS}/crontabs.${group}`, crd)).status).toBe(200);
    expect((await t.api.get(`${collection(group, ns, "v1beta1")}/a`)).status).toBe(404);
    expect((await t.api.get(`${collection(group, ns)}/a`)).status).toBe(200);
  });

  it("serves cluster-scoped custom resources", async () => {
    const group = freshGroup();
    await defineCronTabs(t.api, group, [version("v1")], "Cluster");
    const path = `/apis/${group}/v1/crontabs`;
    const created = await t.api.post(path, cronTab(group, "global"));
    expect(created.status, created.text).toBe(201);
    expect(created.body.metadata.namespace).toBeUndefined();
    expect((await t.api.get(`${path}/global`)).status).toBe(200);
    expect((await t.api.get(`/apis/${group}/v1/namespaces/default/crontabs`)).status).toBe(404);
  });

  it("deleting a CRD holds it with the clean-up finalizer, refuses new instances, and withdraws the kind when it goes", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    await t.api.post(collection(group, ns), cronTab(group, "a"));
    const name = `crontabs.${group}`;
    const deleting = await t.api.delete(`${CRDS}/${name}`);
    expect(deleting.status).toBe(200);
    expect(deleting.body.metadata.finalizers).toEqual(["customresourcecleanup.apiextensions.orch.io"]);
    expect(deleting.body.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.body.status.conditions.find((c: { type: string }) => c.type === "Terminating")).toMatchObject({
      status: "True",
      reason: "InstanceDeletionPending",
      message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    });

    const refused = await t.api.post(collection(group, ns), cronTab(group, "b"));
    expect(refused.status).toBe(405);
    expect(refused.body).toMatchObject({
      reason: "MethodNotAllowed",
      message: "create not allowed while custom resource definition is terminating",
    });
    // Existing instances are still served, so whoever cleans up can delete them.
    expect((await t.api.delete(`${collection(group, ns)}/a`)).status).toBe(200);

    const crd = (await t.api.get(`${CRDS}/${name}`)).body;
    const released = await t.api.patch(`${CRDS}/${name}`, {
      metadata: { finalizers: null, resourceVersion: crd.metadata.resourceVersion },
    });
    expect(released.status, released.text).toBe(200);
    expect((await t.api.get(`${CRDS}/${name}`)).status).toBe(404);
    expect((await t.api.get(collection(group, ns))).status).toBe(404);
    expect((await t.api.get("/apis")).body.groups.map((g: { name: string }) => g.name)).not.toContain(group);
  });

  it("keeps serving established CRDs after a restart", async () => {
    const group = freshGroup();
    const ns = await freshNamespace(t.api);
    await defineCronTabs(t.api, group);
    await t.api.post(collection(group, ns), cronTab(group, "kept"));
    await t.restart();
    expect((await t.api.get(`${collection(group, ns)}/kept`)).body.spec.image).toBe("my-cron-image");
  });
});
