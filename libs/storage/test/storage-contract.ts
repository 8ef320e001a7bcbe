// The contract every Storage engine must pass (SQLite now, another SQL engine later): one suite, run by
// each engine's test file against a real database. Engine-specific checks (files, WAL) stay in that file.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type Change,
  CompactedError,
  KeyExistsError,
  KeyNotFoundError,
  type KubeObject,
  type ListQuery,
  MAX_OBJECT_BYTES,
  ObjectTooLargeError,
  type ObjectKey,
  RevisionConflictError,
  type Storage,
  type StoredObject,
  keyText,
} from "../src/storage.js";

export interface StorageFixture {
  /** Opens a connection to this fixture's database; each call is a new, independent connection. */
  open(): Promise<Storage>;
  /** Bytes the database occupies on disk; the growth test is skipped when an engine cannot tell. */
  sizeOnDisk?(): number;
  /** Removes the database (every connection is closed by then). */
  dispose(): Promise<void>;
}

const PODS = "core/pods";
const DEPLOYMENTS = "apps/deployments";
const pod = (namespace: string, name: string): ObjectKey => ({ resource: PODS, namespace, name });

function object(name: string, fields: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, ...fields };
}
const rvOf = (value: string): string | undefined => (JSON.parse(value) as KubeObject).metadata.resourceVersion;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The parts of a stored object the contract compares. */
const plain = (o: StoredObject) => ({
  resource: o.resource,
  namespace: o.namespace,
  name: o.name,
  revision: o.revision,
  value: o.value,
});
const plainChange = (c: Change) => ({ ...plain(c), type: c.type, prevValue: c.prevValue });

