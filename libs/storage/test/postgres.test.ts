import { createPostgresDatabase, eventually, postgresAvailable } from "@orch/testing";
import { describe, expect, it, vi } from "vitest";
import { PostgresStorage } from "../src/postgres/index.js";
import { RevisionConflictError, type ValueTransformer } from "../src/storage.js";
import { describeStorageContract } from "./storage-contract.js";

// The machine's PostgreSQL (127.0.0.1:5432); every test gets a database of its own, dropped after it.
// Unreachable: the suite fails in CI and is skipped, with a warning, elsewhere.
const available = await postgresAvailable();
// Each read and write is a round trip to another process: the contract's longest histories take
// seconds here, and longer on a machine busy with the rest of the suite.
vi.setConfig({ testTimeout: 120_000 });

if (available) {
  describeStorageContract("postgres", async () => {
    const db = await createPostgresDatabase();
    return { open: () => PostgresStorage.open({ url: db.url }), dispose: () => db.drop() };
  });

  // As for SQLite: every read path must hand back JSON when values are stored as bytes that are not their JSON.
  const scrambled: ValueTransformer = {
    toStorage: (json) => Buffer.concat([Buffer.from("x:"), Buffer.from(json).map((b) => b ^ 0x5a)]),
    fromStorage: (stored) => {
      if (typeof stored === "string" || !stored.subarray(0, 2).equals(Buffer.from("x:"))) throw new Error("not transformed");
      return { json: Buffer.from(stored.subarray(2).map((b) => b ^ 0x5a)).toString(), stale: false };
    },
  };
  describeStorageContract("postgres, values transformed", async () => {
    const db = await createPostgresDatabase();
    return { open: () => PostgresStorage.open({ url: db.url, transformers: () => scrambled }), dispose: () => db.drop() };
  });
}

