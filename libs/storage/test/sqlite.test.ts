import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStorage } from "../src/index.js";
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

  it("works in memory", async () => {
    const storage = new SqliteStorage({ path: ":memory:" });
    const c = await storage.create({ resource: "core/pods", namespace: "a", name: "b" }, { metadata: {} });
    expect(c.revision).toBe(1);
    expect((await storage.list({ resource: "core/pods" })).items).toHaveLength(1);
    await storage.close();
  });
});
