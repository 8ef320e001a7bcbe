import Database from "better-sqlite3";
import { build } from "esbuild";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KeyExistsError, RevisionConflictError, SqliteStorage, type ValueTransformer } from "../src/index.js";
import { SERVING_CHECKPOINT_PAGES } from "../src/sqlite/checkpointer.js";
import { describeStorageContract } from "./storage-contract.js";

const size = (path: string): number => (existsSync(path) ? statSync(path).size : 0);

/** A database file in its own temp directory, removed with it. */
function tempDatabase(): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "orch-sqlite-"));
  return { path: join(dir, "orch.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describeStorageContract("sqlite", async () => {
  const db = tempDatabase();
  return {
    open: async () => new SqliteStorage({ path: db.path }),
    // What the database takes on disk: the file and its write-ahead log.
    sizeOnDisk: () => size(db.path) + size(`${db.path}-wal`),
    dispose: async () => db.remove(),
  };
});

// Every read path (get, list now and at a revision, changes, commit listeners, compaction) must hand back
// JSON when values are stored transformed, as encryption at rest stores them: the whole contract again,
// every value stored as bytes that are not its JSON.
const scrambled: ValueTransformer = {
  toStorage: (json) => Buffer.concat([Buffer.from("x:"), Buffer.from(json).map((b) => b ^ 0x5a)]),
  fromStorage: (stored) => {
    if (typeof stored === "string" || !stored.subarray(0, 2).equals(Buffer.from("x:"))) throw new Error("not transformed");
    return { json: Buffer.from(stored.subarray(2).map((b) => b ^ 0x5a)).toString(), stale: false };
  },
};
describeStorageContract("sqlite, values transformed", async () => {
  const db = tempDatabase();
  return {
    open: async () => new SqliteStorage({ path: db.path, transformers: () => scrambled }),
    sizeOnDisk: () => size(db.path) + size(`${db.path}-wal`),
    dispose: async () => db.remove(),
  };
});

// The file's only connection (one apiserver thread): the gets of one turn of the event loop share a read
// transaction, which every write must end first. The whole contract again.
describeStorageContract("sqlite, its file's only connection", async () => {
  const db = tempDatabase();
  return {
    open: async () => new SqliteStorage({ path: db.path, onlyConnection: true }),
    sizeOnDisk: () => size(db.path) + size(`${db.path}-wal`),
    dispose: async () => db.remove(),
  };
});

