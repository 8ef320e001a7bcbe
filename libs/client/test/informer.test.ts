// The informer contract, run against both event sources: NATS JetStream and HTTP watch.
import { connect } from "nats";
import { describe, expect, it } from "vitest";
import { EVENTS_STREAM } from "@orch/events";
import { Informer, type KubeObject, type ResourceRef, namespaceIndex, revisionOf } from "../src/index.js";
import { type Secret, freshNamespace, secret, secrets, useCluster, waitFor } from "./helpers.js";
import { type Mode, expectCacheMatchesServer, informer } from "./informer-helpers.js";

const serviceAccounts: ResourceRef = { group: "", version: "v1", plural: "serviceaccounts", namespaced: true };
const serviceAccount = (name: string): KubeObject => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name } });

const c = useCluster();

const inNamespace = (ns: string) => async () => (await c.client.listAll<Secret>(secrets, { namespace: ns })).items;

describe.each<Mode>(["nats", "http"])("Informer (%s)", (mode) => {
  async function started(options: Parameters<typeof informer<Secret>>[2]) {
    const made = informer<Secret>(c, mode, options);
    made.informer.start();
    await made.informer.waitForSync(10_000);
    return made;
  }
  const stopping: Informer<Secret>[] = [];
  const cleanup = async () => {
    for (const i of stopping.splice(0)) await i.stop();
  };

  it("lists, then applies live events in order", async () => {
    const ns = await freshNamespace(c.client);
    const a = await c.client.create(secrets, secret("a"), { namespace: ns });
    const b = await c.client.create(secrets, secret("b"), { namespace: ns });
    const { informer: inf, recorder, errors } = await started({ ref: secrets, namespace: ns });
    stopping.push(inf);
    try {
      expect(inf.hasSynced()).toBe(true);
      expect(inf.keys().sort()).toEqual([`${ns}/a`, `${ns}/b`]);
      expect(inf.get("a", ns)?.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
      expect(inf.getByKey(`${ns}/b`)).toEqual(b);
      const listed = inf.stats.listRevision;
      expect(listed).toBeGreaterThanOrEqual(revisionOf(b));

      const d = await c.client.create(secrets, secret("d"), { namespace: ns });
      const a2 = await c.client.update(secrets, { ...a, data: { x: "eA==" } });
      await c.client.delete(secrets, "b", { namespace: ns });
      await waitFor("three events", () => recorder.calls.length === 5);
      expect(recorder.calls.slice(2).map((x) => `${x.op} ${x.key}`)).toEqual([`add ${ns}/d`, `update ${ns}/a`, `delete ${ns}/b`]);
      expect(recorder.calls[2]!.revision).toBe(revisionOf(d));
      expect(recorder.calls[3]).toMatchObject({ revision: revisionOf(a2), from: revisionOf(a) });
      // The delete carries the deleting revision: the newest of all.
      expect(recorder.calls[4]!.revision).toBeGreaterThan(revisionOf(a2));
      expect(inf.revision).toBe(recorder.calls[4]!.revision);
      expect(inf.keys().sort()).toEqual([`${ns}/a`, `${ns}/d`]);
      expect(inf.stats).toMatchObject({ lists: 1, events: 3 });
      expect(errors).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  // ServiceAccounts: they travel whole on the bus (Secrets travel as identity only, and an informer reads
  // them from the API, which may give a state newer than the event's).
  it("has no duplicate and no gap when objects are written while it starts", async () => {
    const ns = await freshNamespace(c.client);
    const written: number[] = [];
    const writer = async (w: number) => {
      for (let i = 0; i < 30; i++) {
        const sa = await c.client.create(serviceAccounts, serviceAccount(`w${w}-${i}`), { namespace: ns });
        written.push(revisionOf(sa));
        if (i % 3 === 0) {
          written.push(revisionOf(await c.client.update(serviceAccounts, { ...sa, metadata: { ...sa.metadata, labels: { x: "y" } } })));
        }
      }
    };
    const writers = Promise.all([0, 1, 2, 3].map(writer));
    await waitFor("the first writes", () => written.length >= 15);
    // Started mid-burst: writes land before, during and after its list.
    const { informer: inf, recorder, errors } = informer<KubeObject>(c, mode, { ref: serviceAccounts, namespace: ns, pageSize: 7 });
    stopping.push(inf);
    try {
      inf.start();
      await writers;
      await expectCacheMatchesServer(inf, async () => (await c.client.listAll<KubeObject>(serviceAccounts, { namespace: ns })).items);
      const { lists, listRevision } = inf.stats;
      expect(lists).toBe(1);
      expect(listRevision).toBeGreaterThan(0);
      // Every write after the list reached the handlers exactly once, in revision order.
      const after = written.filter((r) => r > listRevision).sort((x, y) => x - y);
      expect(after.length).toBeGreaterThan(0);
      expect(recorder.eventRevisions(listRevision)).toEqual(after);
      // Each object was added once (the 120 written and the namespace's default ServiceAccount); no
      // update replays the revision it replaces.
      const adds = recorder.calls.filter((x) => x.op === "add").map((x) => x.key);
      expect(adds.length).toBe(121);
      expect(new Set(adds).size).toBe(121);
      expect(recorder.calls.filter((x) => x.op === "update" && x.from! >= x.revision)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it("with withoutManagedFields, caches listed and watched objects without them; a write of one keeps the server's", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(
      serviceAccounts,
      { ...serviceAccount("listed"), metadata: { name: "listed", labels: { a: "b" } } },
      { namespace: ns },
    );
    const trimmed = informer<KubeObject>(c, mode, { ref: serviceAccounts, namespace: ns, withoutManagedFields: true });
    const whole = informer<KubeObject>(c, mode, { ref: serviceAccounts, namespace: ns });
    for (const made of [trimmed, whole]) {
      made.informer.start();
      await made.informer.waitForSync(10_000);
    }
    try {
      await c.client.create(
        serviceAccounts,
        { ...serviceAccount("watched"), metadata: { name: "watched", labels: { a: "b" } } },
        { namespace: ns },
      );
      await waitFor(
        "the watched one in both",
        () => trimmed.informer.get("watched", ns) !== undefined && whole.informer.get("watched", ns) !== undefined,
      );
      for (const name of ["listed", "watched"]) {
        expect(trimmed.informer.get(name, ns)!.metadata!.managedFields).toBeUndefined();
        expect(whole.informer.get(name, ns)!.metadata!.managedFields).toHaveLength(1);
      }
      // Written back without managedFields, the object keeps the stored entries: the creator's label
      // stays its field beside the new one (a reset would leave only what this write changed).
      const cached = trimmed.informer.get("listed", ns)!;
      const written = await c.client.update(serviceAccounts, { ...cached, metadata: { ...cached.metadata, labels: { a: "b", x: "y" } } });
      const owned = JSON.stringify(written.metadata?.managedFields?.map((e) => e.fieldsV1));
      expect(owned).toContain('"f:a"');
      expect(owned).toContain('"f:x"');
      expect(trimmed.errors).toEqual([]);
    } finally {
      await trimmed.informer.stop();
      await whole.informer.stop();
    }
  });

  it("keeps indexes in step with every change", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a", { tier: "web" }), { namespace: ns });
    await c.client.create(secrets, secret("b", { tier: "db" }), { namespace: ns });
    const made = informer<Secret>(c, mode, { ref: secrets, namespace: ns });
    const inf = made.informer;
    stopping.push(inf);
    try {
      inf.addIndex("tier", (o) => [o.metadata?.labels?.tier ?? ""]);
      inf.start();
      await inf.waitForSync(10_000);
      const names = (value: string) =>
        inf
          .byIndex("tier", value)
          .map((o) => o.metadata?.name)
          .sort();
      expect(names("web")).toEqual(["a"]);
      expect(names("db")).toEqual(["b"]);
      // An index added after the start covers what is cached already.
      inf.addIndex("namespace", namespaceIndex);
      expect(inf.byIndex("namespace", ns)).toHaveLength(2);

      await c.client.patch(secrets, "a", { metadata: { labels: { tier: "db" } } }, { namespace: ns });
      await waitFor("a moved", () => names("web").length === 0);
      expect(names("db")).toEqual(["a", "b"]);
      await c.client.delete(secrets, "b", { namespace: ns });
      await waitFor("b gone", () => names("db").length === 1);
      expect(names("db")).toEqual(["a"]);
      expect(inf.byIndex("tier", "nothing")).toEqual([]);
      expect(() => inf.byIndex("missing", "x")).toThrow(/no index/);
    } finally {
      await cleanup();
    }
  });

  it("re-delivers every cached object as an update on resync", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a"), { namespace: ns });
    await c.client.create(secrets, secret("b"), { namespace: ns });
    const { informer: inf, recorder } = await started({ ref: secrets, namespace: ns, resyncPeriodMs: 150 });
    stopping.push(inf);
    try {
      await waitFor("two resyncs", () => inf.stats.resyncs >= 2);
      const resynced = recorder.calls.filter((x) => x.op === "update" && x.from === x.revision).map((x) => x.key);
      expect(resynced.filter((k) => k === `${ns}/a`).length).toBeGreaterThanOrEqual(2);
      expect(resynced.filter((k) => k === `${ns}/b`).length).toBeGreaterThanOrEqual(2);
      expect(inf.stats.lists).toBe(1);
    } finally {
      await cleanup();
    }
  });

  it("applies selectors: an object leaving the selection is deleted, entering it is added", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a", { tier: "web" }), { namespace: ns });
    await c.client.create(secrets, secret("b", { tier: "db" }), { namespace: ns });
    await c.client.create(secrets, secret("c", { tier: "web" }), { namespace: ns });
    const { informer: inf, recorder } = await started({
      ref: secrets,
      namespace: ns,
      labelSelector: "tier=web",
      fieldSelector: "metadata.name!=c",
    });
    stopping.push(inf);
    try {
      expect(inf.keys()).toEqual([`${ns}/a`]);
      await c.client.patch(secrets, "b", { metadata: { labels: { tier: "web" } } }, { namespace: ns });
      // Secrets travel as identity only: an informer reads each from the API, and one read after the
      // delete finds nothing to add (a transient add and delete it may rightly never show).
      await waitFor("b added", () => recorder.calls.some((x) => x.op === "add" && x.key === `${ns}/b`));
      await c.client.patch(secrets, "a", { metadata: { labels: { tier: "db" } } }, { namespace: ns });
      await c.client.patch(secrets, "c", { metadata: { labels: { touched: "yes" } } }, { namespace: ns });
      await c.client.create(secrets, secret("d", { tier: "db" }), { namespace: ns });
      await c.client.delete(secrets, "b", { namespace: ns });
      await waitFor("b deleted", () => recorder.calls.some((x) => x.op === "delete" && x.key === `${ns}/b`));
      expect(recorder.calls.map((x) => `${x.op} ${x.key.split("/")[1]}`)).toEqual(["add a", "add b", "delete a", "delete b"]);
      expect(inf.keys()).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it("sees every namespace without a namespace, only its own with one", async () => {
    const ns1 = await freshNamespace(c.client);
    const ns2 = await freshNamespace(c.client);
    const all = await started({ ref: secrets });
    const one = await started({ ref: secrets, namespace: ns1 });
    stopping.push(all.informer, one.informer);
    try {
      // ns2's first: when ns1's, committed after it, is in the namespaced cache, ns2's would be too.
      await c.client.create(secrets, secret("x"), { namespace: ns2 });
      await c.client.create(secrets, secret("x"), { namespace: ns1 });
      await waitFor(
        "both in the cluster-wide cache",
        () => all.informer.getByKey(`${ns2}/x`) !== undefined && all.informer.getByKey(`${ns1}/x`) !== undefined,
      );
      await waitFor("ns1's in its cache", () => one.informer.getByKey(`${ns1}/x`) !== undefined);
      expect(one.informer.keys()).toEqual([`${ns1}/x`]);
    } finally {
      await cleanup();
    }
  });

  it("gives a handler added late every cached object as an add, and stops cleanly", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("a"), { namespace: ns });
    const { informer: inf } = await started({ ref: secrets, namespace: ns });
    const late: string[] = [];
    const remove = inf.addEventHandler({ onAdd: (o) => void late.push(o.metadata?.name ?? "") });
    await waitFor("late add", () => late.length === 1);
    remove();
    await c.client.create(secrets, secret("b"), { namespace: ns });
    await waitFor("b cached", () => inf.get("b", ns) !== undefined);
    expect(late).toEqual(["a"]);

    const began = Date.now();
    await inf.stop();
    expect(Date.now() - began).toBeLessThan(2000);
    // A running informer of the namespace hears of c: the stopped one would have by then, had it not stopped.
    const { informer: live } = await started({ ref: secrets, namespace: ns });
    try {
      await c.client.create(secrets, secret("c"), { namespace: ns });
      await waitFor("c in a running informer", () => live.get("c", ns) !== undefined);
    } finally {
      await live.stop();
    }
    expect(inf.get("c", ns)).toBeUndefined();
    if (mode === "nats") {
      // The informer's consumer is gone with it (other informers in this file were stopped before).
      const nc = await connect({ servers: c.nats.url });
      const jsm = await nc.jetstreamManager();
      await waitFor("no consumers left", async () => (await jsm.streams.info(EVENTS_STREAM)).state.consumer_count === 0, 5000);
      await nc.close();
    }
  });
});

describe("Informer over NATS, more", () => {
  it("shares a caller's connection, and follows a kind of a dotted group", async () => {
    const ns = await freshNamespace(c.client);
    const leases = { group: "coordination.orch.io", version: "v1", plural: "leases", namespaced: true };
    const lease = (name: string) => ({
      apiVersion: "coordination.orch.io/v1",
      kind: "Lease",
      metadata: { name },
      spec: { holderIdentity: "me" },
    });
    await c.client.create(leases, lease("one"), { namespace: ns });
    const nc = await connect({ servers: c.nats.url });
    const inf = new Informer(c.client, { ref: leases, namespace: ns, nats: { connection: nc } });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      await c.client.create(leases, lease("two"), { namespace: ns });
      await waitFor("two", () => inf.get("two", ns) !== undefined);
      expect(inf.keys().sort()).toEqual([`${ns}/one`, `${ns}/two`]);
    } finally {
      await inf.stop();
    }
    // The connection stays the caller's.
    expect(nc.isClosed()).toBe(false);
    await nc.close();
  });

  it("recreates a consumer deleted under it, without a relist and without losing events", async () => {
    const ns = await freshNamespace(c.client);
    const { informer: inf, recorder } = informer<Secret>(c, "nats", { ref: secrets, namespace: ns });
    inf.start();
    const nc = await connect({ servers: c.nats.url });
    try {
      await inf.waitForSync(10_000);
      await c.client.create(secrets, secret("a"), { namespace: ns });
      await waitFor("a", () => inf.get("a", ns) !== undefined);
      const jsm = await nc.jetstreamManager();
      for (const info of await jsm.consumers.list(EVENTS_STREAM).next()) await jsm.consumers.delete(EVENTS_STREAM, info.name);
      const written: number[] = [];
      for (let i = 0; i < 10; i++) written.push(revisionOf(await c.client.create(secrets, secret(`s${i}`), { namespace: ns })));
      await expectCacheMatchesServer(inf, inNamespace(ns));
      expect(inf.stats.lists).toBe(1);
      expect(recorder.eventRevisions(inf.stats.listRevision).slice(1)).toEqual(written);
    } finally {
      await nc.close();
      await inf.stop();
    }
  });
});
