// Two apiserver processes on one PostgreSQL database (docs/high-availability.md), sharing one data
// directory (CA, keys) and one NATS server: each serves every verb, a watch on one sees the writes made
// through the other in revision order, each revision once; what must run once (the garbage collector,
// the event relay) runs in one of them; and when one is killed mid-write, the other has every
// acknowledged write, its watchers miss nothing, and the event stream stays complete.
import { EVENTS_STREAM, REVISION_HEADER } from "@orch/events";
import {
  type ApiserverProcess,
  type NatsServer,
  type PostgresDatabase,
  createPostgresDatabase,
  eventually,
  postgresAvailable,
  startApiserverProcess,
  startNatsServer,
} from "@orch/testing";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Client, type WatchStream, adminClient, freshNamespace } from "./harness.js";

const available = await postgresAvailable();
vi.setConfig({ testTimeout: 180_000 });

type Meta = { name: string; resourceVersion: string; uid: string; ownerReferences?: unknown[] };
const configMap = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels: { test: "replicas" }, ...extra },
  data: { n: name },
});
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
/** This test's ConfigMaps only: every namespace also holds the cluster's root CA ConfigMap. */
const ours = (ns: string) => `${configMaps(ns)}?labelSelector=test%3Dreplicas`;

/** Creates `count` ConfigMaps from `writers` concurrent clients; returns the revision of each created one. */
async function createConcurrently(clients: Client[], ns: string, prefix: string, count: number, writers: number): Promise<number[]> {
  const revisions: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const api = clients[w % clients.length]!;
      for (let i = next++; i < count; i = next++) {
        const r = await api.post(configMaps(ns), configMap(`${prefix}-${i}`));
        if (r.status !== 201) throw new Error(`create ${prefix}-${i}: ${r.status} ${r.text}`);
        revisions.push(Number(r.body.metadata.resourceVersion));
      }
    }),
  );
  return revisions;
}

/** Reads a watch until it has delivered every revision in `expected`; returns the revisions it delivered. */
async function revisionsSeen(watch: WatchStream, expected: number): Promise<number[]> {
  const seen: number[] = [];
  while (seen.length < expected) {
    const event = await watch.next(30_000);
    if (event.type === "BOOKMARK") continue;
    seen.push(Number(event.object.metadata.resourceVersion));
  }
  return seen;
}

/** The revision header of every message in the events stream, as a new ordered consumer reads them. */
async function streamRevisions(natsUrl: string): Promise<number[]> {
  const nc = await connect({ servers: natsUrl });
  try {
    const { state } = await (await nc.jetstreamManager()).streams.info(EVENTS_STREAM);
    const out: number[] = [];
    if (state.messages === 0) return out;
    const messages = await (await nc.jetstream().consumers.get(EVENTS_STREAM)).consume();
    for await (const m of messages) {
      out.push(Number(m.headers?.get(REVISION_HEADER)));
      if (m.seq >= state.last_seq) break;
    }
    await messages.close();
    return out;
  } finally {
    await nc.close();
  }
}

