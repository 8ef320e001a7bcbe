// ConfigMap (v1), Event (v1) and Event (events.<domain>/v1) against the real apiserver: Kubernetes'
// validation messages and field paths, immutability, the two Event versions over one storage, selectors,
// printer columns, and the events' time-to-live.
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, freshNamespace, startTestServer, useTestServer } from "./harness.js";

const t = useTestServer();
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const coreEvents = (ns: string) => `/api/v1/namespaces/${ns}/events`;
const newEvents = (ns: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events`;
const causes = (body: any) => body.details.causes.map((c: any) => `${c.field}: ${c.message}`);

const configMap = (name: string, fields: Record<string, unknown>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  ...fields,
});

describe("ConfigMap", () => {
  it("stores data and binaryData and prints NAME, DATA, AGE", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(
      configMaps(ns),
      configMap("settings", { data: { "a.conf": "x=1", b: "2" }, binaryData: { c: "AAE=" } }),
    );
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ "a.conf": "x=1", b: "2" });
    const table = await t.api.get(configMaps(ns), { accept: TABLE });
    expect(table.body.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Data", "Age"]);
    // Every namespace also holds the cluster CA (orch-root-ca.crt).
    const row = table.body.rows.find((r: any) => r.cells[0] === "settings");
    expect(row.cells.slice(0, 2)).toEqual(["settings", 3]);
  });

  it("refuses bad keys, a key in both maps, and more than 1 MiB, with Kubernetes' messages", async () => {
    const ns = await freshNamespace(t.api);
    const bad = await t.api.post(
      configMaps(ns),
      configMap("bad", { data: { "a b": "1", "..x": "2", same: "3" }, binaryData: { same: "AA==" } }),
    );
    expect(bad.status).toBe(422);
    expect(causes(bad.body)).toEqual([
      `data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      `data[..x]: Invalid value: "..x": must not start with '..'`,
      `data[same]: Invalid value: "same": duplicate of key present in binaryData`,
    ]);
    const big = await t.api.post(configMaps(ns), configMap("big", { data: { a: "x".repeat(600 * 1024), b: "y".repeat(600 * 1024) } }));
    expect(big.status).toBe(422);
    expect(big.body.details.causes).toEqual([
      { reason: "FieldValueTooLong", message: "Too long: may not be more than 1048576 bytes", field: "" },
    ]);
  });

  it("refuses any change to data, binaryData or immutable once immutable, but lets metadata change", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(configMaps(ns), configMap("frozen", { immutable: true, data: { a: "1" } }));
    expect(created.status).toBe(201);
    const changed = await t.api.put(`${configMaps(ns)}/frozen`, {
      ...created.body,
      immutable: false,
      data: { a: "2" },
      binaryData: { b: "AA==" },
    });
    expect(changed.status).toBe(422);
    expect(causes(changed.body)).toEqual([
      "immutable: Forbidden: field is immutable when `immutable` is set",
      "data: Forbidden: field is immutable when `immutable` is set",
      "binaryData: Forbidden: field is immutable when `immutable` is set",
    ]);
    const labelled = await t.api.patch(`${configMaps(ns)}/frozen`, { metadata: { labels: { tier: "web" } } });
    expect(labelled.status).toBe(200);
    expect((await t.api.delete(`${configMaps(ns)}/frozen`)).status).toBe(200);
  });

  it("serves leader election as client libraries do it: create, get, update with the resourceVersion read", async () => {
    const ns = await freshNamespace(t.api);
    const lock = configMap("leader", {
      metadata: { name: "leader", annotations: { "control-plane.alpha.kubernetes.io/leader": '{"holderIdentity":"a"}' } },
    });
    const created = await t.api.post(configMaps(ns), lock);
    expect(created.status).toBe(201);
    const read = await t.api.get(`${configMaps(ns)}/leader`);
    const annotations = { "control-plane.alpha.kubernetes.io/leader": '{"holderIdentity":"b"}' };
    const renewed = await t.api.put(`${configMaps(ns)}/leader`, { ...read.body, metadata: { ...read.body.metadata, annotations } });
    expect(renewed.status).toBe(200);
    // A second candidate that read the old version loses.
    const late = await t.api.put(`${configMaps(ns)}/leader`, { ...read.body, metadata: { ...read.body.metadata, annotations: {} } });
    expect(late.status).toBe(409);
  });
});

const coreEvent = (ns: string, name: string, fields: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: ns },
  involvedObject: { kind: "Pod", namespace: ns, name: "web-1", uid: "u-1", apiVersion: "v1", fieldPath: "spec.containers{web}" },
  reason: "Pulled",
  message: "Container image pulled ",
  source: { component: "kubelet", host: "node-1" },
  firstTimestamp: "2024-01-01T00:00:00Z",
  lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  count: 3,
  type: "Normal",
  ...fields,
});