/** Deterministic pseudo-random numbers, so a failing history can be replayed. */
function random(seed: number): (n: number) => number {
  let x = seed >>> 0;
  return (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

/** Every page of a list, following `continueAfter`; all pages must agree on the revision. */
async function listAll(storage: Storage, query: ListQuery): Promise<{ items: StoredObject[]; revision: number }> {
  const items: StoredObject[] = [];
  let page = await storage.list(query);
  const revision = page.revision;
  items.push(...page.items);
  while (page.continueAfter) {
    page = await storage.list({ ...query, after: page.continueAfter, revision });
    expect(page.revision).toBe(revision);
    items.push(...page.items);
  }
  return { items, revision };
}

export function describeStorageContract(name: string, factory: () => Promise<StorageFixture>): void {
  describe(`Storage contract: ${name}`, () => {
    let fixture: StorageFixture;
    let opened: Storage[] = [];
    /** A connection closed by the suite after the test. */
    const open = async (): Promise<Storage> => {
      const storage = await fixture.open();
      opened.push(storage);
      return storage;
    };
    /** Closes one connection now (e.g. before reopening) so afterEach does not close it twice. */
    const close = async (storage: Storage): Promise<void> => {
      opened = opened.filter((s) => s !== storage);
      await storage.close();
    };

    beforeEach(async () => {
      fixture = await factory();
    });
    afterEach(async () => {
      for (const storage of opened) await storage.close();
      opened = [];
      await fixture.dispose();
    });

    describe("revisions", () => {
      it("starts empty at revision 0", async () => {
        const s = await open();
        expect(await s.currentRevision()).toBe(0);
        expect(await s.compactedRevision()).toBe(0);
        expect(await s.publishedRevision()).toBe(0);
        expect(await s.get(pod("default", "a"))).toBeUndefined();
        expect(await s.list({ resource: PODS })).toEqual({ items: [], revision: 0 });
        expect(await s.changes(0, 100)).toEqual([]);
      });

      it("gives every committed write the next global revision, stamped as metadata.resourceVersion", async () => {
        const s = await open();
        const writes: Change[] = [];
        const a = object("a");
        writes.push(await s.create(pod("default", "a"), a));
        writes.push(await s.create({ resource: DEPLOYMENTS, namespace: "default", name: "a" }, object("a")));
        writes.push(await s.create({ resource: "core/namespaces", namespace: "", name: "default" }, object("default")));
        writes.push(await s.update(pod("default", "a"), object("a", { spec: 1 }), writes[0]!.revision));
        writes.push(await s.create(pod("other", "a"), object("a")));
        writes.push(await s.delete({ resource: DEPLOYMENTS, namespace: "default", name: "a" }, object("a"), writes[1]!.revision));
        writes.push(await s.update(pod("default", "a"), object("a", { spec: 2 }), writes[3]!.revision));

        // Global across resources and namespaces, strictly monotonic, no gaps: as etcd's.
        expect(writes.map((w) => w.revision)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(await s.currentRevision()).toBe(7);
        for (const w of writes) expect(rvOf(w.value)).toBe(String(w.revision));
        // The caller's object is stamped too.
        expect(a.metadata.resourceVersion).toBe("1");

        const stored = await s.get(pod("default", "a"));
        expect(stored).toMatchObject({ ...pod("default", "a"), revision: 7 });
        expect(rvOf(stored!.value)).toBe("7");
        for (const item of (await s.list({ resource: PODS })).items) expect(rvOf(item.value)).toBe(String(item.revision));
      });

      it("does not spend a revision on a write that fails", async () => {
        const s = await open();
        const created = await s.create(pod("default", "a"), object("a"));
        await expect(s.create(pod("default", "a"), object("a"))).rejects.toBeInstanceOf(KeyExistsError);
        await expect(s.update(pod("default", "a"), object("a"), created.revision + 5)).rejects.toBeInstanceOf(RevisionConflictError);
        await expect(s.update(pod("default", "missing"), object("missing"), 1)).rejects.toBeInstanceOf(KeyNotFoundError);
        expect(await s.currentRevision()).toBe(created.revision);
        expect(await s.changes(0, 100)).toHaveLength(1);
        expect((await s.create(pod("default", "b"), object("b"))).revision).toBe(created.revision + 1);
      });

      it("leaves the caller's object as it was when the write fails", async () => {
        const s = await open();
        await s.create(pod("default", "a"), object("a"));
        const duplicate = object("a");
        duplicate.metadata.resourceVersion = "41";
        await expect(s.create(pod("default", "a"), duplicate)).rejects.toBeInstanceOf(KeyExistsError);
        expect(duplicate.metadata.resourceVersion).toBe("41");
        const stale = object("a", { spec: 1 });
        await expect(s.update(pod("default", "a"), stale, 99)).rejects.toBeInstanceOf(RevisionConflictError);
        expect(stale.metadata.resourceVersion).toBeUndefined();
      });
    });

    describe("create, get, update, delete", () => {
      it("creates and gets by key; keys differ by resource, namespace and name", async () => {
        const s = await open();
        const change = await s.create(pod("default", "a"), object("a", { spec: { x: 1 } }));
        expect(change).toMatchObject({ ...pod("default", "a"), revision: 1, type: "ADDED", prevValue: undefined });
        const stamped = { ...object("a", { spec: { x: 1 } }), metadata: { name: "a", resourceVersion: "1" } };
        expect(JSON.parse(change.value)).toEqual(stamped);
        expect(await s.get(pod("default", "a"))).toEqual({ ...pod("default", "a"), revision: 1, value: change.value });
        expect(await s.get(pod("other", "a"))).toBeUndefined();
        expect(await s.get({ resource: DEPLOYMENTS, namespace: "default", name: "a" })).toBeUndefined();
        expect(await s.get(pod("", "a"))).toBeUndefined();
        expect(await s.get(pod("default", "A"))).toBeUndefined();
      });

      it("refuses a second create of a key with KeyExistsError and keeps the first", async () => {
        const s = await open();
        await s.create(pod("default", "a"), object("a", { v: 1 }));
        const error = await s.create(pod("default", "a"), object("a", { v: 2 })).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KeyExistsError);
        expect((error as KeyExistsError).key).toEqual(pod("default", "a"));
        expect(JSON.parse((await s.get(pod("default", "a")))!.value).v).toBe(1);
      });

      it("updates from the stored revision and reports the previous value", async () => {
        const s = await open();
        const created = await s.create(pod("default", "a"), object("a", { v: 1 }));
        const updated = await s.update(pod("default", "a"), object("a", { v: 2 }), created.revision);
        expect(updated).toMatchObject({ type: "MODIFIED", revision: 2, prevValue: created.value });
        expect(JSON.parse(updated.value)).toMatchObject({ v: 2, metadata: { resourceVersion: "2" } });
        expect(await s.get(pod("default", "a"))).toEqual({ ...pod("default", "a"), revision: 2, value: updated.value });
      });

      it("refuses a stale base revision with RevisionConflictError", async () => {
        const s = await open();
        const created = await s.create(pod("default", "a"), object("a", { v: 1 }));
        const updated = await s.update(pod("default", "a"), object("a", { v: 2 }), created.revision);
        const error = await s.update(pod("default", "a"), object("a", { v: 3 }), created.revision).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RevisionConflictError);
        expect(error).toMatchObject({ key: pod("default", "a"), expected: created.revision });
        await expect(s.delete(pod("default", "a"), object("a"), created.revision)).rejects.toBeInstanceOf(RevisionConflictError);
        expect((await s.get(pod("default", "a")))!.value).toBe(updated.value);
      });

      it("refuses an object over MAX_OBJECT_BYTES with ObjectTooLargeError, writing nothing and spending no revision", async () => {
        const s = await open();
        const created = await s.create(pod("default", "a"), object("a", { v: "x" }));
        const big = (name: string) => object(name, { v: "é".repeat(MAX_OBJECT_BYTES / 2) });
        const error = await s.create(pod("default", "b"), big("b")).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ObjectTooLargeError);
        expect((error as ObjectTooLargeError).bytes).toBeGreaterThan(MAX_OBJECT_BYTES);
        await expect(s.update(pod("default", "a"), big("a"), created.revision)).rejects.toBeInstanceOf(ObjectTooLargeError);
        expect(await s.get(pod("default", "b"))).toBeUndefined();
        expect((await s.get(pod("default", "a")))!.value).toBe(created.value);
        expect(await s.currentRevision()).toBe(created.revision);
        // Just under the limit is fine.
        const fits = object("c", { v: "" });
        fits.v = "x".repeat(MAX_OBJECT_BYTES - JSON.stringify({ ...fits, metadata: { ...fits.metadata, resourceVersion: "2" } }).length);
        expect((await s.create(pod("default", "c"), fits)).revision).toBe(created.revision + 1);
      });

      it("throws KeyNotFoundError for updates and deletes of a missing key", async () => {
        const s = await open();
        const error = await s.update(pod("default", "nope"), object("nope"), 0).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KeyNotFoundError);
        expect((error as KeyNotFoundError).key).toEqual(pod("default", "nope"));
        await expect(s.delete(pod("default", "nope"), object("nope"), 0)).rejects.toBeInstanceOf(KeyNotFoundError);
      });

      it("deletes with a tombstone change carrying the last state, and allows the key to be created again", async () => {
        const s = await open();
        const created = await s.create(pod("default", "a"), object("a", { v: 1 }));
        const deleted = await s.delete(pod("default", "a"), object("a", { v: 1, gone: true }), created.revision);
        expect(deleted).toMatchObject({ type: "DELETED", revision: 2, prevValue: created.value });
        expect(JSON.parse(deleted.value)).toMatchObject({ gone: true, metadata: { resourceVersion: "2" } });
        expect(await s.get(pod("default", "a"))).toBeUndefined();
        await expect(s.delete(pod("default", "a"), object("a"), deleted.revision)).rejects.toBeInstanceOf(KeyNotFoundError);
        const again = await s.create(pod("default", "a"), object("a", { v: 3 }));
        expect(again).toMatchObject({ type: "ADDED", revision: 3, prevValue: undefined });
      });
    });

    describe("two connections to one database", () => {
      it("lets exactly one of two writers from the same base revision win: the database enforces it", async () => {
        const a = await open();
        const b = await open();
        const key = pod("default", "x");
        const base = await a.create(key, object("x", { v: 0 }));
        // The second connection sees the first one's commit, with no cache in between.
        expect(await b.get(key)).toEqual({ ...key, revision: base.revision, value: base.value });

        const results = await Promise.allSettled([
          a.update(key, object("x", { v: "a" }), base.revision),
          b.update(key, object("x", { v: "b" }), base.revision),
        ]);
        const won = results.filter((r) => r.status === "fulfilled");
        const lost = results.filter((r) => r.status === "rejected");
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(RevisionConflictError);
        const winner = (won[0] as PromiseFulfilledResult<Change>).value;
        expect(await a.get(key)).toEqual({ ...key, revision: winner.revision, value: winner.value });
        expect(await b.get(key)).toEqual({ ...key, revision: winner.revision, value: winner.value });

        // The loser retrying from the old base loses again, on either connection, for update and delete.
        await expect(b.update(key, object("x"), base.revision)).rejects.toBeInstanceOf(RevisionConflictError);
        await expect(a.delete(key, object("x"), base.revision)).rejects.toBeInstanceOf(RevisionConflictError);
        await expect(b.delete(key, object("x"), base.revision)).rejects.toBeInstanceOf(RevisionConflictError);
      });

      it("lets exactly one of two creates of one key win, and shares one revision sequence", async () => {
        const a = await open();
        const b = await open();
        const results = await Promise.allSettled([a.create(pod("ns", "y"), object("y")), b.create(pod("ns", "y"), object("y"))]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(KeyExistsError);

        const revisions: number[] = [];
        for (let i = 0; i < 6; i++) revisions.push((await (i % 2 ? a : b).create(pod("ns", `z${i}`), object(`z${i}`))).revision);
        expect(revisions).toEqual([2, 3, 4, 5, 6, 7]);
        expect(await a.currentRevision()).toBe(7);
        expect(await b.currentRevision()).toBe(7);
        expect((await b.changes(0, 100)).map((c) => c.revision)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      });
    });

    describe("list", () => {
      it("sorts by (namespace, name), keeps to one resource and filters by namespace", async () => {
        const s = await open();
        const keys: Array<[string, string]> = [
          ["kube-system", "b"],
          ["default", "b"],
          ["", "cluster"],
          ["default", "a"],
          ["default", "a-1"],
          ["kube-system", "a"],
          ["default", "B"],
        ];
        for (const [ns, n] of keys) await s.create(pod(ns, n), object(n));
        await s.create({ resource: "core/podtemplates", namespace: "default", name: "a0" }, object("a0"));
        await s.create({ resource: "core/pod", namespace: "default", name: "a0" }, object("a0"));

        const all = await s.list({ resource: PODS });
        expect(all.revision).toBe(9);
        expect(all.items.map((o) => `${o.namespace}/${o.name}`)).toEqual([
          "/cluster",
          "default/B",
          "default/a",
          "default/a-1",
          "default/b",
          "kube-system/a",
          "kube-system/b",
        ]);
        for (const item of all.items) expect(item).toEqual(await s.get(item));
        expect(all.continueAfter).toBeUndefined();

        const inDefault = await s.list({ resource: PODS, namespace: "default" });
        expect(inDefault.items.map((o) => o.name)).toEqual(["B", "a", "a-1", "b"]);
        expect(inDefault.revision).toBe(9);
        expect((await s.list({ resource: PODS, namespace: "" })).items.map((o) => o.name)).toEqual(["cluster"]);
        expect(await s.list({ resource: "apps/deployments" })).toEqual({ items: [], revision: 9 });
      });

      it("pages with limit, continueAfter and remaining, and the pages add up to the whole list", async () => {
        const s = await open();
        for (let i = 0; i < 7; i++) await s.create(pod(i < 4 ? "a" : "b", `o${i}`), object(`o${i}`));
        const whole = await s.list({ resource: PODS });

        const first = await s.list({ resource: PODS, limit: 3 });
        expect(first.items.map((o) => o.name)).toEqual(["o0", "o1", "o2"]);
        expect(first.continueAfter).toEqual({ namespace: "a", name: "o2" });
        expect(first.remaining).toBe(4);
        const second = await s.list({ resource: PODS, limit: 3, after: first.continueAfter });
        expect(second.items.map((o) => o.name)).toEqual(["o3", "o4", "o5"]);
        expect(second.continueAfter).toEqual({ namespace: "b", name: "o5" });
        expect(second.remaining).toBe(1);
        const last = await s.list({ resource: PODS, limit: 3, after: second.continueAfter });
        expect(last.items.map((o) => o.name)).toEqual(["o6"]);
        expect(last.continueAfter).toBeUndefined();
        expect(last.remaining).toBeUndefined();

        // A page that ends exactly at the last object has nothing to continue.
        const exact = await s.list({ resource: PODS, limit: 7 });
        expect(exact.items).toHaveLength(7);
        expect(exact.continueAfter).toBeUndefined();
        expect((await listAll(s, { resource: PODS, limit: 2 })).items).toEqual(whole.items);

        const ns = await s.list({ resource: PODS, namespace: "a", limit: 3 });
        expect(ns.items.map((o) => o.name)).toEqual(["o0", "o1", "o2"]);
        expect(ns.remaining).toBe(1);
        // Pages within a namespace continue by name and never run into the next namespace's keys.
        const nsRest = await s.list({ resource: PODS, namespace: "a", limit: 3, after: ns.continueAfter });
        expect(nsRest.items.map((o) => o.name)).toEqual(["o3"]);
        expect(nsRest.continueAfter).toBeUndefined();
        expect((await listAll(s, { resource: PODS, namespace: "b", limit: 1 })).items.map((o) => o.name)).toEqual(["o4", "o5", "o6"]);
      });

      it("applies the filter before the limit, across many objects", async () => {
        const s = await open();
        // More objects than an engine is likely to read in one batch, with few matches far apart.
        const total = 2500;
        for (let i = 0; i < total; i++) {
          const name = `o${String(i).padStart(4, "0")}`;
          await s.create(pod("default", name), object(name, { wanted: i % 600 === 0 }));
        }
        const filter = (o: StoredObject) => (JSON.parse(o.value) as { wanted: boolean }).wanted;
        const first = await s.list({ resource: PODS, limit: 3, filter });
        expect(first.items.map((o) => o.name)).toEqual(["o0000", "o0600", "o1200"]);
        expect(first.continueAfter).toEqual({ namespace: "default", name: "o1200" });
        // How many of the rest match is unknown without reading them all: no count.
        expect(first.remaining).toBeUndefined();
        const second = await s.list({ resource: PODS, limit: 3, filter, after: first.continueAfter });
        expect(second.items.map((o) => o.name)).toEqual(["o1800", "o2400"]);
        expect(second.continueAfter).toBeUndefined();
        expect((await s.list({ resource: PODS, filter })).items).toHaveLength(5);
        // Unfiltered pages longer than a batch, and one ending exactly at a batch's end.
        const long = await s.list({ resource: PODS, limit: 1200 });
        expect(long.items).toHaveLength(1200);
        expect(long.continueAfter).toEqual({ namespace: "default", name: "o1199" });
        expect(long.remaining).toBe(total - 1200);
        const pages = await listAll(s, { resource: PODS, limit: 1000 });
        expect(pages.items.map((o) => o.name)).toEqual(Array.from({ length: total }, (_, i) => `o${String(i).padStart(4, "0")}`));
      });

      it("at an older revision returns exactly the state at that revision", async () => {
        const s = await open();
        const a1 = await s.create(pod("default", "a"), object("a", { v: 1 }));
        const b1 = await s.create(pod("default", "b"), object("b", { v: 1 }));
        const c1 = await s.create(pod("default", "c"), object("c", { v: 1 }));
        const a2 = await s.update(pod("default", "a"), object("a", { v: 2 }), a1.revision);
        const at = await s.currentRevision();

        // After `at`: update a, delete b, delete c then create it again, create d.
        await s.update(pod("default", "a"), object("a", { v: 3 }), a2.revision);
        await s.delete(pod("default", "b"), object("b"), b1.revision);
        await s.delete(pod("default", "c"), object("c"), c1.revision);
        await s.create(pod("default", "c"), object("c", { v: "new" }));
        await s.create(pod("default", "d"), object("d"));

        const then = await s.list({ resource: PODS, revision: at });
        expect(then.revision).toBe(at);
        expect(then.items.map(plain)).toEqual([plain(a2), plain(b1), plain(c1)]);
        for (const item of then.items) expect(rvOf(item.value)).toBe(String(item.revision));
        expect((await s.list({ resource: PODS, revision: 2 })).items.map(plain)).toEqual([plain(a1), plain(b1)]);
        expect((await s.list({ resource: PODS, revision: 0 })).items).toEqual([]);
        const paged = await s.list({ resource: PODS, revision: at, limit: 2 });
        expect(paged.items.map(plain)).toEqual([plain(a2), plain(b1)]);
        expect(paged.remaining).toBe(1);
        expect((await s.list({ resource: PODS, revision: at, after: paged.continueAfter! })).items.map(plain)).toEqual([plain(c1)]);
      });

      it("pages a namespace at an older revision while it changes: each page's remaining count is what the later pages hold", async () => {
        const s = await open();
        const name = (i: number) => `o${String(i).padStart(2, "0")}`;
        for (let i = 0; i < 20; i++) await s.create(pod("a", name(i)), object(name(i)));
        await s.create(pod("b", "o00"), object("o00"));
        const first = await s.list({ resource: PODS, namespace: "a", limit: 6 });
        // After the first page: some objects change, some go, new ones come, in and beside the namespace.
        for (const i of [3, 8, 15])
          await s.update(pod("a", name(i)), object(name(i), { changed: true }), (await s.get(pod("a", name(i))))!.revision);
        for (const i of [9, 19]) await s.delete(pod("a", name(i)), object(name(i)), (await s.get(pod("a", name(i))))!.revision);
        await s.create(pod("a", "o10x"), object("o10x"));
        await s.create(pod("b", "o01"), object("o01"));

        const names = first.items.map((o) => o.name);
        let page = first;
        while (page.continueAfter) {
          expect(page.remaining).toBe(20 - names.length);
          page = await s.list({ resource: PODS, namespace: "a", limit: 6, after: page.continueAfter, revision: first.revision });
          expect(page.revision).toBe(first.revision);
          names.push(...page.items.map((o) => o.name));
        }
        expect(names).toEqual(Array.from({ length: 20 }, (_, i) => name(i)));
      });

      it("never claims consistency at a revision that has not been committed", async () => {
        const s = await open();
        await s.create(pod("default", "a"), object("a"));
        const future = await s.list({ resource: PODS, revision: 50 });
        expect(future.revision).toBe(1);
        expect(future.items).toHaveLength(1);
      });

      it("matches a replayed model at every revision, for every query shape", async () => {
        const s = await open();
        const next = random(7);
        const resources = [PODS, DEPLOYMENTS];
        const namespaces = ["", "ns-a", "ns-b"];
        const names = ["n0", "n1", "n2", "n3", "n4"];
        const live = new Map<string, StoredObject>();
        const states: Array<Map<string, StoredObject>> = [new Map()];
        const log: Change[] = [];
        for (let i = 0; i < 160; i++) {
          const key = { resource: resources[next(2)]!, namespace: namespaces[next(3)]!, name: names[next(5)]! };
          const current = live.get(keyText(key));
          let change: Change;
          if (!current) change = await s.create(key, object(key.name, { i }));
          else if (next(4) === 0) change = await s.delete(key, object(key.name, { i, deleted: true }), current.revision);
          else change = await s.update(key, object(key.name, { i }), current.revision);
          if (change.type === "DELETED") live.delete(keyText(key));
          else live.set(keyText(key), { ...key, revision: change.revision, value: change.value });
          log.push(change);
          states[change.revision] = new Map(live);
        }
        const current = await s.currentRevision();
        expect(current).toBe(160);
        const expected = (revision: number, resource: string, namespace?: string) =>
          [...states[revision]!.values()]
            .filter((o) => o.resource === resource && (namespace === undefined || o.namespace === namespace))
            .sort((x, y) => (x.namespace === y.namespace ? cmp(x.name, y.name) : cmp(x.namespace, y.namespace)))
            .map(plain);

        const check = async (from: number) => {
          for (let revision = from; revision <= current; revision++) {
            for (const resource of resources) {
              const whole = await s.list({ resource, revision });
              expect(whole.revision).toBe(revision);
              expect(whole.items.map(plain)).toEqual(expected(revision, resource));
              expect((await s.list({ resource, revision, namespace: "ns-a" })).items.map(plain)).toEqual(
                expected(revision, resource, "ns-a"),
              );
              const paged = await listAll(s, { resource, revision, limit: 2 });
              expect(paged.items.map(plain)).toEqual(expected(revision, resource));
            }
            expect((await s.changes(revision, 1000)).map(plainChange)).toEqual(log.slice(revision).map(plainChange));
            expect((await s.changes(revision, 3, DEPLOYMENTS)).map(plainChange)).toEqual(
              log
                .filter((c) => c.revision > revision && c.resource === DEPLOYMENTS)
                .slice(0, 3)
                .map(plainChange),
            );
          }
        };
        await check(0);

        // After compaction the remaining window must still answer exactly; older revisions are gone.
        await s.markPublished(current);
        const compacted = await s.compact({ maxRevisions: 60, maxAgeMs: 3_600_000 });
        expect(compacted.compactedThrough).toBe(100);
        await check(100);
        await expect(s.list({ resource: PODS, revision: 99 })).rejects.toBeInstanceOf(CompactedError);
      });
    });

    describe("changes", () => {
      it("returns exactly the changes after a revision, oldest first, with the previous value", async () => {
        const s = await open();
        const created = await s.create(pod("default", "a"), object("a", { v: 1 }));
        const other = await s.create({ resource: DEPLOYMENTS, namespace: "default", name: "d" }, object("d"));
        const updated = await s.update(pod("default", "a"), object("a", { v: 2 }), created.revision);
        const deleted = await s.delete(pod("default", "a"), object("a", { v: 2 }), updated.revision);
        const all = [created, other, updated, deleted];

        expect((await s.changes(0, 100)).map(plainChange)).toEqual(all.map(plainChange));
        expect((await s.changes(1, 100)).map(plainChange)).toEqual(all.slice(1).map(plainChange));
        expect((await s.changes(1, 2)).map(plainChange)).toEqual(all.slice(1, 3).map(plainChange));
        expect(await s.changes(4, 100)).toEqual([]);
        expect((await s.changes(0, 100, PODS)).map((c) => c.revision)).toEqual([1, 3, 4]);
        expect((await s.changes(0, 100, DEPLOYMENTS)).map((c) => c.revision)).toEqual([2]);

        const [c1, , c3, c4] = await s.changes(0, 100);
        expect(c1!.prevValue).toBeUndefined();
        expect(c3!.prevValue).toBe(created.value);
        expect(c4!.prevValue).toBe(updated.value);
      });
    });

    describe("compaction", () => {
      async function churn(s: Storage, writes: number): Promise<void> {
        let revision = (await s.create(pod("default", "churn"), object("churn"))).revision;
        for (let i = 1; i < writes; i++) revision = (await s.update(pod("default", "churn"), object("churn", { i }), revision)).revision;
      }

      it("keeps a window by count and answers CompactedError below it", async () => {
        const s = await open();
        await churn(s, 10);
        await s.markPublished(10);
        expect(await s.compact({ maxRevisions: 3, maxAgeMs: 3_600_000 })).toEqual({ compactedThrough: 7, removed: 7 });
        expect(await s.compactedRevision()).toBe(7);
        expect((await s.changes(7, 100)).map((c) => c.revision)).toEqual([8, 9, 10]);
        const error = await s.changes(6, 100).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CompactedError);
        expect(error).toMatchObject({ requested: 6, compacted: 7 });
        await expect(s.list({ resource: PODS, revision: 6 })).rejects.toBeInstanceOf(CompactedError);
        expect((await s.list({ resource: PODS, revision: 7 })).items.map((o) => o.revision)).toEqual([7]);
        // The current state is untouched, and a second run has nothing to do.
        expect((await s.get(pod("default", "churn")))!.revision).toBe(10);
        expect(await s.compact({ maxRevisions: 3, maxAgeMs: 3_600_000 })).toEqual({ compactedThrough: 7, removed: 0 });
      });

      it("drops history older than the age limit", async () => {
        const s = await open();
        await churn(s, 5);
        // A fixed pause on purpose: the first 5 revisions are at least 60 ms older than the next 3.
        await sleep(60);
        const pauseEnded = Date.now();
        let revision = (await s.get(pod("default", "churn")))!.revision;
        for (let i = 0; i < 3; i++) revision = (await s.update(pod("default", "churn"), object("churn"), revision)).revision;
        await s.markPublished(revision);
        // The limit falls in the pause whatever the later writes took (a networked engine's commits take
        // milliseconds each): older than it are the first 5, younger the last 3, with 30 ms either side.
        const maxAgeMs = Date.now() - pauseEnded + 30;
        expect(await s.compact({ maxRevisions: 1000, maxAgeMs })).toEqual({ compactedThrough: 5, removed: 5 });
        expect((await s.changes(5, 100)).map((c) => c.revision)).toEqual([6, 7, 8]);
      });

      it("never compacts beyond the published watermark: the log is the outbox", async () => {
        const s = await open();
        await churn(s, 10);
        expect(await s.compact({ maxRevisions: 0, maxAgeMs: 0 })).toEqual({ compactedThrough: 0, removed: 0 });
        expect(await s.changes(0, 100)).toHaveLength(10);
        await s.markPublished(4);
        expect(await s.compact({ maxRevisions: 0, maxAgeMs: 0 })).toEqual({ compactedThrough: 4, removed: 4 });
        expect((await s.changes(4, 100)).map((c) => c.revision)).toEqual([5, 6, 7, 8, 9, 10]);
      });

      it("keeps the published watermark monotonic", async () => {
        const s = await open();
        await churn(s, 5);
        await s.markPublished(4);
        await s.markPublished(2);
        expect(await s.publishedRevision()).toBe(4);
        await s.markPublished(5);
        expect(await s.publishedRevision()).toBe(5);
      });

      it("keeps the database bounded under churn", async (ctx) => {
        if (!fixture.sizeOnDisk) return ctx.skip();
        const s = await open();
        const objects = 50;
        const updates = 20_000;
        const compactEvery = 1000;
        const policy = { maxRevisions: 1000, maxAgeMs: 3_600_000 };
        const padding = "x".repeat(400);
        const keys = Array.from({ length: objects }, (_, i) => pod("default", `churn-${String(i).padStart(2, "0")}`));
        const revisions = new Map<string, number>();
        let valueBytes = 0;
        for (const key of keys) {
          const c = await s.create(key, object(key.name, { padding, i: 0 }));
          revisions.set(key.name, c.revision);
          valueBytes = Math.max(valueBytes, c.value.length);
        }
        let largest = 0;
        for (let i = 1; i <= updates; i++) {
          const key = keys[i % objects]!;
          const c = await s.update(key, object(key.name, { padding, i }), revisions.get(key.name)!);
          revisions.set(key.name, c.revision);
          valueBytes = Math.max(valueBytes, c.value.length);
          if (i % compactEvery === 0) {
            await s.markPublished(c.revision);
            await s.compact(policy);
            // What compaction leaves behind; logs in between are bounded by the engine (see its own tests).
            largest = Math.max(largest, fixture.sizeOnDisk());
          }
        }
        // The bound comes from the data, not from a guess. Between two compactions the history holds at most
        // maxRevisions + compactEvery changes; each stores its value and the previous value (2 × valueBytes)
        // plus its key twice (row and index), and the current table holds one value per object. B-tree pages
        // stay at least half full as rows are appended at one end and removed at the other, hence × 2, plus
        // 64 KiB for the schema, counters and the roots of each table and index.
        const keyBytes = keys[0]!.resource.length + keys[0]!.namespace.length + keys[0]!.name.length + 16;
        const history = (policy.maxRevisions + compactEvery) * (2 * valueBytes + 2 * keyBytes);
        const current = objects * (valueBytes + 2 * keyBytes);
        const bound = 2 * (history + current) + 64 * 1024;
        // The bound must mean something: the uncompacted history alone would be several times larger.
        const uncompacted = (objects + updates) * 2 * valueBytes;
        expect(bound).toBeLessThan(uncompacted / 2);
        expect(largest).toBeLessThan(bound);
        expect(fixture.sizeOnDisk()).toBeLessThan(bound);
      });
    });

    describe("onCommit", () => {
      it("calls listeners after each commit, in revision order, before the write resolves", async () => {
        const s = await open();
        const reader = await open();
        const seen: Change[] = [];
        const reads: Array<Promise<Change[]>> = [];
        const other: number[] = [];
        s.onCommit((change) => {
          seen.push(change);
          // Committed, so another connection can read it. The log, not the object: a read on another
          // connection may run after later commits too (it does when the engine is across a network),
          // and the change at this revision is the one answer that later commits cannot alter.
          reads.push(reader.changes(change.revision - 1, 1));
        });
        const unsubscribe = s.onCommit((change) => other.push(change.revision));

        const returned: Change[] = [];
        const created = await s.create(pod("default", "a"), object("a"));
        expect(seen).toHaveLength(1);
        returned.push(created);
        returned.push(await s.create({ resource: DEPLOYMENTS, namespace: "x", name: "d" }, object("d")));
        returned.push(await s.update(pod("default", "a"), object("a", { v: 2 }), created.revision));
        unsubscribe();
        returned.push(await s.delete(pod("default", "a"), object("a"), 3));
        await expect(s.create({ resource: DEPLOYMENTS, namespace: "x", name: "d" }, object("d"))).rejects.toBeInstanceOf(KeyExistsError);

        expect(seen.map(plainChange)).toEqual(returned.map(plainChange));
        expect(seen.map((c) => c.revision)).toEqual([1, 2, 3, 4]);
        expect(other).toEqual([1, 2, 3]);
        const read = await Promise.all(reads);
        expect(read.map((r) => r.map(plainChange))).toEqual(returned.map((c) => [plainChange(c)]));
      });

      it("hands listeners the committed object with each change it commits, and keeps only the text afterwards", async () => {
        const s = await open();
        const heard: { object: unknown; value: string }[] = [];
        s.onCommit((c) => heard.push({ object: c.object, value: c.value }));
        const created = object("a", { spec: { v: 1 } });
        const change = await s.create(pod("default", "a"), created);
        // The listener had the very object written, which the text encodes, revision included.
        expect(heard[0]!.object).toBe(created);
        expect(heard[0]!.object).toEqual(JSON.parse(heard[0]!.value));
        // Whoever keeps the change (a watch window) keeps the text, not the object.
        expect(change.object).toBeUndefined();
        const updated = object("a", { spec: { v: 2 } });
        await s.update(pod("default", "a"), updated, change.revision);
        expect(heard[1]!.object).toBe(updated);
        expect(JSON.parse(heard[1]!.value).spec.v).toBe(2);
      });

      it("does not fail a committed write when a listener throws, and still calls the others", async () => {
        const s = await open();
        const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
        try {
          const after: number[] = [];
          s.onCommit(() => {
            throw new Error("listener bug");
          });
          s.onCommit((c) => after.push(c.revision));
          const created = await s.create(pod("default", "a"), object("a"));
          expect(created.revision).toBe(1);
          expect(after).toEqual([1]);
          expect((await s.get(pod("default", "a")))!.revision).toBe(1);
        } finally {
          errors.mockRestore();
        }
      });
    });

    describe("durability", () => {
      it("keeps objects, history and watermarks across close and reopen", async () => {
        let s = await open();
        const a = await s.create(pod("default", "a"), object("a"));
        await s.update(pod("default", "a"), object("a", { v: 2 }), a.revision);
        await s.create({ resource: DEPLOYMENTS, namespace: "x", name: "d" }, object("d"));
        await s.create(pod("default", "b"), object("b"));
        await s.markPublished(3);
        await s.compact({ maxRevisions: 2, maxAgeMs: 3_600_000 });
        const before = {
          list: await s.list({ resource: PODS }),
          changes: await s.changes(2, 100),
          at3: await s.list({ resource: PODS, revision: 3 }),
        };
        await close(s);

        s = await open();
        expect(await s.currentRevision()).toBe(4);
        expect(await s.compactedRevision()).toBe(2);
        expect(await s.publishedRevision()).toBe(3);
        expect(await s.list({ resource: PODS })).toEqual(before.list);
        expect(await s.list({ resource: PODS, revision: 3 })).toEqual(before.at3);
        expect(await s.changes(2, 100)).toEqual(before.changes);
        expect((await s.create(pod("default", "c"), object("c"))).revision).toBe(5);
      });
    });
  });
}

const cmp = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