describe("SqliteStorage files", () => {
  let cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup) c();
    cleanup = [];
  });

  it("truncates the write-ahead log when compaction removes history", async () => {
    const db = tempDatabase();
    cleanup.push(db.remove);
    const storage = new SqliteStorage({ path: db.path });
    cleanup.unshift(() => void storage.close());
    const key = { resource: "core/configmaps", namespace: "default", name: "churn" };
    let revision = (await storage.create(key, { metadata: { name: "churn" }, data: "x".repeat(2000) })).revision;
    let largestWal = 0;
    for (let i = 0; i < 2000; i++) {
      revision = (await storage.update(key, { metadata: { name: "churn" }, data: "x".repeat(2000), i }, revision)).revision;
      largestWal = Math.max(largestWal, size(`${db.path}-wal`));
    }
    // Between compactions SQLite's automatic checkpoint (every 1000 pages of 4 KiB) keeps the log from growing
    // past that, plus the pages of one write (a 2 KiB value and its previous value: a few pages).
    expect(largestWal).toBeGreaterThan(1024 * 1024);
    expect(largestWal).toBeLessThan((1000 + 16) * 4096 + 32 * 1024);
    await storage.markPublished(revision);
    const result = await storage.compact({ maxRevisions: 100, maxAgeMs: 3_600_000 });
    expect(result.removed).toBe(revision - 100);
    expect(size(`${db.path}-wal`)).toBe(0);
    // Freed pages went back to the file system (auto_vacuum = INCREMENTAL): ~100 rows of ~4 KiB remain.
    expect(size(db.path)).toBeLessThan(2 * 100 * 2 * 2100 + 64 * 1024);
  });

  // Alone on the file (one serving thread), the storage tells the checkpointer of its commits only every
  // CHECKPOINT_REVISIONS; the log must be copied all the same.
  it.each([false, true])(
    "with a checkpointer, moves the write-ahead log into the database from a thread of its own (only connection: %s)",
    async (onlyConnection) => {
      const db = tempDatabase();
      cleanup.push(db.remove);
      const storage = new SqliteStorage({ path: db.path, checkpointer: true, onlyConnection });
      // The worker's first checkpoint, once it runs, copies the tables the storage created into the file.
      await vi.waitFor(() => expect(size(db.path)).toBeGreaterThan(4096), { timeout: 10_000 });
      const key = { resource: "core/configmaps", namespace: "default", name: "churn" };
      let revision = (await storage.create(key, { metadata: { name: "churn" }, data: "x".repeat(2000) })).revision;
      for (let i = 0; i < 400; i++) {
        revision = (await storage.update(key, { metadata: { name: "churn" }, data: "x".repeat(2000), i }, revision)).revision;
      }
      // 400 writes of a few pages each went through the log after that, below the serving connection's own
      // threshold (SERVING_CHECKPOINT_PAGES): only the commits the worker heard of can have made it copy them.
      expect(size(`${db.path}-wal`)).toBeLessThan(SERVING_CHECKPOINT_PAGES * 4096);
      await vi.waitFor(() => expect(size(db.path)).toBeGreaterThan(1024 * 1024), { timeout: 10_000 });
      await storage.close();
      // The checkpointer's connection closed first: the serving one, the last, checkpointed and removed the log.
      expect(existsSync(`${db.path}-wal`)).toBe(false);
      const reopened = new SqliteStorage({ path: db.path });
      cleanup.unshift(() => void reopened.close());
      expect(JSON.parse((await reopened.get(key))!.value).i).toBe(399);
    },
  );

  it("commits writes issued together as one group, each failing or succeeding on its own", async () => {
    const db = tempDatabase();
    cleanup.push(db.remove);
    const storage = new SqliteStorage({ path: db.path });
    cleanup.unshift(() => void storage.close());
    const key = (name: string) => ({ resource: "core/secrets", namespace: "default", name });
    const base = await storage.create(key("shared"), { metadata: { name: "shared" } });
    const seen: number[] = [];
    storage.onCommit((c) => seen.push(c.revision));
    // Issued without awaiting: they land in one group commit.
    const results = await Promise.allSettled([
      storage.create(key("a"), { metadata: { name: "a" } }),
      storage.create(key("a"), { metadata: { name: "a" } }), // duplicate within the group
      storage.update(key("shared"), { metadata: { name: "shared" }, n: 1 }, base.revision),
      storage.update(key("shared"), { metadata: { name: "shared" }, n: 2 }, base.revision), // stale within the group
      storage.create(key("b"), { metadata: { name: "b" } }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(KeyExistsError);
    expect((results[3] as PromiseRejectedResult).reason).toBeInstanceOf(RevisionConflictError);
    // Failed writes used no revision: the committed ones are consecutive and in issue order.
    const revisions = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.revision] : []));
    expect(revisions).toEqual([base.revision + 1, base.revision + 2, base.revision + 3]);
    expect(seen).toEqual(revisions);
    expect(JSON.parse((await storage.get(key("shared")))!.value).n).toBe(1);
    expect(await storage.currentRevision()).toBe(base.revision + 3);
  });

  it("as the file's only connection, still commits each write when it answers, and reads no older turn's snapshot", async () => {
    const db = tempDatabase();
    cleanup.push(db.remove);
    const storage = new SqliteStorage({ path: db.path, onlyConnection: true });
    cleanup.unshift(() => void storage.close());
    const other = new Database(db.path);
    cleanup.unshift(() => other.close());
    const key = (name: string) => ({ resource: "core/configmaps", namespace: "default", name });
    const rowOf = (name: string) => other.prepare("SELECT revision FROM objects WHERE name = ?").get(name);
    await storage.create(key("a"), { metadata: { name: "a" } });
    // A write queued, then a get that opens this turn's read transaction before the write's group commits:
    // the write is still committed, for any connection to see, by the time it is answered.
    const writing = storage.create(key("b"), { metadata: { name: "b" } });
    expect(await storage.get(key("a"))).toBeDefined();
    const b = await writing;
    expect(rowOf("b")).toEqual({ revision: b.revision });
    // A row another connection writes after this turn (a test's doing: the option says nobody does) is
    // seen by a get of a later turn, so no read transaction outlived the turn that opened it.
    expect(await storage.get(key("a"))).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve));
    other
      .prepare("INSERT INTO objects (resource, namespace, name, revision, value) VALUES (?, ?, ?, ?, ?)")
      .run("core/configmaps", "default", "c", b.revision, JSON.stringify({ metadata: { name: "c" } }));
    expect(await storage.get(key("c"))).toBeDefined();
    // Nor does one hold back a checkpoint: the other connection empties the write-ahead log.
    await storage.get(key("a"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(other.pragma("wal_checkpoint(TRUNCATE)")).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
  });

  it("works in memory", async () => {
    const storage = new SqliteStorage({ path: ":memory:" });
    const c = await storage.create({ resource: "core/pods", namespace: "a", name: "b" }, { metadata: {} });
    expect(c.revision).toBe(1);
    expect((await storage.list({ resource: "core/pods" })).items).toHaveLength(1);
    await storage.close();
  });
});