const newEvent = (ns: string, name: string, fields: Record<string, unknown> = {}) => ({
  apiVersion: "events.orch.io/v1",
  kind: "Event",
  metadata: { name, namespace: ns },
  eventTime: "2024-01-01T00:00:00.000000Z",
  reportingController: "example.com/controller",
  reportingInstance: "controller-0",
  action: "Scale",
  reason: "Scaled",
  regarding: { kind: "Deployment", namespace: ns, name: "web", apiVersion: "apps/v1" },
  note: "scaled to 3",
  type: "Normal",
  ...fields,
});

describe("Event", () => {
  it("is created by PUT, takes any name a path segment allows, and reads back in the other version converted", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.put(`${coreEvents(ns)}/web-1.17a1B_2`, coreEvent(ns, "web-1.17a1B_2"));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ reportingComponent: "", reportingInstance: "" });
    const converted = await t.api.get(`${newEvents(ns)}/web-1.17a1B_2`);
    expect(converted.status).toBe(200);
    const { metadata, ...rest } = converted.body;
    expect(metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(rest).toEqual({
      apiVersion: "events.orch.io/v1",
      kind: "Event",
      regarding: created.body.involvedObject,
      reason: "Pulled",
      note: "Container image pulled ",
      type: "Normal",
      deprecatedSource: { component: "kubelet", host: "node-1" },
      deprecatedFirstTimestamp: "2024-01-01T00:00:00Z",
      deprecatedLastTimestamp: created.body.lastTimestamp,
      deprecatedCount: 3,
    });
  });

  it("converts an events.<domain>/v1 Event to core/v1 and keeps both versions' selectors", async () => {
    const ns = await freshNamespace(t.api);
    const series = { count: 4, lastObservedTime: "2024-01-01T00:05:00.000000Z" };
    const created = await t.api.post(newEvents(ns), newEvent(ns, "scaled", { series, related: { kind: "ReplicaSet", name: "web-1" } }));
    expect(created.status).toBe(201);
    const core = await t.api.get(`${coreEvents(ns)}/scaled`);
    const { metadata: _m, ...rest } = core.body;
    expect(rest).toEqual({
      apiVersion: "v1",
      kind: "Event",
      involvedObject: { kind: "Deployment", namespace: ns, name: "web", apiVersion: "apps/v1" },
      reason: "Scaled",
      message: "scaled to 3",
      source: {},
      type: "Normal",
      eventTime: "2024-01-01T00:00:00.000000Z",
      series,
      action: "Scale",
      related: { kind: "ReplicaSet", name: "web-1" },
      reportingComponent: "example.com/controller",
      reportingInstance: "controller-0",
    });
    await t.api.post(coreEvents(ns), coreEvent(ns, "other", { involvedObject: { kind: "Pod", namespace: ns, name: "db" } }));
    const byCore = await t.api.get(`${coreEvents(ns)}?fieldSelector=involvedObject.name=web,reportingComponent=example.com/controller`);
    expect(byCore.body.items.map((e: any) => e.metadata.name)).toEqual(["scaled"]);
    const byNew = await t.api.get(`${newEvents(ns)}?fieldSelector=regarding.name=db`);
    expect(byNew.body.items.map((e: any) => [e.metadata.name, e.apiVersion])).toEqual([["other", "events.orch.io/v1"]]);
    const unknownLabel = await t.api.get(`${newEvents(ns)}?fieldSelector=involvedObject.name=db`);
    expect(unknownLabel.status).toBe(400);
  });

  it("watches through either version with the objects converted", async () => {
    const ns = await freshNamespace(t.api);
    const watch = await t.api.watch(`${newEvents(ns)}?fieldSelector=regarding.name=web-1`);
    await t.api.post(coreEvents(ns), coreEvent(ns, "seen"));
    const [added] = await watch.take(1);
    expect(added).toMatchObject({
      type: "ADDED",
      object: { apiVersion: "events.orch.io/v1", note: "Container image pulled ", deprecatedCount: 3 },
    });
    watch.close();
  });

  it("validates core/v1 leniently: namespaces must agree, and events with eventTime name their reporter", async () => {
    const ns = await freshNamespace(t.api);
    const mismatch = await t.api.post(
      coreEvents(ns),
      coreEvent(ns, "m", { involvedObject: { kind: "Pod", namespace: "other", name: "x" } }),
    );
    expect(mismatch.status).toBe(422);
    expect(causes(mismatch.body)).toEqual([`involvedObject.namespace: Invalid value: "other": does not match event.namespace`]);
    const noReporter = await t.api.post(coreEvents(ns), coreEvent(ns, "n", { eventTime: "2024-01-01T00:00:00.000000Z", reason: "" }));
    expect(noReporter.status).toBe(422);
    expect(causes(noReporter.body)).toEqual([
      "reportingController: Required value",
      `reportingController: Invalid value: "": name part must be non-empty`,
      `reportingController: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      "reportingInstance: Required value",
      "action: Required value",
      "reason: Required value",
    ]);
    // Old events may change anything, as Kubernetes' recorders do when they count repeats.
    const created = await t.api.post(coreEvents(ns), coreEvent(ns, "counted"));
    const counted = await t.api.put(`${coreEvents(ns)}/counted`, { ...created.body, count: 4, message: "again" });
    expect(counted.status).toBe(200);
  });

  it("validates events.<domain>/v1 strictly on create, with core/v1's field names", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(
      newEvents(ns),
      newEvent(ns, "Bad_Name", {
        eventTime: null,
        type: "Odd",
        series: { count: 1 },
        deprecatedCount: 2,
        deprecatedSource: { component: "x" },
        deprecatedFirstTimestamp: "2024-01-01T00:00:00Z",
        note: "n".repeat(1025),
      }),
    );
    expect(r.status).toBe(422);
    // orch checks ObjectMeta before the kind's rules; Kubernetes lists metadata.name after legacy validation.
    expect(causes(r.body)).toEqual([
      `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'series.count: Invalid value: "": should be at least 2',
      "series.lastObservedTime: Required value",
      "eventTime: Required value",
      `type: Invalid value: "": has invalid value: Odd`,
      `firstTimestamp: Invalid value: "": needs to be unset`,
      `count: Invalid value: "": needs to be unset`,
      `source: Invalid value: "": needs to be unset`,
    ]);
  });

  it("lets an events.<domain>/v1 Event change only its series after creation", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(newEvents(ns), newEvent(ns, "repeat"));
    const series = { count: 2, lastObservedTime: "2024-01-01T00:01:00.000000Z" };
    const repeated = await t.api.put(`${newEvents(ns)}/repeat`, { ...created.body, series });
    expect(repeated.status).toBe(200);
    const changed = await t.api.put(`${newEvents(ns)}/repeat`, { ...repeated.body, note: "other", reason: "Other" });
    expect(changed.status).toBe(422);
    expect(causes(changed.body)).toEqual([
      `reason: Invalid value: "Other": field is immutable`,
      `message: Invalid value: "other": field is immutable`,
      `reason: Invalid value: "Other": field is immutable`,
    ]);
  });

  it("prints LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, with the wide columns after", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(coreEvents(ns), coreEvent(ns, "printed"));
    for (const path of [coreEvents(ns), newEvents(ns)]) {
      const table = await t.api.get(path, { accept: TABLE });
      const columns = table.body.columnDefinitions.map((c: any) => [c.name, c.priority]);
      expect(columns).toEqual([
        ["Last Seen", 0],
        ["Type", 0],
        ["Reason", 0],
        ["Object", 0],
        ["Subobject", 1],
        ["Source", 1],
        ["Message", 0],
        ["First Seen", 1],
        ["Count", 1],
        ["Name", 1],
      ]);
      const [lastSeen, ...cells] = table.body.rows[0].cells;
      expect(lastSeen).toMatch(/^\d+s$/);
      expect(cells).toEqual([
        "Normal",
        "Pulled",
        "pod/web-1",
        "spec.containers{web}",
        "kubelet, node-1",
        "Container image pulled",
        expect.stringMatching(/^\d+y\d+d$/),
        3,
        "printed",
      ]);
    }
  });
});

