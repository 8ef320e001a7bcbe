// Watch: JSON-lines streams of {type, object} as client-go's reflectors and kubectl consume them.
import { describe, expect, it } from "vitest";
import { freshNamespace, secret, useTestServer, paths } from "./harness.js";

const t = useTestServer();

const secrets = paths.secrets;
const summary = (e: { type: string; object: any }) => `${e.type} ${e.object.metadata?.name ?? ""}`;

describe("watch", () => {
  it("from a resourceVersion: ADDED, MODIFIED, DELETED in order, as JSON lines", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.get(secrets(ns))).body.metadata.resourceVersion;
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(w.headers["content-type"]).toBe("application/json");

    const created = (await t.api.post(secrets(ns), secret("w"))).body;
    const updated = (await t.api.put(`${secrets(ns)}/w`, secret("w", { v: "2" }))).body;
    await t.api.delete(`${secrets(ns)}/w`);
    const events = await w.take(3);
    expect(events.map(summary)).toEqual(["ADDED w", "MODIFIED w", "DELETED w"]);
    expect(events[0]!.object).toEqual(created);
    expect(events[1]!.object).toEqual(updated);
    // DELETED carries the last state with the deletion's resourceVersion.
    expect(events[2]!.object.metadata.labels).toEqual({ v: "2" });
    expect(Number(events[2]!.object.metadata.resourceVersion)).toBeGreaterThan(Number(updated.metadata.resourceVersion));
    expect(events[0]!.object.kind).toBe("Secret");
    expect(events[0]!.object.apiVersion).toBe("v1");
    w.close();
  });

  it("list then watch from the list's resourceVersion misses nothing under concurrent writes (informer pattern)", async () => {
    const ns = await freshNamespace(t.api);
    const all = Array.from({ length: 40 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    const writes = Promise.all(all.map((n) => t.api.post(secrets(ns), secret(n))));
    const list = (await t.api.get(secrets(ns))).body;
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${list.metadata.resourceVersion}`);
    await writes;
    const listed: string[] = list.items.map((i: any) => i.metadata.name);
    const watched: string[] = [];
    while (listed.length + watched.length < all.length) {
      const e = await w.next();
      expect(e.type).toBe("ADDED");
      expect(Number(e.object.metadata.resourceVersion)).toBeGreaterThan(Number(list.metadata.resourceVersion));
      watched.push(e.object.metadata.name);
    }
    expect([...listed, ...watched].sort()).toEqual(all);
    expect(await w.eventsBefore("marker", () => t.api.post(secrets(ns), secret("marker")))).toEqual([]);
    w.close();
  });

  it("replays changes that happened after the given resourceVersion", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.post(secrets(ns), secret("r1"))).body.metadata.resourceVersion;
    await t.api.post(secrets(ns), secret("r2"));
    await t.api.delete(`${secrets(ns)}/r1`);
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv}`);
    expect((await w.take(2)).map(summary)).toEqual(["ADDED r2", "DELETED r1"]);
    w.close();
  });

  it("from a resourceVersion in the future: only changes after it", async () => {
    const ns = await freshNamespace(t.api);
    const rv = Number((await t.api.get(secrets(ns))).body.metadata.resourceVersion);
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv + 2}`);
    for (const n of ["f1", "f2", "f3"]) await t.api.post(secrets(ns), secret(n));
    expect(summary(await w.next())).toBe("ADDED f3");
    expect(await w.eventsBefore("f4", () => t.api.post(secrets(ns), secret("f4")))).toEqual([]);
    w.close();
  });

  it("without a resourceVersion: the current objects as ADDED first, then changes", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("i1"));
    await t.api.post(secrets(ns), secret("i2"));
    const w = await t.api.watch(secrets(ns));
    expect((await w.take(2)).map(summary)).toEqual(["ADDED i1", "ADDED i2"]);
    await t.api.post(secrets(ns), secret("i3"));
    expect(summary(await w.next())).toBe("ADDED i3");
    w.close();

    // resourceVersion=0 means the same.
    const w0 = await t.api.watch(`${secrets(ns)}?resourceVersion=0`);
    expect((await w0.take(3)).map(summary)).toEqual(["ADDED i1", "ADDED i2", "ADDED i3"]);
    w0.close();
  });

  it("sendInitialEvents=true ends the initial state with an annotated bookmark", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("a"));
    await t.api.post(secrets(ns), secret("b"));
    const listRv = (await t.api.get(secrets(ns))).body.metadata.resourceVersion;
    const w = await t.api.watch(
      `${secrets(ns)}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${listRv}&allowWatchBookmarks=true`,
    );
    const events = await w.take(3);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ADDED", "BOOKMARK"]);
    const bookmark = events[2]!.object;
    expect(bookmark.kind).toBe("Secret");
    expect(bookmark.apiVersion).toBe("v1");
    expect(bookmark.metadata.annotations).toEqual({ "orch.io/initial-events-end": "true" });
    expect(Number(bookmark.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(listRv));
    await t.api.post(secrets(ns), secret("c"));
    expect(summary(await w.next())).toBe("ADDED c");
    w.close();
  });

  it("sendInitialEvents without a resourceVersion (client-go's WatchList) reads the latest state", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("x"));
    const w = await t.api.watch(`${secrets(ns)}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    expect(w.status).toBe(200);
    const events = await w.take(2);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "BOOKMARK"]);
    expect(events[1]!.object.metadata.annotations).toEqual({ "orch.io/initial-events-end": "true" });
    w.close();
    // Without allowWatchBookmarks: the initial state, no bookmark.
    const plain = await t.api.watch(`${secrets(ns)}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    expect(plain.status).toBe(200);
    expect(summary(await plain.next())).toBe("ADDED x");
    expect(await plain.eventsBefore("marker", () => t.api.post(secrets(ns), secret("marker")))).toEqual([]);
    plain.close();
  });

  it("watch options are validated like Kubernetes' (422)", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`${secrets(ns)}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
    const rvm = await t.api.get(`${secrets(ns)}?watch=true&resourceVersion=1&resourceVersionMatch=Exact`);
    expect(rvm.status).toBe(422);
    expect(rvm.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    );
    const badRv = await t.api.get(`${secrets(ns)}?watch=true&resourceVersion=abc`);
    expect(badRv.status).toBe(400);
    expect(badRv.body.message).toBe(
      'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
  });

  it("no bookmarks unless allowWatchBookmarks=true", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.get(secrets(ns))).body.metadata.resourceVersion;
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv}`);
    await t.api.post(secrets(ns), secret("nb"));
    expect(summary(await w.next())).toBe("ADDED nb");
    // No bookmark, however long the stream: none between two changes.
    expect(await w.eventsBefore("marker", () => t.api.post(secrets(ns), secret("marker")))).toEqual([]);
    w.close();
  });

  it("timeoutSeconds ends the stream cleanly", async () => {
    const ns = await freshNamespace(t.api);
    const started = Date.now();
    const w = await t.api.watch(`${secrets(ns)}?timeoutSeconds=1`);
    await w.ended;
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(3000);
  });

  it("only sees its namespace; the all-namespaces watch sees every namespace", async () => {
    const a = await freshNamespace(t.api);
    const b = await freshNamespace(t.api);
    const rv = (await t.api.get(secrets(a))).body.metadata.resourceVersion;
    const wa = await t.api.watch(`${secrets(a)}?resourceVersion=${rv}`);
    const all = await t.api.watch(`/api/v1/secrets?resourceVersion=${rv}&labelSelector=scope%3Dall`);
    await t.api.post(secrets(b), secret("other", { scope: "all" }));
    await t.api.post(secrets(a), secret("mine", { scope: "all" }));
    expect(summary(await wa.next())).toBe("ADDED mine");
    expect(await wa.eventsBefore("marker", () => t.api.post(secrets(a), secret("marker")))).toEqual([]);
    const two = await all.take(2);
    expect(two.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual([`${b}/other`, `${a}/mine`]);
    wa.close();
    all.close();
  });

  it("label selector transitions: leaving is DELETED, entering is ADDED", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.get(secrets(ns))).body.metadata.resourceVersion;
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv}&labelSelector=app%3Dweb`);
    await t.api.post(secrets(ns), secret("x", { app: "web" }));
    await t.api.post(secrets(ns), secret("y", { app: "db" }));
    const leaving = (await t.api.put(`${secrets(ns)}/x`, secret("x", { app: "db" }))).body;
    await t.api.put(`${secrets(ns)}/y`, secret("y", { app: "web" }));
    await t.api.put(`${secrets(ns)}/y`, secret("y", { app: "web", v: "2" }));
    const events = await w.take(4);
    expect(events.map(summary)).toEqual(["ADDED x", "DELETED x", "ADDED y", "MODIFIED y"]);
    // Leaving the selection: the previous state of the object, at the new resourceVersion.
    expect(events[1]!.object.metadata.labels).toEqual({ app: "web" });
    expect(events[1]!.object.metadata.resourceVersion).toBe(leaving.metadata.resourceVersion);
    expect(await w.eventsBefore("marker", () => t.api.post(secrets(ns), secret("marker", { app: "web" })))).toEqual([]);
    w.close();
  });

  it("field selector metadata.name (as kubectl delete --wait uses it)", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("target"));
    await t.api.post(secrets(ns), secret("bystander"));
    const w = await t.api.watch(`${secrets(ns)}?fieldSelector=metadata.name%3Dtarget`);
    expect(summary(await w.next())).toBe("ADDED target");
    await t.api.delete(`${secrets(ns)}/bystander`);
    await t.api.delete(`${secrets(ns)}/target`);
    expect(summary(await w.next())).toBe("DELETED target");
    // Created again, it is the next event: the bystander's delete never came.
    expect(await w.eventsBefore("target", () => t.api.post(secrets(ns), secret("target")))).toEqual([]);
    w.close();
  });

  it("a watch on a cluster-scoped kind", async () => {
    const base = "/apis/scheduling.orch.io/v1/priorityclasses";
    const rv = (await t.api.get(base)).body.metadata.resourceVersion;
    const w = await t.api.watch(`${base}?resourceVersion=${rv}`);
    await t.api.post(base, { metadata: { name: "watched-pc" }, value: 5 });
    const e = await w.next();
    expect(summary(e)).toBe("ADDED watched-pc");
    expect(e.object.kind).toBe("PriorityClass");
    w.close();
  });
});