describe.runIf(available)("PostgresStorage", () => {
  it("commits writes issued together as one group, each failing or succeeding on its own", async () => {
    const db = await createPostgresDatabase();
    const storage = await PostgresStorage.open({ url: db.url });
    try {
      const key = (name: string) => ({ resource: "core/secrets", namespace: "default", name });
      const base = await storage.create(key("shared"), { metadata: { name: "shared" } });
      const seen: number[] = [];
      storage.onCommit((c) => seen.push(c.revision));
      const results = await Promise.allSettled([
        storage.create(key("a"), { metadata: { name: "a" } }),
        storage.create(key("a"), { metadata: { name: "a" } }), // duplicate within the group
        storage.update(key("shared"), { metadata: { name: "shared" }, n: 1 }, base.revision),
        storage.update(key("shared"), { metadata: { name: "shared" }, n: 2 }, base.revision), // stale within the group
        storage.create(key("b"), { metadata: { name: "b" } }),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
      const revisions = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.revision] : []));
      expect(revisions).toEqual([base.revision + 1, base.revision + 2, base.revision + 3]);
      expect(seen).toEqual(revisions);
      expect(JSON.parse((await storage.get(key("shared")))!.value).n).toBe(1);
    } finally {
      await storage.close();
      await db.drop();
    }
  });

  it("keeps two writers on one database (two connection pools, as two apiservers) in one gapless revision order", async () => {
    const db = await createPostgresDatabase();
    const writers = [await PostgresStorage.open({ url: db.url }), await PostgresStorage.open({ url: db.url })];
    const reader = await PostgresStorage.open({ url: db.url });
    // What each process's commit listeners hear: its own commits and the others', each once, in order.
    const heard = [...writers, reader].map((storage) => {
      const revisions: number[] = [];
      storage.onCommit((c) => revisions.push(c.revision));
      return revisions;
    });
    try {
      const counter = { resource: "core/configmaps", namespace: "default", name: "counter" };
      await writers[0]!.create(counter, { metadata: { name: "counter" }, n: 0 });
      let conflicts = 0;
      const increment = async (storage: PostgresStorage, times: number): Promise<number[]> => {
        const revisions: number[] = [];
        while (revisions.length < times) {
          const current = (await storage.get(counter))!;
          const n = (JSON.parse(current.value) as { n: number }).n;
          try {
            revisions.push((await storage.update(counter, { metadata: { name: "counter" }, n: n + 1 }, current.revision)).revision);
          } catch (e) {
            if (!(e instanceof RevisionConflictError)) throw e;
            conflicts++;
          }
        }
        return revisions;
      };
      // While they race, every snapshot of the log another connection takes is 1..N without a hole:
      // a revision never becomes visible before a lower one, which is what a watcher relies on.
      let racing = true;
      let snapshots = 0;
      const watchLog = (async () => {
        while (racing) {
          const log = (await reader.changes(0, 100_000)).map((c) => c.revision);
          expect(log).toEqual(log.map((_, i) => i + 1));
          snapshots++;
        }
      })();
      const perWriter = 100;
      const results = await Promise.all([
        increment(writers[0]!, perWriter),
        increment(writers[0]!, perWriter),
        increment(writers[1]!, perWriter),
        increment(writers[1]!, perWriter),
      ]);
      racing = false;
      await watchLog;
      expect(snapshots).toBeGreaterThan(1);
      // No lost update, every revision given once, and the writers did collide.
      expect(JSON.parse((await reader.get(counter))!.value).n).toBe(4 * perWriter);
      const all = results.flat().sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: 4 * perWriter }, (_, i) => i + 2));
      expect(conflicts).toBeGreaterThan(0);
      expect(await reader.currentRevision()).toBe(1 + 4 * perWriter);
      const everyRevision = Array.from({ length: 1 + 4 * perWriter }, (_, i) => i + 1);
      for (const revisions of heard) await eventually("every revision heard", () => revisions.length >= everyRevision.length);
      for (const revisions of heard) expect(revisions).toEqual(everyRevision);
    } finally {
      for (const s of [...writers, reader]) await s.close();
      await db.drop();
    }
  });

  it("keeps the text and the bytes of values apart: the identity reader refuses encrypted bytes", async () => {
    const db = await createPostgresDatabase();
    const encrypting = await PostgresStorage.open({
      url: db.url,
      transformers: () => ({
        toStorage: (json) => Buffer.from(`k8s:enc:test:${json}`),
        fromStorage: (stored) => ({ json: String(stored).slice("k8s:enc:test:".length), stale: false }),
      }),
    });
    const plain = await PostgresStorage.open({ url: db.url });
    try {
      const key = { resource: "core/secrets", namespace: "default", name: "s" };
      await encrypting.create(key, { metadata: { name: "s" } });
      expect(JSON.parse((await encrypting.get(key))!.value).metadata.name).toBe("s");
      await expect(plain.get(key)).rejects.toThrow(/identity transformer tried to read encrypted data/);
    } finally {
      await encrypting.close();
      await plain.close();
      await db.drop();
    }
  });

  it("hands the leadership lock to one process at a time, and to another when the holder goes", async () => {
    const db = await createPostgresDatabase();
    const storages = [
      await PostgresStorage.open({ url: db.url, leaderRetryMs: 50 }),
      await PostgresStorage.open({ url: db.url, leaderRetryMs: 50 }),
    ];
    try {
      const leading = [0, 0];
      const leaderships = storages.map((storage, i) =>
        storage.lead("singletons", { acquired: () => leading[i]!++, lost: () => leading[i]!-- }),
      );
      await eventually("a leader", () => leaderships.some((l) => l.held));
      const holder = leaderships.findIndex((l) => l.held);
      const other = 1 - holder;
      // Given time to try again several times, the other still does not lead.
      await new Promise((r) => setTimeout(r, 300));
      expect(leading).toEqual(holder === 0 ? [1, 0] : [0, 1]);
      await storages[holder]!.close();
      expect(leading[holder]).toBe(0);
      await eventually("the other takes over", () => leaderships[other]!.held);
      expect(leading[other]).toBe(1);
      // Another name is another lock.
      const second = storages[other]!.lead("other", { acquired: () => undefined, lost: () => undefined });
      await eventually("a second lock", () => second.held);
    } finally {
      for (const s of storages) await s.close();
      await db.drop();
    }
  });
});