describe("Event time-to-live", () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startTestServer({ eventTtlMs: 2000 });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it("deletes an event its TTL after its last write; a recorder's repeat keeps it longer", async () => {
    const ns = await freshNamespace(short.api);
    const now = () => new Date().toISOString();
    await short.api.post(coreEvents(ns), coreEvent(ns, "expires", { lastTimestamp: now() }));
    let refreshed = (await short.api.post(coreEvents(ns), coreEvent(ns, "refreshed", { lastTimestamp: now() }))).body;
    const gone = async (name: string) => (await short.api.get(`${coreEvents(ns)}/${name}`)).status === 404;
    // A recorder counts each repeat and moves lastTimestamp: this one repeats until the other is gone.
    await eventually(
      "the untouched event to expire",
      async () => {
        const repeat = { ...refreshed, count: refreshed.count + 1, lastTimestamp: now() };
        refreshed = (await short.api.put(`${coreEvents(ns)}/refreshed`, repeat)).body;
        return gone("expires");
      },
      { intervalMs: 100 },
    );
    expect(await gone("refreshed")).toBe(false);
    await eventually("the repeated event to expire once left alone", () => gone("refreshed"));
    // The newer version sees it go too: one storage.
    expect((await short.api.get(`${newEvents(ns)}/refreshed`)).status).toBe(404);
  });
});
