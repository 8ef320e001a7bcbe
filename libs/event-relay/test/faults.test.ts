// Fault tests with real processes: the built apiserver as a child process, a real nats-server, writes over
// HTTPS with the admin kubeconfig. In every case each committed revision must reach a fresh JetStream
// subscriber exactly once and in order, exactly as the database's log has it.
import { ApiClient, type KubeObject, type ObjectMeta, type ResourceRef } from "@orch/client";
import { SqliteStorage } from "@orch/storage";
import { type ApiserverProcess, type NatsServer, startApiserverProcess } from "@orch/testing";
import { join } from "node:path";
import { connect } from "nats";
import { describe, expect, it } from "vitest";
import { EVENTS_STREAM } from "@orch/events";
import { expectStreamMatchesLog, nats, onCleanup, waitFor } from "./helpers.js";

const serviceaccounts: ResourceRef = { group: "", version: "v1", plural: "serviceaccounts", namespaced: true };

interface ServiceAccount extends KubeObject {
  metadata: ObjectMeta & { name: string };
}

const serviceAccount = (name: string, value = "x"): ServiceAccount => ({
  apiVersion: "v1",
  kind: "ServiceAccount",
  metadata: { name, namespace: "default", labels: { value } },
});

async function apiserver(server: NatsServer): Promise<ApiserverProcess> {
  const api = await startApiserverProcess({ natsUrl: server.url });
  onCleanup(() => api.dispose());
  return api;
}

function client(api: ApiserverProcess): ApiClient {
  const c = ApiClient.fromKubeconfig(api.kubeconfigPath, { requestTimeoutMs: 10_000 });
  onCleanup(() => c.close());
  return c;
}

/** The apiserver's current revision: the resourceVersion of a list. */
async function currentRevision(c: ApiClient): Promise<number> {
  const list = await c.list(serviceaccounts, { namespace: "default", limit: 1 });
  return Number(list.metadata.resourceVersion);
}

/** The last sequence number of the events stream (0 while it does not exist yet). */
async function lastSeq(url: string): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    return (await (await nc.jetstreamManager()).streams.info(EVENTS_STREAM)).state.last_seq;
  } catch {
    return 0;
  } finally {
    await nc.close();
  }
}

/**
 * `count` creates from `concurrency` loops; `onProgress(done)` after each answer. Returns the names whose
 * create was answered 201 (committed for sure); the others may or may not be committed.
 */
async function burst(
  c: ApiClient,
  prefix: string,
  count: number,
  concurrency: number,
  onProgress?: (answered: number) => void,
): Promise<Set<string>> {
  const created = new Set<string>();
  let next = 0;
  let answered = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const name = `${prefix}-${i}`;
        try {
          await c.create(serviceaccounts, serviceAccount(name), { namespace: "default" });
          created.add(name);
        } catch {
          // No answer (the apiserver died) or refused: not known to be committed.
        }
        onProgress?.(++answered);
      }
    }),
  );
  return created;
}

/**
 * Waits until the stream's last sequence reaches the apiserver's current revision, stops the apiserver,
 * then compares the whole stream, as a new consumer reads it, with the log in its database.
 */
async function expectEveryRevisionOnceInOrder(api: ApiserverProcess, server: NatsServer, c: ApiClient): Promise<number> {
  let current = 0;
  await waitFor(
    "the stream to hold every committed revision",
    async () => {
      current = await currentRevision(c);
      return (await lastSeq(server.url)) >= current;
    },
    20_000,
  );
  await api.stop();
  const s = new SqliteStorage({ path: join(api.dataDir, "orch.db") });
  try {
    expect(await s.currentRevision()).toBe(current);
    expect(await s.publishedRevision()).toBe(current);
    await expectStreamMatchesLog(server.url, s);
  } finally {
    await s.close();
  }
  return current;
}

