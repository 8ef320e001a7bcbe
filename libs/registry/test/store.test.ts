// The generic store's order of steps, driven directly over a real SQLite storage with a small test kind
// whose hooks record what they were given: decode (schema and kind defaults, unknown fields) → system
// metadata → prepare → validation (ObjectMeta rules, then the kind's) → warnings → admission →
// generation → persist; and for deletes, finalizers, grace periods and propagation.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ObjectHeader, int64, namingProfile, objectOf, opt, str } from "@orch/api";
import { type FieldError, StatusError, fieldError } from "@orch/machinery";
import { SqliteStorage } from "@orch/storage";
import * as v from "valibot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineKind, statusSubresource } from "../src/generic/define.js";
import { type RequestContext, ResourceStore, type Strategy, WatchHub } from "../src/index.js";

const profile = namingProfile("orch");
const NS = "team";
const HOLD = "example.com/hold";

type Gadget = ObjectHeader & { spec: { color?: string; size?: number; note?: string }; status?: { phase?: string } };

/** What each hook was called with, as a copy taken at the call. */
interface Seen {
  hook: "prepareForCreate" | "prepareForUpdate" | "validate" | "validateUpdate" | "warnings" | "admit" | "statusPrepare";
  obj: Gadget;
}
let seen: Seen[];
const note = (hook: Seen["hook"], obj: ObjectHeader) => seen.push({ hook, obj: structuredClone(obj) as Gadget });
const hooks = () => seen.map((s) => s.hook);
const seenBy = (hook: Seen["hook"]) => seen.find((s) => s.hook === hook)?.obj;

const spec = (o: ObjectHeader) => (o as Gadget).spec;

/** The kind's own rules: colors are lower case (prepare makes them so), sizes are not negative. */
function validateGadget(obj: ObjectHeader): FieldError[] {
  const errs: FieldError[] = [];
  const { color, size } = spec(obj);
  if (color !== undefined && color !== color.toLowerCase()) errs.push(fieldError.invalid("spec.color", color, "must be lower case"));
  if (size !== undefined && size < 0) errs.push(fieldError.invalid("spec.size", size, "must be greater than or equal to 0"));
  return errs;
}

const main: Strategy = {
  prepareForCreate(obj) {
    note("prepareForCreate", obj);
    const s = spec(obj);
    if (s.color) s.color = s.color.toLowerCase();
    s.note = "prepared";
  },
  prepareForUpdate(obj) {
    note("prepareForUpdate", obj);
    const s = spec(obj);
    if (s.color) s.color = s.color.toLowerCase();
  },
  validate(obj) {
    note("validate", obj);
    return validateGadget(obj);
  },
  validateUpdate(obj) {
    note("validateUpdate", obj);
    return validateGadget(obj);
  },
  warnings(obj) {
    note("warnings", obj);
    return (spec(obj).size ?? 0) > 100 ? ["spec.size above 100 is deprecated"] : [];
  },
  async admit(obj) {
    note("admit", obj);
    return [];
  },
};

const { strategy, status } = statusSubresource(main);
const statusStrategy: Strategy = {
  prepareForUpdate(obj, old, ctx) {
    note("statusPrepare", obj);
    status.prepareForUpdate?.(obj, old, ctx);
  },
};

/** Strategy hooks the store calls outside prepare/validate: defaulting and the grace period. */
const writeHooks = {
  // A default that depends on another field, after the schema's static ones.
  defaults: (o: ObjectHeader) => {
    const s = spec(o);
    if (s.size === undefined) s.size = s.color === "blue" ? 1 : 2;
  },
  // Graceful deletion only when a period is asked for (as a pod on a node would get).
  gracePeriod: (_o: ObjectHeader, requested: number | undefined) => requested ?? 0,
};

const gadgets = defineKind({
  group: "example.com",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  namespaced: true,
  schema: objectOf({
    spec: opt(v.object({ color: opt(str(), "blue"), size: opt(int64()), note: opt(str()) }), {}),
    status: opt(v.object({ phase: opt(str()) })),
  }),
  strategy: { ...strategy, ...writeHooks },
  subresources: { status: statusStrategy },
});

const ctx = (): RequestContext => ({ user: { username: "test", groups: [] }, profile, warnings: [] });

let dir: string;
let storage: SqliteStorage;
let hub: WatchHub;
let store: ResourceStore;

beforeEach(async () => {
  seen = [];
  dir = mkdtempSync(join(tmpdir(), "orch-store-"));
  storage = new SqliteStorage({ path: join(dir, "orch.db") });
  hub = await WatchHub.create(storage);
  store = new ResourceStore(gadgets, { storage, hub });
  await storage.create(
    { resource: "core/namespaces", namespace: "", name: NS },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  );
});

