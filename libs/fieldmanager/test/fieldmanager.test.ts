import type { ListShape, ObjectShape, Shape } from "@orch/machinery";
import { StatusError, scalarShape, untypedShape } from "@orch/machinery";
import { describe, expect, it } from "vitest";
import {
  FieldSet,
  type FieldsV1,
  type ManagedFieldsEntry,
  type ManagedObject,
  applyConfiguration,
  capUpdateManagers,
  compare,
  decodeManagedFields,
  encodeManagedFields,
  fieldsOf,
  identical,
  managerOrUserAgent,
  merge,
  pathText,
  updateManagedFields,
  validateFieldManager,
} from "../src/index.js";

// Shapes as Kubernetes declares them for a Deployment (the parts these tests touch).
const struct = (fields: Record<string, Shape>, extra: Partial<ObjectShape> = {}): ObjectShape => ({
  kind: "object",
  field: (name) => fields[name],
  defaultOf: (name) => (name === "protocol" && "containerPort" in fields ? "TCP" : undefined),
  ...extra,
});
const stringMap: Shape = { kind: "map", value: scalarShape };
const listMap = (item: Shape, keys: string[]): ListShape => ({ kind: "list", item, listType: "map", listMapKeys: keys });
const setList: ListShape = { kind: "list", item: scalarShape, listType: "set" };
const atomicList = (item: Shape): ListShape => ({ kind: "list", item, listType: "atomic" });

const port = struct({ containerPort: scalarShape, protocol: scalarShape, name: scalarShape });
const container = struct({
  name: scalarShape,
  image: scalarShape,
  args: atomicList(scalarShape),
  ports: listMap(port, ["containerPort", "protocol"]),
  resources: struct({ limits: stringMap }),
});
const metadata = struct({
  name: scalarShape,
  namespace: scalarShape,
  labels: stringMap,
  annotations: stringMap,
  finalizers: setList,
  managedFields: atomicList(untypedShape),
  resourceVersion: scalarShape,
  uid: scalarShape,
});
const deployment: Shape = struct({
  apiVersion: scalarShape,
  kind: scalarShape,
  metadata,
  spec: struct({
    replicas: scalarShape,
    selector: struct({ matchLabels: stringMap }, { mapType: "atomic" }),
    template: struct({
      metadata,
      spec: struct({ containers: listMap(container, ["name"]), nodeSelector: stringMap }),
    }),
  }),
  status: struct({ replicas: scalarShape }),
});

const APPS = { apiVersion: "apps/v1", kind: "Deployment" };
const at = (seconds: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, seconds));
const applyAs = (manager: string, live: ManagedObject | undefined, config: ManagedObject, force = false, now = at(0)) =>
  applyConfiguration(live, config, deployment, { manager, apiVersion: "apps/v1", kind: "Deployment", force, now });
const entries = (o: ManagedObject) => (o.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
const fieldsOfManager = (o: ManagedObject, manager: string) =>
  entries(o).find((e) => e.manager === manager)?.fieldsV1 as FieldsV1 | undefined;

function web(replicas: number, image = "nginx:1.25"): ManagedObject {
  return {
    ...APPS,
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "nginx", image, ports: [{ containerPort: 80 }] }] },
      },
    },
  };
}

describe("fieldsV1", () => {
  // As a Kubernetes 1.30 API server stored them for a Deployment created by kubectl and its status.
  const created =
    '{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}';
  const status =
    '{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\\"type\\":\\"Available\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\\"type\\":\\"Progressing\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}';
  // Values, indexes and key objects with several members, sorted the way Go sorts path elements.
  const mixed =
    '{"f:a":{"i:0":{},"i:2":{}},"f:b":{"v:1":{},"v:\\"x\\"":{}},"f:c":{"k:{\\"a\\":1,\\"b\\":\\"z\\"}":{}},"f:d":{".":{},"f:e":{}}}';

  it.each([
    ["a kubectl-created Deployment", created],
    ["a controller's status", status],
    ["values, indexes and keys", mixed],
  ])("decodes and re-encodes %s byte for byte", (_name, text) => {
    expect(JSON.stringify(FieldSet.fromFieldsV1(JSON.parse(text)).toFieldsV1())).toBe(text);
  });

  it("sorts fields before keys, values and indexes, and numbers before strings", () => {
    const set = FieldSet.fromFieldsV1({ "f:b": { "v:1": {}, 'v:"x"': {} }, "f:a": { "i:2": {}, "i:0": {} } });
    expect(Object.keys(set.toFieldsV1())).toEqual(["f:a", "f:b"]);
    expect(Object.keys(set.toFieldsV1()["f:b"]!)).toEqual(["v:1", 'v:"x"']);
  });

  it("names paths as conflict messages do", () => {
    const set = FieldSet.fromFieldsV1(JSON.parse(created));
    const texts = set.paths().map(pathText);
    expect(texts).toContain('.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].protocol');
    expect(texts).toContain(".metadata.labels");
  });

  it("refuses entries Kubernetes would not decode", () => {
    expect(() => decodeManagedFields([{ manager: "m", operation: "Bogus", apiVersion: "v1", fieldsType: "FieldsV1" }])).toThrow(
      "operation must be `Apply` or `Update`",
    );
    expect(() => decodeManagedFields([{ manager: "m", operation: "Update", apiVersion: "v1" }])).toThrow(
      "missing fieldsType in managed fields entry 0",
    );
    expect(() =>
      decodeManagedFields([{ manager: "m", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "x:y": {} } }]),
    ).toThrow("unknown path element type");
  });
});

