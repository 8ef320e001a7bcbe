import type { Storage } from "@orch/storage";
import { connect } from "nats";
import { describe, expect, it } from "vitest";
import { EVENTS_STREAM, parseEventSubject } from "@orch/events";
import { EventRelay } from "../src/index.js";
import { churn, expectStreamMatchesLog, nats, object, onCleanup, published, readStream, storage, waitFor } from "./helpers.js";

/** Starts a relay that the test stops (or the cleanup does). */
async function relay(s: Storage, url: string): Promise<EventRelay> {
  const r = EventRelay.start(s, url);
  await r.ready;
  let stopped = false;
  onCleanup(() => (stopped ? undefined : r.stop()));
  const stop = r.stop.bind(r);
  r.stop = async () => {
    stopped = true;
    await stop();
  };
  return r;
}

async function streamMessages(url: string): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    return (await (await nc.jetstreamManager()).streams.info(EVENTS_STREAM)).state.messages;
  } finally {
    await nc.close();
  }
}

/** The storage as a relay sees it, with the outbox watermark under the test's control. */
function withWatermark(s: Storage, watermark: { read?: () => Promise<number>; mark?: (r: number) => Promise<void> }): Storage {
  return new Proxy(s, {
    get(target, prop, receiver) {
      if (prop === "publishedRevision" && watermark.read) return watermark.read;
      if (prop === "markPublished" && watermark.mark) return watermark.mark;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("EventRelay", () => {
  it("publishes a Secret as its identity only, created, changed or deleted: its data never reaches the bus", async () => {
    const server = await nats();
    const s = storage();
    await relay(s, server.url);
    const key = { resource: "core/secrets", namespace: "default", name: "db" };
    const data = { password: Buffer.from("hunter2").toString("base64") };
    const created = await s.create(key, object("db", { kind: "Secret", apiVersion: "v1", data }));
    const updated = await s.update(key, object("db", { kind: "Secret", apiVersion: "v1", data, stringData: { x: "y" } }), created.revision);
    await s.delete(key, object("db", { kind: "Secret", apiVersion: "v1", data }), updated.revision);
    // Other kinds travel whole.
    await s.create({ resource: "core/configmaps", namespace: "default", name: "cm" }, object("cm", { data }));
    await published(s);
    const messages = await readStream(server.url);
    const secrets = messages.filter((m) => m.subject.includes(".secrets."));
    expect(secrets.map((m) => m.envelope.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    for (const m of secrets) {
      expect(m.envelope.truncated).toBe(true);
      expect(JSON.stringify(m.envelope)).not.toContain(data.password);
      expect(m.envelope.object).toMatchObject({ kind: "Secret", metadata: { name: "db" } });
    }
    const configMap = messages.find((m) => m.subject.includes(".configmaps."))!;
    expect(configMap.envelope.truncated).toBeUndefined();
    expect(configMap.envelope.object).toMatchObject({ data });
  });

  it("publishes every committed change exactly once, in revision order, as the log has it", async () => {
    const server = await nats();
    const s = storage();
    // A backlog larger than one relay batch, then writes while it drains.
    await churn(s, 1_200);
    const r = await relay(s, server.url);
    await churn(s, 300, 1_200);
    await published(s);
    expect(await s.currentRevision()).toBe(1_500);
    await expectStreamMatchesLog(server.url, s);
    await r.stop();
  });

  it("re-creates a stream deleted while it runs and publishes to it every revision not yet acknowledged", async () => {
    const server = await nats();
    const s = storage();
    const r = await relay(s, server.url);
    await churn(s, 20);
    await published(s);

    const nc = await connect({ servers: server.url });
    onCleanup(() => nc.close());
    const jsm = await nc.jetstreamManager();
    const before = (await jsm.streams.info(EVENTS_STREAM)).created;
    await jsm.streams.delete(EVENTS_STREAM);
    await churn(s, 30, 20);
    await published(s);
    const info = await jsm.streams.info(EVENTS_STREAM);
    expect(info.created).not.toBe(before);
    // What the deleted stream had acknowledged is gone with it; everything after the watermark is here.
    const revisions = (await readStream(server.url)).map((e) => e.envelope.revision);
    expect(revisions).toEqual(Array.from({ length: 30 }, (_, i) => 21 + i));
    await r.stop();
  });

  it("keeps accepting writes while NATS is down and publishes the backlog once it is back", async () => {
    const server = await nats();
    const s = storage();
    const r = await relay(s, server.url);
    await churn(s, 20);
    await published(s);

    await server.stop();
    const started = Date.now();
    await churn(s, 200, 20);
    // Writes do not wait for NATS: the log is the outbox.
    expect(Date.now() - started).toBeLessThan(2_000);
    // The relay heard of every commit as it happened (storage calls it synchronously) and has nothing
    // acknowledged to mark. That it never marks a revision NATS did not take is shown at the end: the
    // stream then holds every revision exactly once, in order.
    expect(await s.publishedRevision()).toBe(20);

    await server.restart();
    const restarted = Date.now();
    await published(s);
    // Caught up on reconnect, not after a publish timed out (5 s) against the dead connection.
    expect(Date.now() - restarted).toBeLessThan(3_000);
    await churn(s, 30, 220);
    await published(s);
    await expectStreamMatchesLog(server.url, s);
    await r.stop();
  });

  it("publishes a backlog larger than it keeps in memory from the log, then goes on from memory, missing nothing", async () => {
    const server = await nats();
    const s = storage();
    const r = await relay(s, server.url);
    await churn(s, 10);
    await published(s);
    await server.stop();
    // More commits than the relay keeps (1,000): the oldest of the backlog are only in the log.
    await churn(s, 1_500, 10);
    await server.restart();
    await published(s);
    await churn(s, 40, 1_510);
    await published(s);
    await expectStreamMatchesLog(server.url, s);
    await r.stop();
  });

  it("stops promptly while NATS is down", async () => {
    const server = await nats();
    const s = storage();
    const r = await relay(s, server.url);
    await churn(s, 5);
    await published(s);
    await server.stop();
    await churn(s, 5, 5);
    const stopping = Date.now();
    await r.stop();
    expect(Date.now() - stopping).toBeLessThan(3_000);
    expect(await s.publishedRevision()).toBe(5);
  });

  it("re-publishes after a crash before the watermark moved, and the duplicate window drops the copies", async () => {
    const server = await nats();
    const s = storage();
    await churn(s, 120);
    // This relay publishes but "crashes" before it records how far it got.
    const crashed = await relay(withWatermark(s, { mark: async () => undefined }), server.url);
    await waitFor("the first relay to publish everything", async () => (await streamMessages(server.url)) === 120);
    await crashed.stop();
    expect(await s.publishedRevision()).toBe(0);

    // Plain subscribers see every publish, so this counts the copies the restarted relay sends.
    const nc = await connect({ servers: server.url });
    onCleanup(() => nc.close());
    let sent = 0;
    nc.subscribe("orch.events.>", { callback: () => sent++ });
    await nc.flush();
    const r = await relay(s, server.url);
    await published(s);
    await waitFor("the re-published copies", () => sent === 120);
    expect(await streamMessages(server.url)).toBe(120);
    await churn(s, 30, 120);
    await published(s);
    await expectStreamMatchesLog(server.url, s);
    await r.stop();
  });

  it("re-publishes from a lost watermark without duplicating events in the stream", async () => {
    const server = await nats();
    const s = storage();
    await churn(s, 80);
    const first = await relay(s, server.url);
    await published(s);
    await first.stop();

    // The watermark reads 0 again (e.g. the outbox counter was restored from an older backup).
    let reset = true;
    const second = await relay(
      withWatermark(s, {
        read: async () => (reset ? 0 : s.publishedRevision()),
        mark: async (revision) => {
          reset = false;
          await s.markPublished(revision);
        },
      }),
      server.url,
    );
    await waitFor("the second relay to re-publish", () => !reset);
    await churn(s, 20, 80);
    await published(s);
    await expectStreamMatchesLog(server.url, s);
    await second.stop();
  });

  it("stamps what it committed and published live with the commit time, and a backlog from before its start without", async () => {
    const server = await nats();
    const s = storage();
    await churn(s, 5);
    const before = Date.now();
    await relay(s, server.url);
    await churn(s, 5, 5);
    await published(s);
    const after = Date.now();
    const stream = await readStream(server.url);
    expect(stream.slice(0, 5).map((m) => m.committedAt)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    for (const m of stream.slice(5)) {
      expect(Number(m.committedAt)).toBeGreaterThanOrEqual(before);
      expect(Number(m.committedAt)).toBeLessThanOrEqual(after);
    }
    // In commit order.
    const times = stream.slice(5).map((m) => Number(m.committedAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it("publishes an object larger than the server's max_payload as its identity, without holding up later revisions", async () => {
    const server = await nats({ maxPayload: 64 * 1024 });
    const s = storage();
    await relay(s, server.url);
    const big = { resource: "core/secrets", namespace: "default", name: "big" };
    await s.create(big, object("big", { data: { blob: "x".repeat(100 * 1024) } }));
    await churn(s, 10);
    await published(s);
    const stream = await readStream(server.url);
    expect(stream.map((m) => m.envelope.revision)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(stream[0]!.envelope).toEqual({
      type: "ADDED",
      revision: 1,
      object: { metadata: { name: "big", resourceVersion: "1" } },
      truncated: true,
    });
    expect(stream[1]!.envelope.truncated).toBeUndefined();
  });
});

describe("relay start", () => {
  it("does not wait for NATS, and publishes the backlog once NATS appears", async () => {
    const server = await nats();
    await server.stop();
    const s = storage();
    const r = EventRelay.start(s, server.url);
    onCleanup(() => r.stop());
    await churn(s, 20);
    expect(await s.currentRevision()).toBe(20);
    await server.restart();
    await r.ready;
    await waitFor("the backlog", async () => (await s.publishedRevision()) === (await s.currentRevision()));
    await expectStreamMatchesLog(server.url, s);
  });

  it("lets a subscriber pick events with wildcards", async () => {
    const server = await nats();
    const s = storage();
    const nc = await connect({ servers: server.url });
    onCleanup(() => nc.close());
    const received = new Map<string, string[]>();
    const subscribe = (subject: string) => {
      const names: string[] = [];
      received.set(subject, names);
      nc.subscribe(subject, {
        callback: (_err, msg) => names.push(parseEventSubject(msg.subject)?.name ?? `unparsed ${msg.subject}`),
      });
    };
    subscribe("orch.events.apps.deployments.default.*");
    subscribe("orch.events.core.>");
    subscribe("orch.events.*.*._.*");
    subscribe("orch.events.certificates%2Ek8s%2Eio.>");
    subscribe("orch.events.>");
    await nc.flush();

    const relay = EventRelay.start(s, server.url);
    await relay.ready;
    onCleanup(() => relay.stop());
    const writes: Array<[string, string, string]> = [
      ["apps/deployments", "default", "web"],
      ["apps/deployments", "default", "a.b"], // one token, not two
      ["apps/deployments", "default", "x>y"],
      ["apps/deployments", "default.x", "web"], // a namespace with a dot must not leak into "default"
      ["apps/deployments", "other", "web"],
      ["apps/replicasets", "default", "web-1"],
      ["core/pods", "default", "web-1-a"],
      ["core/namespaces", "", "default"],
      ["certificates.k8s.io/certificatesigningrequests", "", "node.csr"],
    ];
    for (const [resource, namespace, name] of writes) await s.create({ resource, namespace, name }, object(name));
    await published(s);
    await waitFor("every event at the catch-all subscriber", () => received.get("orch.events.>")!.length === writes.length);
    await nc.flush();

    expect(received.get("orch.events.apps.deployments.default.*")).toEqual(["web", "a.b", "x>y"]);
    expect(received.get("orch.events.core.>")).toEqual(["web-1-a", "default"]);
    expect(received.get("orch.events.*.*._.*")).toEqual(["default", "node.csr"]);
    expect(received.get("orch.events.certificates%2Ek8s%2Eio.>")).toEqual(["node.csr"]);
    expect(received.get("orch.events.>")).toEqual(writes.map(([, , name]) => name));
  });
});
