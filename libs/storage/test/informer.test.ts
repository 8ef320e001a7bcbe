import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@orch/log";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ListQuery,
  type ListResult,
  SqliteStorage,
  type Storage,
  StorageInformer,
  UnreadableValueError,
  type ValueTransformer,
} from "../src/index.js";

type Obj = {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  [k: string]: unknown;
};

const PODS = "core/pods";
const SECRETS = "core/secrets";
const key = (name: string, resource = PODS) => ({ resource, namespace: "default", name });
const obj = (name: string, labels?: Record<string, string>): Obj => ({ metadata: { name, ...(labels ? { labels } : {}) } });

/** What the handlers were told, as `type name rv`, in order. */
function record(informer: StorageInformer<Obj>): string[] {
  const seen: string[] = [];
  const line = (type: string, o: Obj) => seen.push(`${type} ${o.metadata.name} ${o.metadata.resourceVersion}`);
  informer.addEventHandler({
    onAdd: (o) => line("add", o),
    onUpdate: (_old, o) => line("update", o),
    onDelete: (o) => line("delete", o),
  });
  return seen;
}

/** The real storage, with each list held at a gate, before or after it reads the database. */
function gatedLists(storage: Storage, when: "before-read" | "after-read"): { storage: Storage; open: () => void; listing: Promise<void> } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const listing = new Promise<void>((resolve) => (entered = resolve));
  const list = async (query: ListQuery): Promise<ListResult> => {
    entered();
    if (when === "before-read") await gate;
    const result = await storage.list(query);
    if (when === "after-read") await gate;
    return result;
  };
  const gated = new Proxy(storage, {
    get(target, prop) {
      if (prop === "list") return list;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage: gated, open, listing };
}

describe("StorageInformer", () => {
  let dir: string;
  let storage: SqliteStorage;
  const informers: StorageInformer<Obj>[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orch-informer-"));
    storage = new SqliteStorage({ path: join(dir, "orch.db") });
  });
  afterEach(async () => {
    for (const i of informers.splice(0)) i.stop();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const informer = (s: Storage, options: ConstructorParameters<typeof StorageInformer>[1]) => {
    const i = new StorageInformer<Obj>(s, { log: silentLogger, ...options });
    informers.push(i);
    return i;
  };

  it("delivers the listed objects as adds, then every later commit in order, synchronously", async () => {
    await storage.create(key("a"), obj("a"));
    const b = await storage.create(key("b"), obj("b"));
    const i = informer(storage, { resources: [PODS] });
    const seen = record(i);
    await i.waitForSync();
    expect(seen).toEqual(["add a 1", "add b 2"]);

    const updated = await storage.update(key("b"), obj("b", { x: "1" }), b.revision);
    // Heard by the time the write resolves: an index kept by a handler is current for the next request.
    expect(seen.at(-1)).toBe("update b 3");
    await storage.delete(key("a"), obj("a"), 1);
    await storage.create(key("c", SECRETS), obj("c"));
    expect(seen).toEqual(["add a 1", "add b 2", `update b ${updated.revision}`, "delete a 4"]);
  });

  it("hands onUpdate the previous state and onDelete the last one", async () => {
    const a = await storage.create(key("a"), obj("a", { v: "1" }));
    const i = informer(storage, { resources: [PODS] });
    const olds: (string | undefined)[] = [];
    const deleted: Obj[] = [];
    i.addEventHandler({ onUpdate: (previous) => olds.push(previous().metadata.labels?.v), onDelete: (o) => deleted.push(o) });
    await i.waitForSync();
    const b = await storage.update(key("a"), obj("a", { v: "2" }), a.revision);
    await storage.delete(key("a"), obj("a", { v: "last" }), b.revision);
    expect(olds).toEqual(["1"]);
    expect(deleted.map((o) => o.metadata.labels?.v)).toEqual(["last"]);
  });

  it("neither loses nor repeats commits made while a list is in flight (list read after them)", async () => {
    await storage.create(key("a"), obj("a"));
    const gated = gatedLists(storage, "before-read");
    const i = informer(gated.storage, { resources: [PODS] });
    const seen = record(i);
    i.start();
    await gated.listing;
    // Committed before the list reads: the list has them, the buffered commits must be dropped.
    await storage.create(key("b"), obj("b"));
    await storage.update(key("a"), obj("a", { x: "1" }), 1);
    gated.open();
    await i.waitForSync();
    expect(seen).toEqual(["add a 3", "add b 2"]);
    await storage.create(key("c"), obj("c"));
    expect(seen).toEqual(["add a 3", "add b 2", "add c 4"]);
  });

  it("neither loses nor repeats commits made while a list is in flight (list read before them)", async () => {
    await storage.create(key("a"), obj("a"));
    const gated = gatedLists(storage, "after-read");
    const i = informer(gated.storage, { resources: [PODS] });
    const seen = record(i);
    i.start();
    await gated.listing;
    await new Promise((r) => setImmediate(r));
    // Committed after the list read: only the buffer has them, delivered after the list in order.
    await storage.create(key("b"), obj("b"));
    await storage.update(key("a"), obj("a", { x: "1" }), 1);
    await storage.delete(key("b"), obj("b"), 2);
    expect(seen).toEqual([]);
    gated.open();
    await i.waitForSync();
    expect(seen).toEqual(["add a 1", "add b 2", "update a 3", "delete b 4"]);
  });

  it("follows resources it did not list when asked to, from the commits after its start", async () => {
    await storage.create(key("old", SECRETS), obj("old"));
    const i = informer(storage, { resources: [PODS], follows: () => true });
    const seen = record(i);
    await i.waitForSync();
    await storage.create(key("new", SECRETS), obj("new"));
    expect(seen).toEqual(["add new 2"]);
  });

  it("hands the handlers only the objects `keep` accepts, listed or committed", async () => {
    await storage.create(key("default"), obj("default"));
    await storage.create(key("other"), obj("other"));
    const i = informer(storage, { resources: [PODS, SECRETS], keep: (k) => k.resource === SECRETS || k.name === "default" });
    const seen = record(i);
    await i.waitForSync();
    const other = await storage.create(key("another"), obj("another"));
    await storage.update(key("default"), obj("default", { x: "1" }), 1);
    await storage.delete(key("another"), obj("another"), other.revision);
    await storage.create(key("s", SECRETS), obj("s"));
    expect(seen).toEqual(["add default 1", "update default 4", "add s 6"]);
  });

  it("keeps delivering to the other handlers when one throws", async () => {
    const i = informer(storage, { resources: [PODS] });
    i.addEventHandler({
      onAdd: () => {
        throw new Error("broken handler");
      },
    });
    const seen = record(i);
    await i.waitForSync();
    await storage.create(key("a"), obj("a"));
    expect(seen).toEqual(["add a 1"]);
  });

  it("refuses handlers added after start, and stops hearing commits once stopped", async () => {
    const i = informer(storage, { resources: [PODS] });
    const seen = record(i);
    await i.waitForSync();
    expect(() => i.addEventHandler({})).toThrow(/before start/);
    i.stop();
    await storage.create(key("a"), obj("a"));
    expect(seen).toEqual([]);
  });
  it("leaves out an object it cannot read (its encryption key is gone) and syncs with the rest", async () => {
    await storage.close();
    // Values of "lost" are stored in a form the reopened storage no longer reads.
    const marked: ValueTransformer = {
      toStorage: (json, k) => (k.name === "lost" ? Buffer.from(json) : json),
      fromStorage: (stored, k) => {
        if (typeof stored !== "string") throw new UnreadableValueError(k, "no matching key");
        return { json: stored, stale: false };
      },
    };
    storage = new SqliteStorage({ path: join(dir, "orch.db"), transformers: () => marked });
    await storage.create(key("kept", SECRETS), obj("kept"));
    await storage.create(key("lost", SECRETS), obj("lost"));
    const i = informer(storage, { resources: [SECRETS] });
    const seen = record(i);
    await i.waitForSync();
    expect(seen).toEqual(["add kept 1"]);
    await storage.create(key("later", SECRETS), obj("later"));
    expect(seen).toEqual(["add kept 1", "add later 3"]);
  });
});
