// The informer when things go wrong: NATS restarts, the stream's window moves past a slow informer,
// the stream is re-created, the HTTP watch's start revision is compacted away. In every case the cache
// ends equal to the server, each object added once, and a relist happens exactly when it must.
import { EVENTS_STREAM } from "@orch/events";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type JetStreamManager, type NatsConnection, connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revisionOf } from "../src/index.js";
import { type Cluster, type Secret, freshNamespace, secret, secrets, useCluster, waitFor } from "./helpers.js";
import { expectCacheMatchesServer, informer } from "./informer-helpers.js";

const inNamespace = (cluster: Cluster, ns: string) => async () => (await cluster.client.listAll<Secret>(secrets, { namespace: ns })).items;

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Each object was added exactly once (by an event or a relist), whatever happened in between. */
function expectAddedOnce(calls: Array<{ op: string; key: string }>, count: number): void {
  const adds = calls.filter((x) => x.op === "add").map((x) => x.key);
  expect(new Set(adds).size).toBe(count);
  expect(adds.length).toBe(count);
}

describe("Informer over NATS, under faults", () => {
  const c = useCluster();
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nc = await connect({ servers: c.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => nc?.close());

  it("resumes after NATS restarts, with the events written while it was down, without a relist", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("before"), { namespace: ns });
    const { informer: inf, recorder } = informer<Secret>(c, "nats", { ref: secrets, namespace: ns });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      await c.nats.stop();
      // Writes succeed while NATS is away; the relay publishes the backlog when it returns.
      const written: number[] = [];
      for (let i = 0; i < 20; i++) written.push(revisionOf(await c.client.create(secrets, secret(`down-${i}`), { namespace: ns })));
      await c.nats.restart();
      for (let i = 0; i < 5; i++) written.push(revisionOf(await c.client.create(secrets, secret(`up-${i}`), { namespace: ns })));
      await expectCacheMatchesServer(inf, inNamespace(c, ns));
      expect(inf.stats.lists).toBe(1);
      expect(recorder.eventRevisions(inf.stats.listRevision)).toEqual(written);
      expectAddedOnce(recorder.calls, 26);
    } finally {
      await inf.stop();
    }
  });

  it("relists when the stream's window moved past a slow informer", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a"), { namespace: ns });
    const { config } = await jsm.streams.info(EVENTS_STREAM);
    const { informer: inf, recorder } = informer<Secret>(c, "nats", {
      ref: secrets,
      namespace: ns,
      nats: { batch: 2, fetchExpiresMs: 1000 },
    });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      // A stream that keeps only 5 events, and a handler that stalls on the next one.
      await jsm.streams.update(EVENTS_STREAM, { ...config, max_msgs: 5 });
      const stall = gate();
      recorder.gate = stall.promise;
      await c.client.create(secrets, secret("b"), { namespace: ns });
      await waitFor("the stalled add", () => recorder.calls.length === 2);
      const last = (await jsm.streams.info(EVENTS_STREAM)).state.last_seq;
      for (let i = 0; i < 30; i++) await c.client.create(secrets, secret(`s${i}`), { namespace: ns });
      await waitFor("the relay to publish them", async () => (await jsm.streams.info(EVENTS_STREAM)).state.last_seq >= last + 30);
      recorder.gate = undefined;
      stall.open();
      await expectCacheMatchesServer(inf, inNamespace(c, ns));
      expect(inf.stats.lists).toBe(2);
      expectAddedOnce(recorder.calls, 32);
      expect(recorder.calls.filter((x) => x.op !== "add")).toEqual([]);
      // And it follows the stream again afterwards.
      await c.client.create(secrets, secret("after"), { namespace: ns });
      await waitFor("the next event", () => inf.get("after", ns) !== undefined);
      expect(inf.stats.lists).toBe(2);
    } finally {
      await jsm.streams.update(EVENTS_STREAM, config);
      await inf.stop();
    }
  });

  it("relists when the stream was re-created (NATS lost its store)", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a"), { namespace: ns });
    const { informer: inf, recorder } = informer<Secret>(c, "nats", { ref: secrets, namespace: ns });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      await c.nats.stop();
      rmSync(join(c.nats.storeDir, "jetstream"), { recursive: true, force: true });
      await c.nats.restart();
      // The relay creates the stream when it connects, which is at the apiserver's start.
      await c.apiserver.restart();
      await c.client.create(secrets, secret("b"), { namespace: ns });
      await waitFor("b", () => inf.get("b", ns) !== undefined);
      await c.client.create(secrets, secret("c"), { namespace: ns });
      await expectCacheMatchesServer(inf, inNamespace(c, ns));
      expect(inf.stats.lists).toBeGreaterThanOrEqual(2);
      expectAddedOnce(recorder.calls, 3);
    } finally {
      await inf.stop();
    }
  });
});

describe("Informer over HTTP watch, under faults", () => {
  // A short history, compacted every second: a watch that falls behind gets 410.
  const c = useCluster({ env: { ORCH_HISTORY_REVISIONS: "5", ORCH_COMPACT_INTERVAL_SECONDS: "1" } });

  it("relists when its watch's start revision was compacted away", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a"), { namespace: ns });
    const { informer: inf, recorder } = informer<Secret>(c, "http", { ref: secrets, namespace: ns });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      const stall = gate();
      recorder.gate = stall.promise;
      await c.client.create(secrets, secret("b"), { namespace: ns });
      await waitFor("the stalled add", () => recorder.calls.length === 2);
      // The watch connection goes down with the apiserver; meanwhile its revision leaves the history.
      await c.apiserver.restart();
      for (let i = 0; i < 20; i++) await c.client.create(secrets, secret(`s${i}`), { namespace: ns });
      const from = recorder.calls[1]!.revision;
      await waitFor(
        "compaction past the informer's revision",
        async () => {
          try {
            const probe = c.client.watch(secrets, { namespace: ns, resourceVersion: String(from), timeoutSeconds: 1 });
            for await (const _ of probe) break;
            probe.close();
            return false;
          } catch {
            return true;
          }
        },
        10_000,
      );
      recorder.gate = undefined;
      stall.open();
      await expectCacheMatchesServer(inf, inNamespace(c, ns));
      expect(inf.stats.lists).toBe(2);
      expectAddedOnce(recorder.calls, 22);
    } finally {
      await inf.stop();
    }
  });
});