afterEach(async () => {
  hub.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

const body = (metadata: Record<string, unknown>, s: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  value: { apiVersion: "example.com/v1", kind: "Gadget", metadata, spec: s, ...extra },
});

const stored = async (name: string): Promise<Gadget | undefined> => {
  const found = await storage.get(store.key(NS, name));
  return found && (JSON.parse(found.value) as Gadget);
};

const create = async (name: string, s: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
  (await store.create(NS, body({ name, ...metadata }, s), ctx(), {})).object as Gadget;

/** A PUT of the current object changed by `change`, at its current resourceVersion unless `change` sets another. */
const update = (name: string, change: (o: Gadget) => void, subresource?: string, options = {}, c = ctx()) =>
  store.update(NS, name, subresource, c, options, (current) => {
    const next = structuredClone(current) as Gadget;
    change(next);
    return next;
  });

describe("ResourceStore create", () => {
  it("prepare sees the decoded, defaulted object with system metadata already set", async () => {
    const before = Date.now();
    await store.create(NS, body({ name: "a", uid: "client-uid", generation: 7, deletionTimestamp: "2000-01-01T00:00:00Z" }), ctx(), {});
    const prepared = seenBy("prepareForCreate")!;
    // Schema default (color) and the kind's dependent default (size from color) came first.
    expect(prepared.spec).toEqual({ color: "blue", size: 1 });
    expect(prepared.apiVersion).toBe("example.com/v1");
    // System metadata is the server's: a fresh uid, a creation time, generation 1, no deletion.
    expect(prepared.metadata.namespace).toBe(NS);
    expect(prepared.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(prepared.metadata.uid).not.toBe("client-uid");
    expect(Date.parse(prepared.metadata.creationTimestamp!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(prepared.metadata.generation).toBe(1);
    expect(prepared.metadata.deletionTimestamp).toBeUndefined();
    expect(prepared.metadata.resourceVersion).toBeUndefined();
  });

  it("runs prepare, validate, warnings, admit in that order, each seeing what the step before produced", async () => {
    const result = await store.create(NS, body({ name: "b" }, { color: "RED", size: 3 }), ctx(), {});
    expect(hooks()).toEqual(["prepareForCreate", "validate", "warnings", "admit"]);
    expect(seenBy("prepareForCreate")!.spec).toEqual({ color: "RED", size: 3 });
    // Validation refuses upper case: it passed because it saw the color prepare lowered.
    expect(seenBy("validate")!.spec).toEqual({ color: "red", size: 3, note: "prepared" });
    expect(seenBy("admit")!.spec).toEqual({ color: "red", size: 3, note: "prepared" });
    expect(result.code).toBe(201);
    const persisted = (await stored("b"))!;
    expect(persisted.spec).toEqual({ color: "red", size: 3, note: "prepared" });
    expect(persisted.metadata.uid).toBe(seenBy("prepareForCreate")!.metadata.uid);
    expect(persisted.metadata.resourceVersion).toBe(String(await storage.currentRevision()));
  });

  it("a validation failure names the ObjectMeta errors first, persists nothing and skips admission", async () => {
    const revision = await storage.currentRevision();
    const err = await refusal(store.create(NS, body({ name: "Bad_Name" }, { size: -1 }), ctx(), {}));
    expect(err.code).toBe(422);
    expect(err.status.reason).toBe("Invalid");
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual(["metadata.name", "spec.size"]);
    expect(hooks()).toEqual(["prepareForCreate", "validate"]);
    expect(await storage.currentRevision()).toBe(revision);
    expect(await stored("Bad_Name")).toBeUndefined();
  });

  it("validates before it looks for the namespace, and a missing namespace persists nothing", async () => {
    const revision = await storage.currentRevision();
    const invalid = await refusal(store.create("nowhere", body({ name: "c" }, { size: -1 }), ctx(), {}));
    expect(invalid.code).toBe(422);
    const missing = await refusal(store.create("nowhere", body({ name: "c" }), ctx(), {}));
    expect(missing.code).toBe(404);
    expect(missing.status.details).toMatchObject({ name: "nowhere", kind: "namespaces" });
    expect(await storage.currentRevision()).toBe(revision);
  });

  it("returns decode warnings first, then the kind's, and still persists", async () => {
    const c = ctx();
    const result = await store.create(NS, body({ name: "d" }, { size: 101, bogus: true }, { extra: 1 }), c, {});
    expect(c.warnings).toEqual(['unknown field "spec.bogus"', 'unknown field "extra"', "spec.size above 100 is deprecated"]);
    expect(result.code).toBe(201);
    // Pruned before prepare: the unknown fields never reach the strategy or the storage.
    expect(seenBy("prepareForCreate")!.spec).toEqual({ color: "blue", size: 101 });
    expect(await stored("d")).not.toHaveProperty("extra");
    expect((await stored("d"))!.spec).toEqual({ color: "blue", size: 101, note: "prepared" });
  });

  it("refuses unknown fields under Strict before any hook runs", async () => {
    const revision = await storage.currentRevision();
    const err = await refusal(store.create(NS, body({ name: "e" }, { bogus: true }), ctx(), { fieldValidation: "Strict" }));
    expect(err.code).toBe(400);
    expect(err.status.message).toContain('strict decoding error: unknown field "spec.bogus"');
    expect(hooks()).toEqual([]);
    expect(await storage.currentRevision()).toBe(revision);
  });

  it("drops status on create, before the kind's own prepare sees the object", async () => {
    const created = (await store.create(NS, body({ name: "f" }, {}, { status: { phase: "Ready" } }), ctx(), {})).object as Gadget;
    // statusSubresource's prepare runs first and removes it; the kind's prepare never sees it.
    expect(seenBy("prepareForCreate")).toBeDefined();
    expect(seenBy("prepareForCreate")!.status).toBeUndefined();
    expect(created.status).toBeUndefined();
    expect((await stored("f"))!.status).toBeUndefined();
  });

  it("generateName produces a name before prepare and validation run", async () => {
    const result = await store.create(NS, body({ generateName: "gadget-" }), ctx(), {});
    const name = result.object.metadata.name!;
    expect(name).toMatch(/^gadget-[a-z0-9]{5}$/);
    expect(seenBy("prepareForCreate")!.metadata.name).toBe(name);
    expect(seenBy("validate")!.metadata.name).toBe(name);
    expect((await stored(name))!.metadata.generateName).toBe("gadget-");
  });

  it("refuses a taken name with AlreadyExists and leaves the first object alone", async () => {
    const first = await create("g", { size: 5 });
    const err = await refusal(store.create(NS, body({ name: "g" }, { size: 6 }), ctx(), {}));
    expect(err.code).toBe(409);
    expect(err.status.reason).toBe("AlreadyExists");
    expect((await stored("g"))!).toMatchObject({ spec: { size: 5 }, metadata: { uid: first.metadata.uid } });
  });

  it("dry-run runs every step and persists nothing", async () => {
    const revision = await storage.currentRevision();
    const result = await store.create(NS, body({ name: "h" }, { color: "GREEN" }), ctx(), { dryRun: true });
    expect(result.code).toBe(201);
    expect(result.object).toMatchObject({ spec: { color: "green", size: 2, note: "prepared" }, metadata: { generation: 1 } });
    expect(result.object.metadata.uid).toBeTruthy();
    expect(hooks()).toEqual(["prepareForCreate", "validate", "warnings", "admit"]);
    expect(await storage.currentRevision()).toBe(revision);
    expect(await stored("h")).toBeUndefined();
  });
});

describe("ResourceStore update", () => {
  it("prepareForUpdate sees the stored system metadata, whatever the body said", async () => {
    const created = await create("a", { size: 1 });
    seen = [];
    await update("a", (o) => {
      o.spec.size = 2;
      o.metadata.creationTimestamp = "2000-01-01T00:00:00Z";
      o.metadata.generation = 42;
      delete o.metadata.uid;
    });
    const prepared = seenBy("prepareForUpdate")!;
    expect(prepared.metadata.uid).toBe(created.metadata.uid);
    expect(prepared.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    // Generation is the stored one until after validation; then it moves.
    expect(prepared.metadata.generation).toBe(1);
    expect(hooks()).toEqual(["prepareForUpdate", "validateUpdate", "warnings", "admit"]);
    expect(seenBy("validateUpdate")!.metadata.generation).toBe(1);
    const after = (await stored("a"))!;
    expect(after.metadata).toMatchObject({
      uid: created.metadata.uid,
      creationTimestamp: created.metadata.creationTimestamp,
      generation: 2,
    });
  });

  it("validation on update sees what prepare produced", async () => {
    await create("b");
    seen = [];
    const result = await update("b", (o) => {
      o.spec.color = "PURPLE";
    });
    expect(seenBy("prepareForUpdate")!.spec.color).toBe("PURPLE");
    expect(seenBy("validateUpdate")!.spec.color).toBe("purple");
    expect((result.object as Gadget).spec.color).toBe("purple");
    expect((await stored("b"))!.spec.color).toBe("purple");
  });

  it("bumps generation on a spec change only, not on a metadata-only change", async () => {
    await create("c", { size: 1 });
    const spec1 = (await update("c", (o) => void (o.spec.size = 2))).object;
    expect(spec1.metadata.generation).toBe(2);
    const labelled = (await update("c", (o) => void (o.metadata.labels = { tier: "gold" }))).object;
    expect(labelled.metadata.generation).toBe(2);
    expect(Number(labelled.metadata.resourceVersion)).toBeGreaterThan(Number(spec1.metadata.resourceVersion));
    expect((await stored("c"))!.metadata).toMatchObject({ generation: 2, labels: { tier: "gold" } });
    const spec2 = (await update("c", (o) => void (o.spec.size = 3))).object;
    expect(spec2.metadata.generation).toBe(3);
  });

  it("the main endpoint ignores status; /status ignores spec and leaves generation alone", async () => {
    await create("d", { size: 1 });
    await update("d", (o) => {
      o.spec.size = 2;
      o.status = { phase: "Main" };
    });
    expect(await stored("d")).toMatchObject({ spec: { size: 2 }, metadata: { generation: 2 } });
    expect((await stored("d"))!.status).toBeUndefined();

    seen = [];
    const result = await update(
      "d",
      (o) => {
        o.spec.size = 99;
        o.metadata.labels = { from: "status" };
        o.status = { phase: "Ready" };
      },
      "status",
    );
    // The status subresource's strategy ran, not the main one.
    expect(hooks()).toEqual(["statusPrepare"]);
    expect(result.object).toMatchObject({ spec: { size: 2 }, status: { phase: "Ready" }, metadata: { generation: 2 } });
    const after = (await stored("d"))!;
    expect(after).toMatchObject({ spec: { size: 2 }, status: { phase: "Ready" }, metadata: { generation: 2 } });
    expect(after.metadata.labels).toBeUndefined();
  });

  it("a stale resourceVersion is a 409 Conflict and changes nothing", async () => {
    const created = await create("e", { size: 1 });
    await update("e", (o) => void (o.spec.size = 2));
    const revision = await storage.currentRevision();
    seen = [];
    const err = await refusal(
      update("e", (o) => {
        o.spec.size = 3;
        o.metadata.resourceVersion = created.metadata.resourceVersion;
      }),
    );
    expect(err.code).toBe(409);
    expect(err.status.reason).toBe("Conflict");
    expect(err.status.message).toContain("the object has been modified");
    // Refused before any hook ran.
    expect(hooks()).toEqual([]);
    expect(await storage.currentRevision()).toBe(revision);
    expect((await stored("e"))!.spec.size).toBe(2);
  });

  it("a validation failure on update persists nothing", async () => {
    await create("f", { size: 1 });
    const revision = await storage.currentRevision();
    const err = await refusal(update("f", (o) => void (o.spec.size = -5)));
    expect(err.code).toBe(422);
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual(["spec.size"]);
    expect(await storage.currentRevision()).toBe(revision);
    expect((await stored("f"))!.spec.size).toBe(1);
  });

  it("an update that changes nothing writes nothing", async () => {
    const created = await create("g", { size: 1 });
    const revision = await storage.currentRevision();
    const result = await update("g", () => undefined);
    expect(result.object.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(await storage.currentRevision()).toBe(revision);
  });

  it("dry-run returns the updated object and persists nothing", async () => {
    await create("h", { size: 1 });
    const revision = await storage.currentRevision();
    const result = await update("h", (o) => void (o.spec.size = 4), undefined, { dryRun: true });
    expect(result.object).toMatchObject({ spec: { size: 4 }, metadata: { generation: 2 } });
    expect(await storage.currentRevision()).toBe(revision);
    expect((await stored("h"))!).toMatchObject({ spec: { size: 1 }, metadata: { generation: 1 } });
  });

  it("returns the kind's warnings on update", async () => {
    await create("i", { size: 1 });
    const c = ctx();
    await update("i", (o) => void (o.spec.size = 500), undefined, {}, c);
    expect(c.warnings).toEqual(["spec.size above 100 is deprecated"]);
  });
});

describe("ResourceStore delete", () => {
  it("without finalizers removes the object and answers a Success Status", async () => {
    const created = await create("a");
    const result = await store.delete(NS, "a", ctx(), {}, false);
    expect(result.code).toBe(200);
    expect(result.body).toMatchObject({
      status: "Success",
      details: { name: "a", group: "example.com", kind: "gadgets", uid: created.metadata.uid },
    });
    expect(await stored("a")).toBeUndefined();
  });

  it("with a finalizer sets deletionTimestamp and keeps the object until the finalizer goes", async () => {
    await create("b", { size: 1 }, { finalizers: [HOLD] });
    const result = await store.delete(NS, "b", ctx(), {}, false);
    expect(result.code).toBe(200);
    const marked = result.body as Gadget;
    expect(marked.metadata.deletionTimestamp).toBeTruthy();
    expect(marked.metadata.deletionGracePeriodSeconds).toBe(0);
    // Kubernetes bumps generation when a deletion starts.
    expect(marked.metadata.generation).toBe(2);
    expect((await stored("b"))!.metadata).toMatchObject({ deletionTimestamp: marked.metadata.deletionTimestamp, finalizers: [HOLD] });

    // Deleting again changes nothing.
    const revision = await storage.currentRevision();
    await store.delete(NS, "b", ctx(), {}, false);
    expect(await storage.currentRevision()).toBe(revision);

    // No new finalizers on an object being deleted.
    const err = await refusal(update("b", (o) => void (o.metadata.finalizers = [HOLD, "example.com/other"])));
    expect(err.code).toBe(422);
    expect(await stored("b")).toBeDefined();

    // Removing the last finalizer deletes it.
    await update("b", (o) => void (o.metadata.finalizers = []));
    expect(await stored("b")).toBeUndefined();
  });

  it("turns propagation policies into the garbage collector's finalizers", async () => {
    await create("orphan");
    const orphaned = (await store.delete(NS, "orphan", ctx(), { propagationPolicy: "Orphan" }, false)).body as Gadget;
    expect(orphaned.metadata.finalizers).toEqual(["orphan"]);
    expect((await stored("orphan"))!.metadata.finalizers).toEqual(["orphan"]);

    await create("fg", {}, { finalizers: [HOLD] });
    const foreground = await store.delete(NS, "fg", ctx(), { orphanDependents: false }, false);
    expect(foreground.code).toBe(202);
    expect((await stored("fg"))!.metadata.finalizers).toEqual([HOLD]);

    await create("fg2", {}, { finalizers: [HOLD] });
    await store.delete(NS, "fg2", ctx(), { propagationPolicy: "Foreground" }, false);
    expect((await stored("fg2"))!.metadata.finalizers).toEqual([HOLD, "foregroundDeletion"]);

    await create("bg");
    await store.delete(NS, "bg", ctx(), { propagationPolicy: "Background" }, false);
    expect(await stored("bg")).toBeUndefined();
  });

  it("a grace period marks the object with a future deletionTimestamp; grace 0 removes it", async () => {
    await create("c");
    const before = Date.now();
    const marked = (await store.delete(NS, "c", ctx(), { gracePeriodSeconds: 30 }, false)).body as Gadget;
    expect(marked.metadata.deletionGracePeriodSeconds).toBe(30);
    const at = Date.parse(marked.metadata.deletionTimestamp!);
    expect(at).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 29_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 31_000);
    expect((await stored("c"))!.metadata.deletionGracePeriodSeconds).toBe(30);

    // A longer period does not extend a shorter one already running.
    const revision = await storage.currentRevision();
    await store.delete(NS, "c", ctx(), { gracePeriodSeconds: 60 }, false);
    expect(await storage.currentRevision()).toBe(revision);

    await store.delete(NS, "c", ctx(), { gracePeriodSeconds: 0 }, false);
    expect(await stored("c")).toBeUndefined();
  });

  it("a uid or resourceVersion precondition that does not match is a 409 and deletes nothing", async () => {
    const created = await create("d");
    const uid = await refusal(store.delete(NS, "d", ctx(), { preconditions: { uid: "other" } }, false));
    expect(uid.code).toBe(409);
    const rv = await refusal(store.delete(NS, "d", ctx(), { preconditions: { resourceVersion: "1" } }, false));
    expect(rv.code).toBe(409);
    expect((await stored("d"))!.metadata.uid).toBe(created.metadata.uid);
    await store.delete(
      NS,
      "d",
      ctx(),
      { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } },
      false,
    );
    expect(await stored("d")).toBeUndefined();
  });

  it("dry-run deletes nothing, with or without finalizers", async () => {
    await create("e");
    await create("f", {}, { finalizers: [HOLD] });
    const revision = await storage.currentRevision();
    await store.delete(NS, "e", ctx(), {}, true);
    const marked = (await store.delete(NS, "f", ctx(), {}, true)).body as Gadget;
    expect(marked.metadata.deletionTimestamp).toBeTruthy();
    expect(await storage.currentRevision()).toBe(revision);
    expect(await stored("e")).toBeDefined();
    expect((await stored("f"))!.metadata.deletionTimestamp).toBeUndefined();
  });
});