describe("field sets", () => {
  const a = FieldSet.fromFieldsV1({ "f:spec": { "f:replicas": {}, "f:paused": {} } });
  const b = FieldSet.fromFieldsV1({ "f:spec": { "f:replicas": {}, "f:template": {} } });

  it("unions, intersects and subtracts per path", () => {
    expect(a.union(b).toFieldsV1()).toEqual({ "f:spec": { "f:paused": {}, "f:replicas": {}, "f:template": {} } });
    expect(a.intersection(b).toFieldsV1()).toEqual({ "f:spec": { "f:replicas": {} } });
    expect(a.difference(b).toFieldsV1()).toEqual({ "f:spec": { "f:paused": {} } });
    expect(a.difference(a).empty()).toBe(true);
  });

  it("owns an applied configuration's leaves, list items and map keys, not its structs", () => {
    expect(fieldsOf(web(3).spec, (deployment as ObjectShape).field("spec")!).toFieldsV1()).toEqual({
      "f:replicas": {},
      "f:selector": {},
      "f:template": {
        "f:metadata": { "f:labels": { "f:app": {} } },
        "f:spec": {
          "f:containers": {
            'k:{"name":"nginx"}': {
              ".": {},
              "f:image": {},
              "f:name": {},
              // The omitted protocol key takes its schema default, as Kubernetes' key defaults do.
              "f:ports": { 'k:{"containerPort":80,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} } },
            },
          },
        },
      },
    });
  });

  it("owns an empty struct and an atomic list as a whole", () => {
    const set = fieldsOf({ name: "c", resources: {}, args: ["a", "b"] }, container);
    expect(set.toFieldsV1()).toEqual({ "f:args": {}, "f:name": {}, "f:resources": {} });
  });
});

describe("comparison", () => {
  const changedPaths = (before: unknown, after: unknown) => {
    const c = compare(before, after, deployment);
    return [c.added, c.modified, c.removed].map((s) => s.paths().map(pathText));
  };

  it("finds nothing changed between identical values, which is what lets a write skip the comparison", () => {
    const before = web(3);
    const after = structuredClone(before);
    expect(identical(before, after)).toBe(true);
    expect(changedPaths(before, after)).toEqual([[], [], []]);
    (after.spec as { replicas: number }).replicas = 4;
    expect(identical(before, after)).toBe(false);
    expect(changedPaths(before, after)).toEqual([[], [".spec.replicas"], []]);
  });

  it("adds what only the new object has whole: each item by its keys, a duplicated item once and nothing below it", () => {
    const created = web(1);
    const spec = (created.spec as { template: { spec: { containers: unknown[] } } }).template.spec;
    spec.containers.push({ name: "side", image: "a" }, { name: "side", image: "b" });
    const [added, modified, removed] = changedPaths({}, created);
    expect([modified, removed]).toEqual([[], []]);
    expect(added).toEqual([
      ".apiVersion",
      ".kind",
      ".metadata",
      ".metadata.labels",
      ".metadata.labels.app",
      ".metadata.name",
      ".spec",
      ".spec.replicas",
      ".spec.selector",
      ".spec.template",
      ".spec.template.metadata",
      ".spec.template.metadata.labels",
      ".spec.template.metadata.labels.app",
      ".spec.template.spec",
      ".spec.template.spec.containers",
      '.spec.template.spec.containers[name="nginx"]',
      '.spec.template.spec.containers[name="nginx"].image',
      '.spec.template.spec.containers[name="nginx"].name',
      '.spec.template.spec.containers[name="nginx"].ports',
      '.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]',
      '.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort',
      '.spec.template.spec.containers[name="side"]',
    ]);
  });

  it("counts a member whose value is undefined as added, even below a removed one", () => {
    const before = { ...web(3), status: { replicas: undefined } };
    expect(changedPaths(before, web(3))).toEqual([[".status.replicas"], [], [".status"]]);
  });

  it("counts an undefined member as added on both sides, so values holding one are never identical", () => {
    const before = { ...web(3), status: undefined };
    const after = { ...web(3), status: undefined };
    expect(identical(before, after)).toBe(false);
    expect(changedPaths(before, after)).toEqual([[".status"], [], []]);
  });
});

describe("merging an applied configuration (structured-merge-diff typed.Merge)", () => {
  it("merges list-map items by their keys, keeping live items the configuration does not name", () => {
    const live = {
      containers: [
        { name: "a", image: "a:1" },
        { name: "sidecar", image: "s:1" },
      ],
    };
    const config = {
      containers: [
        { name: "a", image: "a:2" },
        { name: "b", image: "b:1" },
      ],
    };
    const spec = struct({ containers: listMap(container, ["name"]) });
    expect(merge(live, config, spec)).toEqual({
      containers: [
        { name: "a", image: "a:2" },
        { name: "sidecar", image: "s:1" },
        { name: "b", image: "b:1" },
      ],
    });
  });

  it("keys ports by containerPort and protocol", () => {
    const live = {
      ports: [
        { containerPort: 80, protocol: "TCP", name: "http" },
        { containerPort: 80, protocol: "UDP" },
      ],
    };
    const config = { ports: [{ containerPort: 80, protocol: "UDP", name: "dns" }] };
    expect(merge(live, config, container)).toEqual({
      ports: [
        { containerPort: 80, protocol: "TCP", name: "http" },
        { containerPort: 80, protocol: "UDP", name: "dns" },
      ],
    });
  });

  it("unions sets and replaces atomic lists and maps", () => {
    const shape = struct({
      finalizers: setList,
      args: atomicList(scalarShape),
      selector: struct({ matchLabels: stringMap }, { mapType: "atomic" }),
    });
    const live = { finalizers: ["a", "b"], args: ["x", "y"], selector: { matchLabels: { a: "1", b: "2" } } };
    const config = { finalizers: ["c", "a"], args: ["z"], selector: { matchLabels: { c: "3" } } };
    // Applied items keep the configuration's order; live-only items follow where they were.
    expect(merge(live, config, shape)).toEqual({ finalizers: ["c", "a", "b"], args: ["z"], selector: { matchLabels: { c: "3" } } });
  });

  it("treats untyped values as atomic", () => {
    const shape = struct({ raw: untypedShape });
    expect(merge({ raw: { a: 1, b: 2 } }, { raw: { c: 3 } }, shape)).toEqual({ raw: { c: 3 } });
  });
});

describe("Update", () => {
  it("gives the writer what it changed and takes it from the others", () => {
    const created = structuredClone(web(3));
    updateManagedFields(undefined, created, deployment, { manager: "kubectl-create", apiVersion: "apps/v1", now: at(0) });
    expect(entries(created)).toEqual([
      expect.objectContaining({
        manager: "kubectl-create",
        operation: "Update",
        apiVersion: "apps/v1",
        time: "2024-01-01T00:00:00Z",
        fieldsType: "FieldsV1",
      }),
    ]);
    const scaled = structuredClone(created);
    (scaled.spec as { replicas: number }).replicas = 5;
    updateManagedFields(created, scaled, deployment, { manager: "hpa", apiVersion: "apps/v1", now: at(10) });
    expect(fieldsOfManager(scaled, "hpa")).toEqual({ "f:spec": { "f:replicas": {} } });
    expect(JSON.stringify(fieldsOfManager(scaled, "kubectl-create"))).not.toContain("f:replicas");
    expect(entries(scaled).map((e) => e.manager)).toEqual(["kubectl-create", "hpa"]);
  });

  it("removes removed fields from everyone and leaves entries alone when nothing changed", () => {
    const created = structuredClone(web(3));
    updateManagedFields(undefined, created, deployment, { manager: "a", apiVersion: "apps/v1", now: at(0) });
    const same = structuredClone(created);
    updateManagedFields(created, same, deployment, { manager: "b", apiVersion: "apps/v1", now: at(5) });
    expect(entries(same).map((e) => e.manager)).toEqual(["a"]);
    const unlabelled = structuredClone(created);
    delete unlabelled.metadata!.labels;
    updateManagedFields(created, unlabelled, deployment, { manager: "b", apiVersion: "apps/v1", now: at(5) });
    expect(fieldsOfManager(unlabelled, "a")!["f:metadata"]).toBeUndefined();
  });

  it("honours managedFields sent in the request, resets on [{}] and ignores invalid ones", () => {
    const created = structuredClone(web(3));
    updateManagedFields(undefined, created, deployment, { manager: "a", apiVersion: "apps/v1", now: at(0) });
    const cleared = { ...structuredClone(created), metadata: { ...structuredClone(created.metadata), managedFields: [{}] } };
    updateManagedFields(created, cleared, deployment, { manager: "b", apiVersion: "apps/v1" });
    expect(cleared.metadata.managedFields).toBeUndefined();
    const invalid = { ...structuredClone(created), metadata: { ...structuredClone(created.metadata), managedFields: [{ manager: "x" }] } };
    updateManagedFields(created, invalid, deployment, { manager: "b", apiVersion: "apps/v1" });
    expect(entries(invalid)).toEqual(entries(created));
  });

  it("writes an entry the update did not touch as it was stored, and a request's own entries in canonical form", () => {
    const created = structuredClone(web(3));
    updateManagedFields(undefined, created, deployment, { manager: "a", apiVersion: "apps/v1", now: at(0) });
    const scaled = structuredClone(created);
    (scaled.spec as { replicas: number }).replicas = 5;
    updateManagedFields(created, scaled, deployment, { manager: "hpa", apiVersion: "apps/v1", now: at(10) });
    // The same encoding as a fresh one: decoding the result and encoding it again changes nothing.
    expect(encodeManagedFields(decodeManagedFields(entries(scaled)))).toEqual(entries(scaled));
    expect(JSON.stringify(fieldsOfManager(scaled, "a"))).not.toContain("f:replicas");

    // A request's entries with the members of a key in another order: written as Kubernetes writes them.
    const key = 'k:{"containerPort":80,"protocol":"TCP"}';
    const reordered = 'k:{"protocol":"TCP","containerPort":80}';
    const sent = structuredClone(created);
    const own = JSON.parse(
      JSON.stringify(entries(sent)).replaceAll(JSON.stringify(key).slice(1, -1), JSON.stringify(reordered).slice(1, -1)),
    );
    expect(JSON.stringify(own)).toContain('protocol\\":\\"TCP\\",');
    sent.metadata!.managedFields = own;
    // A field nobody owned: "a"'s set is left as it was decoded.
    sent.metadata!.labels = { ...(sent.metadata!.labels as Record<string, string>), tier: "web" };
    updateManagedFields(created, sent, deployment, { manager: "b", apiVersion: "apps/v1", now: at(20) });
    expect(JSON.stringify(entries(sent))).toContain(JSON.stringify(key).slice(1, -1));
    expect(JSON.stringify(entries(sent))).not.toContain(JSON.stringify(reordered).slice(1, -1));
  });

  it("merges the oldest Update entries beyond ten into ancient-changes", () => {
    const managed = decodeManagedFields(
      Array.from({ length: 12 }, (_, i) => ({
        manager: `m${String(i).padStart(2, "0")}`,
        operation: "Update",
        apiVersion: "apps/v1",
        time: at(i).toISOString().replace(".000", ""),
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:labels": { [`f:l${i}`]: {} } } },
      })),
    );
    capUpdateManagers(managed);
    const encoded = encodeManagedFields(managed)!;
    expect(encoded).toHaveLength(10);
    const ancient = encoded.find((e) => e.manager === "ancient-changes")!;
    expect(ancient.fieldsV1).toEqual({ "f:metadata": { "f:labels": { "f:l0": {}, "f:l1": {}, "f:l2": {} } } });
    expect(ancient.time).toBe("2024-01-01T00:00:02Z");
  });
});

describe("Apply", () => {
  it("creates, records an Apply entry and strips server-owned metadata", () => {
    const created = applyAs("ci", undefined, web(3));
    expect(created.spec).toEqual(web(3).spec);
    expect(entries(created)).toHaveLength(1);
    const entry = entries(created)[0]!;
    expect(entry).toMatchObject({ manager: "ci", operation: "Apply", apiVersion: "apps/v1", fieldsType: "FieldsV1" });
    expect((entry.fieldsV1 as FieldsV1)["f:metadata"]).toEqual({ "f:labels": { "f:app": {} } });
  });

  it("conflicts with another manager's field at another value, naming the field and the manager", () => {
    const live = applyAs("ci", undefined, web(3));
    let error: unknown;
    try {
      applyAs("other", live, web(5));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StatusError);
    expect((error as StatusError).status).toMatchObject({
      code: 409,
      reason: "Conflict",
      message: 'Apply failed with 1 conflict: conflict with "ci": .spec.replicas',
      details: { causes: [{ reason: "FieldManagerConflict", message: 'conflict with "ci"', field: ".spec.replicas" }] },
    });
  });

  it("shares a field applied with the same value", () => {
    const live = applyAs("ci", undefined, web(3));
    const shared = applyAs("other", live, web(3));
    expect(fieldsOfManager(shared, "ci")).toEqual(fieldsOfManager(shared, "other"));
  });

  it("names an Update manager with its version, and lists several conflicts", () => {
    const live = structuredClone(web(3));
    updateManagedFields(undefined, live, deployment, { manager: "kubectl-edit", apiVersion: "apps/v1" });
    expect(() => applyAs("ci", live, web(5, "nginx:1.26"))).toThrow(
      'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
    );
  });

  it("takes ownership with force", () => {
    const live = applyAs("ci", undefined, web(3));
    const forced = applyAs("other", live, { ...APPS, metadata: { name: "web" }, spec: { replicas: 5 } }, true);
    expect((forced.spec as { replicas: number }).replicas).toBe(5);
    expect(fieldsOfManager(forced, "other")).toEqual({ "f:spec": { "f:replicas": {} } });
    expect(JSON.stringify(fieldsOfManager(forced, "ci"))).not.toContain("f:replicas");
  });

  it("removes a field the applier stopped applying when no one else owns it", () => {
    const labelled = { ...web(3), metadata: { name: "web", labels: { app: "web", tier: "front" } } };
    const live = applyAs("ci", undefined, labelled);
    const next = applyAs("ci", live, web(3));
    expect(next.metadata!.labels).toEqual({ app: "web" });
  });

  it("keeps a field the applier stopped applying when another manager owns it", () => {
    const labelled = { ...web(3), metadata: { name: "web", labels: { app: "web", tier: "front" } } };
    const live = applyAs("ci", undefined, labelled);
    const shared = applyAs("ops", live, { ...APPS, metadata: { name: "web", labels: { tier: "front" } } });
    const next = applyAs("ci", shared, web(3));
    expect(next.metadata!.labels).toEqual({ app: "web", tier: "front" });
  });

  it("removes a container the applier stopped applying", () => {
    const two = web(3);
    (two.spec as any).template.spec.containers.push({ name: "sidecar", image: "busybox" });
    const live = applyAs("ci", undefined, two);
    const next = applyAs("ci", live, web(3));
    expect((next.spec as any).template.spec.containers.map((c: { name: string }) => c.name)).toEqual(["nginx"]);
  });

  it("answers the live object and keeps the time when nothing changed", () => {
    const live = applyAs("ci", undefined, web(3), false, at(0));
    const again = applyAs("ci", live, web(3), false, at(30));
    expect(again).toEqual(live);
  });

  it("refuses a configuration of another kind or with managedFields", () => {
    expect(() => applyAs("ci", undefined, { apiVersion: "v1", kind: "Pod", metadata: { name: "web" } })).toThrow(
      "invalid object type: /v1, Kind=Pod",
    );
    expect(() => applyAs("ci", undefined, { ...web(1), metadata: { name: "web", managedFields: [] } })).toThrow(
      "metadata.managedFields must be nil",
    );
  });

  it("refuses a list-map item without its key", () => {
    const broken = web(1);
    (broken.spec as any).template.spec.containers = [{ image: "x" }];
    expect(() => applyAs("ci", undefined, broken)).toThrow(
      '.spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    );
  });
});

describe("field manager names", () => {
  it("falls back to the user agent's first segment", () => {
    expect(managerOrUserAgent("", "kubectl/v1.31.0 (linux/amd64) kubernetes/abc")).toBe("kubectl");
    expect(managerOrUserAgent("mine", "kubectl/v1.31.0")).toBe("mine");
    expect(managerOrUserAgent(undefined, "a\tb/1")).toBe("ab");
  });

  it("validates length and printable characters", () => {
    expect(validateFieldManager("x".repeat(129), "fieldManager")[0]).toMatchObject({ type: "FieldValueTooLong", field: "fieldManager" });
    expect(validateFieldManager("a\tb", "fieldManager")[0]).toMatchObject({
      type: "FieldValueInvalid",
      detail: "invalid character U+0009",
    });
    expect(validateFieldManager("kubectl", "fieldManager")).toEqual([]);
  });
});
