// The apiserver process on PostgreSQL (ORCH_STORAGE): the verbs a client starts with — create, get, list,
// watch from the list's resourceVersion — answered from a database of this test's own, which keeps the
// state across a restart. Unset, ORCH_STORAGE keeps the SQLite file (every other test file).
import {
  type ApiserverProcess,
  type PostgresDatabase,
  createPostgresDatabase,
  postgresAvailable,
  startApiserverProcess,
} from "@orch/testing";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PostgresStorage } from "@orch/storage/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.js";
import { type Client, adminClient } from "./harness.js";

describe("ORCH_STORAGE", () => {
  it("selects PostgreSQL by a postgres:// URL, SQLite when unset, and refuses anything else", () => {
    expect(configFromEnv({}).postgresUrl).toBeUndefined();
    expect(configFromEnv({ ORCH_STORAGE: " " }).postgresUrl).toBeUndefined();
    expect(configFromEnv({ ORCH_STORAGE: "postgres://orch@db:5432/orch" }).postgresUrl).toBe("postgres://orch@db:5432/orch");
    expect(configFromEnv({ ORCH_STORAGE: "postgresql://db/orch" }).postgresUrl).toBe("postgresql://db/orch");
    expect(() => configFromEnv({ ORCH_STORAGE: "sqlite:///var/orch.db" })).toThrow(/ORCH_STORAGE must be a postgres/);
  });
});

const available = await postgresAvailable();

describe.runIf(available)("the apiserver process on PostgreSQL", () => {
  let db: PostgresDatabase;
  let server: ApiserverProcess;
  let api: Client;

  beforeAll(async () => {
    db = await createPostgresDatabase();
    server = await startApiserverProcess({ env: { ORCH_STORAGE: db.url } });
    api = adminClient(server.url, server.dataDir);
  });
  afterAll(async () => {
    api?.close();
    await server?.dispose();
    await db?.drop();
  });

  const configMap = (name: string, data: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, labels: { test: "storage" } },
    data,
  });
  const path = "/api/v1/namespaces/default/configmaps";
  // This test's ConfigMaps: the namespace also gets the cluster's root CA ConfigMap, in its own time.
  const selected = `${path}?labelSelector=test%3Dstorage`;
  const ours = (name: string) => !name.endsWith("root-ca.crt");

  it("serves create, get, list and watch from the database, and keeps them across a restart", async () => {
    const created = await api.post(path, configMap("first", { n: "1" }));
    expect(created.status).toBe(201);
    const got = await api.get(`${path}/first`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      metadata: { name: "first", resourceVersion: created.body.metadata.resourceVersion },
      data: { n: "1" },
    });

    const list = await api.get(selected);
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["first"]);
    const watch = await api.watch(`${selected}&resourceVersion=${list.body.metadata.resourceVersion}`);
    expect(watch.status).toBe(200);
    const updated = await api.put(`${path}/first`, { ...got.body, data: { n: "2" } });
    expect(updated.status).toBe(200);
    expect((await api.post(path, configMap("second", { n: "1" }))).status).toBe(201);
    const events = await watch.take(2);
    watch.close();
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.data.n])).toEqual([
      ["MODIFIED", "first", "2"],
      ["ADDED", "second", "1"],
    ]);
    expect(Number(events[1]!.object.metadata.resourceVersion)).toBeGreaterThan(Number(events[0]!.object.metadata.resourceVersion));

    // The state is in PostgreSQL, and nowhere else: no SQLite file in the data directory.
    const direct = await PostgresStorage.open({ url: db.url });
    try {
      const stored = await direct.list({ resource: "core/configmaps", namespace: "default" });
      expect(stored.items.filter((o) => ours(o.name)).map((o) => [o.name, String(o.revision)])).toEqual([
        ["first", events[0]!.object.metadata.resourceVersion],
        ["second", events[1]!.object.metadata.resourceVersion],
      ]);
    } finally {
      await direct.close();
    }
    expect(existsSync(join(server.dataDir, "orch.db"))).toBe(false);

    await server.restart();
    api.close();
    api = adminClient(server.url, server.dataDir);
    const after = await api.get(`${path}/first`);
    expect(after.body).toMatchObject({ data: { n: "2" }, metadata: { resourceVersion: updated.body.metadata.resourceVersion } });
  });
});