/** Bundles the worker into node_modules/.cache (ignored by git, and where it still finds better-sqlite3). */
async function bundleWorker(name = "increment"): Promise<{ file: string; remove: () => void }> {
  const here = dirname(fileURLToPath(import.meta.url));
  const cache = join(here, "..", "..", "..", "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const outDir = mkdtempSync(join(cache, "orch-storage-test-"));
  const file = join(outDir, `${name}.mjs`);
  await build({
    entryPoints: [join(here, "workers", `${name}.ts`)],
    outfile: file,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@orch/source"],
    external: ["better-sqlite3"],
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
    logLevel: "warning",
  });
  return { file, remove: () => rmSync(outDir, { recursive: true, force: true }) };
}

describe("SqliteStorage across processes", () => {
  it("lets concurrent processes lose no update and assigns every revision exactly once", async () => {
    const worker = await bundleWorker();
    const db = tempDatabase();
    try {
      const setup = new SqliteStorage({ path: db.path });
      const counter = { resource: "core/configmaps", namespace: "default", name: "counter" };
      await setup.create(counter, { metadata: { name: "counter" }, data: { n: 0 } });
      await setup.close();

      const workers = 4;
      const increments = 250;
      const children = Array.from({ length: workers }, (_, i) =>
        spawn(process.execPath, [worker.file, db.path, String(i), String(increments)], { stdio: ["pipe", "pipe", "inherit"] }),
      );
      const lines = children.map((child) => {
        const received: string[] = [];
        let buffer = "";
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (chunk: string) => {
          buffer += chunk;
          const parts = buffer.split("\n");
          buffer = parts.pop()!;
          received.push(...parts);
        });
        const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
        return { received, exited };
      });
      // Start them together, so that they really race.
      const deadline = Date.now() + 20_000;
      while (!lines.every((l) => l.received.includes("ready")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const child of children) child.stdin.write("go\n");
      const codes = await Promise.all(lines.map((l) => l.exited));
      expect(codes).toEqual(children.map(() => 0));
      const results = lines.map(
        (l) => JSON.parse(l.received.at(-1)!) as { createdContested: boolean; conflicts: number; revisions: number[] },
      );

      const check = new SqliteStorage({ path: db.path });
      const stored = (await check.get(counter))!;
      // No lost update: every successful write saw the one before it.
      expect(JSON.parse(stored.value).data.n).toBe(workers * increments);
      // Exactly one process created the contested key.
      expect(results.filter((r) => r.createdContested)).toHaveLength(1);
      // One global sequence: 1 (counter) + 1 (contested) + every increment, no revision given twice.
      const all = results.flatMap((r) => r.revisions).sort((a, b) => a - b);
      expect(new Set(all).size).toBe(workers * increments);
      expect(await check.currentRevision()).toBe(2 + workers * increments);
      expect((await check.changes(0, 10_000)).map((c) => c.revision)).toEqual(
        Array.from({ length: 2 + workers * increments }, (_, i) => i + 1),
      );
      // The processes did overlap: some writers lost to a concurrent one and retried.
      expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
      await check.close();
    } finally {
      worker.remove();
      db.remove();
    }
  });
});

describe("SqliteStorage across threads of one process", () => {
  it("hands every thread's listeners every commit, its own and the others', once and in order", async () => {
    const worker = await bundleWorker("increment-in-thread");
    const db = tempDatabase();
    const main = new SqliteStorage({ path: db.path });
    const heardHere: number[] = [];
    main.onCommit((change) => heardHere.push(change.revision));
    try {
      const counter = { resource: "core/configmaps", namespace: "default", name: "counter" };
      await main.create(counter, { metadata: { name: "counter" }, data: { n: 0 } });
      const threads = 3;
      const increments = 150;
      const through = 1 + threads * increments;
      const workers = Array.from(
        { length: threads },
        () => new Worker(worker.file, { workerData: { path: db.path, increments, through } }),
      );
      // Each thread opens the file and says so before any starts writing, so that each must hear all of them.
      const ready = workers.map((w) => new Promise((resolve) => w.once("message", resolve)));
      // Listened for now: a thread that reports first may be gone before the others report.
      const exits = workers.map((w) => new Promise((resolve) => w.once("exit", resolve)));
      await Promise.all(ready);
      const reports = workers.map(
        (w) =>
          new Promise<{ revisions: number[]; heard: number[]; conflicts: number }>((resolve, reject) => {
            w.once("message", resolve);
            w.once("error", reject);
          }),
      );
      for (const w of workers) w.postMessage("go");
      const results = await Promise.all(reports);
      await Promise.all(exits);

      const everyRevision = Array.from({ length: through - 1 }, (_, i) => i + 2);
      // No lost update and every revision given once, though the threads did collide.
      expect(JSON.parse((await main.get(counter))!.value).data.n).toBe(threads * increments);
      expect(results.flatMap((r) => r.revisions).sort((a, b) => a - b)).toEqual(everyRevision);
      expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
      // Each thread's listener heard all of them, in order, each once; so did this thread's, which wrote none.
      for (const r of results) expect(r.heard).toEqual(everyRevision);
      await vi.waitFor(() => expect(heardHere).toEqual([1, ...everyRevision]), { timeout: 10_000 });
    } finally {
      await main.close();
      worker.remove();
      db.remove();
    }
  });

  it("waits for a write lock another connection holds without stopping this thread's event loop", async () => {
    const db = tempDatabase();
    const storage = new SqliteStorage({ path: db.path });
    const other = new Database(db.path);
    try {
      other.exec("BEGIN IMMEDIATE");
      let settled = false;
      const created = storage.create({ resource: "core/configmaps", namespace: "a", name: "b" }, { metadata: {} });
      void created.then(() => (settled = true));
      // Timers still fire while the write waits: SQLite's busy wait would have held the thread for seconds.
      const before = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(Date.now() - before).toBeLessThan(1_000);
      expect(settled).toBe(false);
      other.exec("COMMIT");
      expect((await created).revision).toBe(1);
    } finally {
      other.close();
      await storage.close();
      db.remove();
    }
  });

  it("leads only where it is told to: one connection of the process runs the cluster's singletons", async () => {
    const db = tempDatabase();
    const first = new SqliteStorage({ path: db.path });
    const other = new SqliteStorage({ path: db.path, leader: false });
    try {
      const events: string[] = [];
      const leads = [first, other].map((s, i) =>
        s.lead("singletons", { acquired: () => events.push(`${i} acquired`), lost: () => events.push(`${i} lost`) }),
      );
      expect(leads.map((l) => l.held)).toEqual([true, false]);
      await Promise.all(leads.map((l) => l.release()));
      expect(events).toEqual(["0 acquired", "0 lost"]);
    } finally {
      await first.close();
      await other.close();
      db.remove();
    }
  });
});