describe.runIf(available)("two apiservers on one PostgreSQL database", () => {
  let db: PostgresDatabase;
  let nats: NatsServer;
  let a: ApiserverProcess;
  let b: ApiserverProcess;
  let apiA: Client;
  let apiB: Client;

  beforeAll(async () => {
    db = await createPostgresDatabase();
    nats = await startNatsServer();
    const env = { ORCH_STORAGE: db.url };
    a = await startApiserverProcess({ natsUrl: nats.url, env });
    b = await startApiserverProcess({ natsUrl: nats.url, env, sharedDataDir: a.dataDir });
    apiA = adminClient(a.url, a.dataDir);
    apiB = adminClient(b.url, a.dataDir);
  });
  afterAll(async () => {
    apiA?.close();
    apiB?.close();
    await b?.dispose();
    await a?.dispose();
    await nats?.stop();
    await db?.drop();
  });

  it("delivers to a watch on either replica every write made through both, in revision order, each once", async () => {
    const ns = await freshNamespace(apiA, "replicas");
    const start = (await apiB.get(ours(ns))).body.metadata.resourceVersion;
    const watchA = await apiA.watch(`${ours(ns)}&resourceVersion=${start}`);
    const watchB = await apiB.watch(`${ours(ns)}&resourceVersion=${start}`);
    // 8 writers, half through each replica, 500 objects.
    const written = await createConcurrently([apiA, apiB], ns, "cm", 500, 8);
    const expected = [...written].sort((x, y) => x - y);
    for (const watch of [watchA, watchB]) {
      const seen = await revisionsSeen(watch, expected.length);
      watch.close();
      expect(seen).toEqual(expected);
    }
  });

  it("lists on one replica at a revision written through the other, and refuses a stale write across replicas", async () => {
    const ns = await freshNamespace(apiB, "replicas");
    const created = await apiB.post(configMaps(ns), configMap("shared"));
    expect(created.status).toBe(201);
    const revision = created.body.metadata.resourceVersion as string;
    // Exact: the state as of that revision, read from the shared log.
    const exact = await apiA.get(`${ours(ns)}&resourceVersion=${revision}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(200);
    expect(exact.body.items.map((i: { metadata: Meta }) => i.metadata.name)).toEqual(["shared"]);
    // NotOlderThan: at least that revision, though A may hear of it a moment after B answered.
    const notOlder = await apiA.get(`${ours(ns)}&resourceVersion=${revision}`);
    expect(notOlder.status).toBe(200);
    expect(Number(notOlder.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(revision));
    expect(notOlder.body.items.map((i: { metadata: Meta }) => i.metadata.name)).toEqual(["shared"]);

    const readOnA = (await apiA.get(`${configMaps(ns)}/shared`)).body;
    const updatedOnB = await apiB.put(`${configMaps(ns)}/shared`, { ...readOnA, data: { n: "b" } });
    expect(updatedOnB.status).toBe(200);
    const staleOnA = await apiA.put(`${configMaps(ns)}/shared`, { ...readOnA, data: { n: "a" } });
    expect(staleOnA.status).toBe(409);
    expect(staleOnA.body).toMatchObject({ kind: "Status", reason: "Conflict", code: 409 });
    expect((await apiA.get(`${configMaps(ns)}/shared`)).body.data).toEqual({ n: "b" });
  });

  it("runs the garbage collector and the event relay in one replica: each revision is published once", async () => {
    const ns = await freshNamespace(apiA, "replicas");
    const owner = (await apiA.post(configMaps(ns), configMap("owner"))).body;
    const ownerReferences = [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid }];
    for (let i = 0; i < 10; i++) {
      expect((await apiB.post(configMaps(ns), configMap(`dependent-${i}`, { ownerReferences }))).status).toBe(201);
    }
    expect((await apiB.delete(`${configMaps(ns)}/owner`)).status).toBe(200);
    await eventually("the dependents collected", async () => (await apiA.get(ours(ns))).body.items.length === 0, {
      timeoutMs: 30_000,
    });

    // The stream holds every revision once, in order; and only one replica published (the other's relay
    // counter stays at zero: publishing twice would only be hidden by the stream's duplicate window).
    const current = Number((await apiA.get(ours(ns))).body.metadata.resourceVersion);
    await expectEveryRevisionOnce(nats.url, current);
    const published = async (api: Client) => {
      const text = (await api.get("/metrics")).text;
      return Number(/^orch_event_relay_published_events_total (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const counts = [await published(apiA), await published(apiB)];
    expect(counts.filter((n) => n > 0)).toHaveLength(1);
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(current);
  });

  it("keeps every acknowledged write and the survivor's watch complete when a replica is killed mid-write", async () => {
    const ns = await freshNamespace(apiA, "replicas");
    const start = (await apiA.get(ours(ns))).body.metadata.resourceVersion;
    const watch = await apiA.watch(`${ours(ns)}&resourceVersion=${start}`);
    const acknowledged = new Map<string, number>();
    let failedOnB = 0;
    let created = 0;
    const writer = async (api: Client, w: number) => {
      for (let i = 0; i < 60; i++) {
        const name = `w${w}-${i}`;
        try {
          const r = await api.post(configMaps(ns), configMap(name));
          if (r.status === 201) acknowledged.set(name, Number(r.body.metadata.resourceVersion));
          if (++created === 120) void b.kill("SIGKILL");
        } catch {
          // The killed replica's connections fail: those writes were never acknowledged.
          failedOnB++;
          return;
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map((w) => writer(w % 2 === 0 ? apiA : apiB, w)));
    expect(failedOnB).toBeGreaterThan(0);

    // Every acknowledged write is stored, with the revision it was acknowledged with.
    const list = (await apiA.get(ours(ns))).body;
    const stored = new Map<string, number>(
      list.items.map((i: { metadata: Meta }) => [i.metadata.name, Number(i.metadata.resourceVersion)] as [string, number]),
    );
    for (const [name, revision] of acknowledged) expect(stored.get(name)).toBe(revision);
    // The survivor's watch saw every stored object's creation, in revision order, each once (a write B
    // committed but could not acknowledge before it died is stored, and watched, all the same).
    const seen = await revisionsSeen(watch, stored.size);
    watch.close();
    expect(seen).toEqual([...stored.values()].sort((x, y) => x - y));

    // Whichever replica published before, the stream still holds every revision once, in order: when
    // B led, A took the leadership lock over when B's session ended and resumed from the shared watermark.
    await expectEveryRevisionOnce(nats.url, Number((await apiA.get(ours(ns))).body.metadata.resourceVersion));

    // B comes back on the same data directory and database and serves what A wrote meanwhile.
    await b.restart();
    const afterRestart = (await apiB.get(ours(ns))).body;
    expect(afterRestart.items).toHaveLength(stored.size);
  });
});

/** The stream holds revisions 1..N once each, in order, at least up to `current`. */
async function expectEveryRevisionOnce(natsUrl: string, current: number): Promise<void> {
  const stream = await eventually(
    "every revision on the stream",
    async () => {
      const revisions = await streamRevisions(natsUrl);
      return revisions.length >= current && revisions;
    },
    { timeoutMs: 30_000 },
  );
  expect(stream).toEqual(Array.from({ length: stream.length }, (_, i) => i + 1));
}