describe("event stream under faults (real processes)", () => {
  it("publishes every committed revision once, in order, after the apiserver is SIGKILLed during a burst of 1,000 creates", async () => {
    const server = await nats();
    const api = await apiserver(server);
    const c = client(api);
    const before = await currentRevision(c);

    let killed: Promise<void> | undefined;
    const created = await burst(c, "burst", 1_000, 50, (answered) => {
      if (answered === 300 && !killed) killed = api.kill("SIGKILL");
    });
    await killed;
    // Killed mid-burst: some creates were answered, the rest failed without an answer.
    expect(created.size).toBeGreaterThanOrEqual(300);
    expect(created.size).toBeLessThan(1_000);

    {
      // The crash left committed revisions the relay had not published (or not recorded as published).
      const s = new SqliteStorage({ path: join(api.dataDir, "orch.db") });
      const [current, published] = [await s.currentRevision(), await s.publishedRevision()];
      await s.close();
      // Usually some are unpublished, or published but not yet recorded (then re-published and deduplicated).
      expect(published).toBeLessThanOrEqual(current);
      expect(await lastSeq(server.url)).toBeGreaterThanOrEqual(published);
    }
    await api.restart();
    const c2 = client(api);
    // Every create that was answered is committed (and, maybe, some that were not).
    const names = new Set((await c2.listAll<ServiceAccount>(serviceaccounts, { namespace: "default" })).items.map((o) => o.metadata.name));
    for (const name of created) expect(names.has(name), name).toBe(true);
    const committed = [...names].filter((n) => n.startsWith("burst-")).length;
    expect(committed).toBeGreaterThanOrEqual(created.size);

    const current = await expectEveryRevisionOnceInOrder(api, server, c2);
    expect(current).toBeGreaterThanOrEqual(before + committed);
  });

  it("publishes every committed revision once, in order, when nats-server restarts during a burst", async () => {
    const server = await nats();
    const api = await apiserver(server);
    const c = client(api);

    let restarted: Promise<void> | undefined;
    let answeredSoFar = 0;
    let answeredWhileDown = 0;
    const created = await burst(c, "burst", 1_500, 32, (answered) => {
      answeredSoFar = answered;
      if (answered === 400 && !restarted) {
        const at = answered;
        restarted = server.restart().then(() => void (answeredWhileDown = answeredSoFar - at));
      }
    });
    await restarted;
    // NATS being away does not fail writes: the log is the outbox.
    expect(created.size).toBe(1_500);
    expect(answeredWhileDown).toBeGreaterThan(0);
    // And a few more once it is back.
    expect((await burst(c, "after", 50, 8)).size).toBe(50);

    await expectEveryRevisionOnceInOrder(api, server, c);
  });

  it("serves a watcher opened over HTTP from an old revision exactly the revisions after it, in order", async () => {
    const server = await nats();
    const api = await apiserver(server);
    const c = client(api);
    const ns = { namespace: "default" };

    for (let i = 0; i < 5; i++) await c.create(serviceaccounts, serviceAccount(`old-${i}`), ns);
    const from = await currentRevision(c);

    // What happens after `from`, as (type, name, revision) in commit order.
    const expected: Array<[string, string, number]> = [];
    for (let i = 0; i < 20; i++) {
      const name = `w-${i % 7}`;
      let obj: ServiceAccount | undefined;
      try {
        obj = await c.get<ServiceAccount>(serviceaccounts, name, ns);
      } catch {
        obj = undefined;
      }
      if (!obj) {
        const created = await c.create<ServiceAccount>(serviceaccounts, serviceAccount(name, String(i)), ns);
        expected.push(["ADDED", name, Number(created.metadata.resourceVersion)]);
      } else if (i % 3 === 0) {
        await c.delete(serviceaccounts, name, ns);
        expected.push(["DELETED", name, NaN]);
      } else {
        const updated = await c.update(serviceaccounts, { ...obj, metadata: { ...obj.metadata, labels: { value: String(i) } } }, ns);
        expected.push(["MODIFIED", name, Number(updated.metadata.resourceVersion)]);
      }
    }
    // An old object deleted, too.
    await c.delete(serviceaccounts, "old-0", ns);
    expected.push(["DELETED", "old-0", NaN]);
    const to = await currentRevision(c);

    const watch = c.watch<ServiceAccount>(serviceaccounts, { ...ns, resourceVersion: String(from) });
    onCleanup(() => watch.close());
    const got: Array<[string, string, number]> = [];
    const reading = (async () => {
      for await (const event of watch) {
        if (event.type === "BOOKMARK") continue;
        got.push([event.type, event.object.metadata.name, Number(event.object.metadata.resourceVersion)]);
        if (Number(event.object.metadata.resourceVersion) >= to + 1) return;
      }
    })();
    // One more write after the watch opened arrives live, after the history.
    const live = await c.create<ServiceAccount>(serviceaccounts, serviceAccount("live"), ns);
    expected.push(["ADDED", "live", Number(live.metadata.resourceVersion)]);
    await Promise.race([
      reading,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`watch got only ${JSON.stringify(got)}`)), 10_000)),
    ]);
    watch.close();

    expect(got.map(([type, name]) => [type, name])).toEqual(expected.map(([type, name]) => [type, name]));
    got.forEach(([, , revision], i) => {
      const want = expected[i]![2];
      if (!Number.isNaN(want)) expect(revision).toBe(want);
      // Strictly after `from`, strictly increasing.
      expect(revision).toBeGreaterThan(i === 0 ? from : got[i - 1]![2]);
    });
    expect(got[got.length - 2]![2]).toBe(to);
  });
});
