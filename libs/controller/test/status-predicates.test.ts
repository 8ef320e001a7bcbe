import type { ResourceRef } from "@orch/client";
import { describe, expect, it } from "vitest";
import { allOf, anyOf, generationChanged, ignoreStatusOnlyChanges, writeStatus } from "../src/index.js";
import { FakeStore, type Obj, apiError, obj } from "./fakes.js";

const things: ResourceRef = { group: "example.io", version: "v1", plural: "things", namespaced: true };

describe("predicates", () => {
  const v = (generation: number | undefined, rv: string, extra: Partial<Obj> = {}) => ({ ...obj("a", { generation, rv }), ...extra });

  it("generationChanged passes spec changes, adds, deletes, resyncs and deletions; not status writes", () => {
    const old = v(1, "1");
    expect(generationChanged({ type: "update", old, object: v(1, "2", { status: { x: 1 } }) })).toBe(false);
    expect(generationChanged({ type: "update", old, object: v(2, "2") })).toBe(true);
    expect(generationChanged({ type: "update", old, object: old })).toBe(true);
    expect(generationChanged({ type: "add", object: old })).toBe(true);
    expect(generationChanged({ type: "delete", object: old })).toBe(true);
    const deleting = v(1, "2");
    deleting.metadata!.deletionTimestamp = "2024-01-01T00:00:00Z";
    expect(generationChanged({ type: "update", old, object: deleting })).toBe(true);
    // Without generations there is nothing to compare: pass.
    expect(generationChanged({ type: "update", old: v(undefined, "1"), object: v(undefined, "2") })).toBe(true);
  });

  it("ignoreStatusOnlyChanges passes everything but a change confined to status", () => {
    const old = v(1, "1", { spec: { a: 1 }, status: { s: 1 } });
    expect(ignoreStatusOnlyChanges({ type: "update", old, object: v(1, "2", { spec: { a: 1 }, status: { s: 2 } }) })).toBe(false);
    expect(ignoreStatusOnlyChanges({ type: "update", old, object: v(1, "2", { spec: { a: 2 }, status: { s: 1 } }) })).toBe(true);
    const labelled = v(1, "2", { spec: { a: 1 }, status: { s: 1 } });
    labelled.metadata!.labels = { x: "y" };
    expect(ignoreStatusOnlyChanges({ type: "update", old, object: labelled })).toBe(true);
    expect(ignoreStatusOnlyChanges({ type: "update", old, object: old })).toBe(true);
  });

  it("allOf / anyOf combine", () => {
    const yes = () => true;
    const no = () => false;
    const e = { type: "add" as const, object: obj("a") };
    expect(allOf(yes, no)(e)).toBe(false);
    expect(allOf(yes, yes)(e)).toBe(true);
    expect(anyOf(no, yes)(e)).toBe(true);
    expect(anyOf(no, no)(e)).toBe(false);
  });
});

describe("writeStatus", () => {
  it("writes the mutation through /status with the object's resourceVersion, without touching the input", async () => {
    const store = new FakeStore();
    const cached = store.seed(things, obj("a", { spec: { n: 1 } }));
    const frozen = structuredClone(cached);
    const written = await writeStatus(store, things, cached, (o) => {
      o.status = { observed: 1 };
    });
    expect(written.status).toEqual({ observed: 1 });
    expect(cached).toEqual(frozen);
    expect(store.calls).toEqual(["update/status a"]);
  });

  it("writes nothing when the mutation changes nothing", async () => {
    const store = new FakeStore();
    const cached = store.seed(things, obj("a", { status: { observed: 1 } }));
    const same = await writeStatus(store, things, cached, (o) => ({ ...o, status: { observed: 1 } }));
    expect(same).toBe(cached);
    expect(store.calls).toEqual([]);
  });

  it("on Conflict reads the object again and re-applies the mutation", async () => {
    const store = new FakeStore();
    const cached = store.seed(things, obj("a", { status: { count: 0 } }));
    // Someone else wrote in between: the cached copy is stale.
    store.touch(things, "ns", "a", (o) => (o.status = { count: 5, other: true }));
    const written = await writeStatus<Obj>(store, things, cached, (o) => {
      o.status = { ...o.status, count: ((o.status?.count as number) ?? 0) + 1 };
    });
    expect(written.status).toEqual({ count: 6, other: true });
    expect(store.calls).toEqual(["update/status a", "get a", "update/status a"]);
  });

  it("writes /approval when asked", async () => {
    const store = new FakeStore();
    const cached = store.seed(things, obj("a"));
    await writeStatus(store, things, cached, (o) => void (o.status = { conditions: [{ type: "Approved" }] }), { subresource: "approval" });
    expect(store.calls).toEqual(["update/approval a"]);
  });

  it("gives up after the attempts, and does not retry other errors", async () => {
    const store = new FakeStore();
    const cached = store.seed(things, obj("a"));
    store.before = (method) => {
      if (method.startsWith("update")) throw apiError(409, "Conflict");
    };
    await expect(writeStatus(store, things, cached, (o) => void (o.status = { x: 1 }), { attempts: 3 })).rejects.toThrow("Conflict");
    expect(store.calls.filter((c) => c.startsWith("update"))).toHaveLength(3);

    store.calls.length = 0;
    store.before = (method) => {
      if (method.startsWith("update")) throw apiError(422, "Invalid");
    };
    await expect(writeStatus(store, things, cached, (o) => void (o.status = { x: 1 }))).rejects.toThrow("Invalid");
    expect(store.calls).toEqual(["update/status a"]);
  });
});
