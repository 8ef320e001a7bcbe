import { createPostgresDatabase, postgresAvailable } from "@orch/testing";
import { describe, expect, it } from "vitest";
import { PostgresStorage } from "../src/postgres/index.js";
import type { ValueTransformer } from "../src/storage.js";
import { describeStorageContract } from "./storage-contract.js";

// The machine's PostgreSQL (127.0.0.1:5432); every test gets a database of its own, dropped after it.
// Unreachable: the suite fails in CI and is skipped, with a warning, elsewhere.
const available = await postgresAvailable();

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
});
