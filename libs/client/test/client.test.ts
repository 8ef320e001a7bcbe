// The typed client against a real apiserver process, authenticated with the kubeconfig it wrote.
import { createCertificateRequest } from "@orch/pki";
import { eventually } from "@orch/testing";
import { readdirSync, readlinkSync } from "node:fs";
import { type Socket, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import {
  ApiClient,
  ApiError,
  ExpiredError,
  type KubeObject,
  type Status,
  type WatchEvent,
  isAlreadyExists,
  isConflict,
  isExpired,
  isInvalid,
  isNotFound,
} from "../src/index.js";
import {
  type Deployment,
  type Secret,
  deployment,
  deployments,
  freshNamespace,
  leases,
  namespaces,
  secret,
  secrets,
  useCluster,
  waitFor,
} from "./helpers.js";

const c = useCluster();

describe("ApiClient CRUD", () => {
  it("creates, reads, lists, updates, patches and deletes", async () => {
    const ns = await freshNamespace(c.client);
    const created = await c.client.create(secrets, secret("a", { app: "x" }, { k: "dg==" }), { namespace: ns });
    expect(created.metadata?.namespace).toBe(ns);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);

    const got = await c.client.get<Secret>(secrets, "a", { namespace: ns });
    expect(got).toEqual(created);

    // The namespace may also come from the object.
    await c.client.create(secrets, { ...secret("b", { app: "y" }), metadata: { name: "b", namespace: ns, labels: { app: "y" } } });
    const all = await c.client.list<Secret>(secrets, { namespace: ns });
    expect(all.items.map((s) => s.metadata?.name)).toEqual(["a", "b"]);
    expect(Number(all.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));
    const selected = await c.client.list<Secret>(secrets, { namespace: ns, labelSelector: "app=y" });
    expect(selected.items.map((s) => s.metadata?.name)).toEqual(["b"]);
    const byField = await c.client.list<Secret>(secrets, { namespace: ns, fieldSelector: "metadata.name=a" });
    expect(byField.items.map((s) => s.metadata?.name)).toEqual(["a"]);

    const updated = await c.client.update(secrets, { ...got, data: { k: "dzI=" } });
    expect(updated.data).toEqual({ k: "dzI=" });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(got.metadata?.resourceVersion));

    const merged = await c.client.patch<Secret>(secrets, "a", { metadata: { labels: { extra: "1" } } }, { namespace: ns });
    expect(merged.metadata?.labels).toEqual({ app: "x", extra: "1" });
    const jsonPatched = await c.client.patch<Secret>(secrets, "a", [{ op: "remove", path: "/metadata/labels/extra" }], {
      namespace: ns,
      type: "json",
    });
    expect(jsonPatched.metadata?.labels).toEqual({ app: "x" });

    // A dry run answers as the delete would, and leaves the object.
    await c.client.delete(secrets, "a", { namespace: ns, dryRun: true });
    await c.client.get(secrets, "a", { namespace: ns });
    await c.client.delete(secrets, "a", { namespace: ns });
    await expect(c.client.get(secrets, "a", { namespace: ns })).rejects.toSatisfy(isNotFound);
  });

  it("works with cluster-scoped resources and groups with dots", async () => {
    const ns = await freshNamespace(c.client);
    const got = await c.client.get(namespaces, ns);
    expect(got.metadata?.name).toBe(ns);
    const lease = await c.client.create(
      leases(),
      { apiVersion: "coordination.orch.io/v1", kind: "Lease", metadata: { name: "l" }, spec: { holderIdentity: "me" } } as KubeObject,
      {
        namespace: ns,
      },
    );
    expect(lease.metadata?.namespace).toBe(ns);
  });

  it("pages through a list with limit and continue, at one revision", async () => {
    const ns = await freshNamespace(c.client);
    for (let i = 0; i < 7; i++) await c.client.create(secrets, secret(`s${i}`), { namespace: ns });
    const page = await c.client.list<Secret>(secrets, { namespace: ns, limit: 3 });
    expect(page.items).toHaveLength(3);
    expect(page.metadata.continue).toBeTruthy();
    const all = await c.client.listAll<Secret>(secrets, { namespace: ns, limit: 2 });
    expect(all.items.map((s) => s.metadata?.name)).toEqual(["s0", "s1", "s2", "s3", "s4", "s5", "s6"]);
    expect(all.metadata.resourceVersion).toBeTruthy();
  });

  it("writes the status subresource, and approval of a CertificateSigningRequest", async () => {
    const ns = await freshNamespace(c.client);
    const d = await c.client.create(deployments, deployment("web"), { namespace: ns });
    const withStatus = await c.client.updateStatus<Deployment>(deployments, {
      ...d,
      status: { observedGeneration: 1, replicas: 1 },
      spec: { ...d.spec, replicas: 5 },
    });
    // /status writes status only.
    expect(withStatus.status).toMatchObject({ observedGeneration: 1, replicas: 1 });
    expect(withStatus.spec?.replicas).toBe(1);

    const csrs = { group: "certificates.orch.io", version: "v1", plural: "certificatesigningrequests", namespaced: false };
    const { csrPem } = await createCertificateRequest({ commonName: "someone" });
    const csr = await c.client.create<KubeObject & { status?: { conditions?: unknown[] } }>(csrs, {
      apiVersion: "certificates.orch.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: `csr-${ns}` },
      spec: { request: Buffer.from(csrPem).toString("base64"), signerName: "example.com/signer", usages: ["client auth"] },
    } as KubeObject);
    const approved = await c.client.updateSubresource<KubeObject & { status?: { conditions?: Array<{ type: string }> } }>(
      csrs,
      { ...csr, status: { conditions: [{ type: "Approved", status: "True", reason: "Test", message: "ok" }] } } as KubeObject,
      "approval",
    );
    expect(approved.status?.conditions?.map((x) => x.type)).toEqual(["Approved"]);
  });
});

describe("typed errors", () => {
  it("carries the Status: not found, already exists, conflict, invalid", async () => {
    const ns = await freshNamespace(c.client);
    const notFound = await c.client.get(secrets, "nope", { namespace: ns }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(ApiError);
    expect(notFound).toMatchObject({ code: 404, reason: "NotFound" });
    expect(isNotFound(notFound)).toBe(true);
    expect((notFound as ApiError).status.details?.name).toBe("nope");

    const first = await c.client.create(secrets, secret("dup"), { namespace: ns });
    const exists = await c.client.create(secrets, secret("dup"), { namespace: ns }).catch((e: unknown) => e);
    expect(isAlreadyExists(exists)).toBe(true);
    expect(isConflict(exists)).toBe(false);

    await c.client.update(secrets, { ...first, data: { a: "YQ==" } });
    const stale = await c.client.update(secrets, { ...first, data: { b: "Yg==" } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect((stale as ApiError).code).toBe(409);

    const invalid = await c.client.create(secrets, secret("Bad_Name"), { namespace: ns }).catch((e: unknown) => e);
    expect(isInvalid(invalid)).toBe(true);
    expect((invalid as ApiError).causes.map((x) => x.field)).toContain("metadata.name");

    // A path the server does not serve answers with a plain 404 body: still a typed error.
    const unknown = await c.client
      .get({ group: "nothing.example.com", version: "v1", plural: "things", namespaced: false }, "x")
      .catch((e: unknown) => e);
    expect(isNotFound(unknown)).toBe(true);

    // Deleting with a stale precondition is a conflict.
    const pre = await c.client
      .delete(secrets, "dup", { namespace: ns, preconditions: { resourceVersion: first.metadata?.resourceVersion } })
      .catch((e: unknown) => e);
    expect(isConflict(pre)).toBe(true);
  });

  it("refuses a namespaced call without a namespace before sending anything", async () => {
    await expect(c.client.get(secrets, "x")).rejects.toThrow(/namespaced/);
  });

  it("fails to connect without the cluster's CA, and is refused without credentials", async () => {
    const { ca: _ca, ...noCa } = c.client.config;
    const untrusted = new ApiClient(noCa);
    await expect(untrusted.list(namespaces)).rejects.toThrow(/certificate/);
    untrusted.close();
    const anonymous = new ApiClient({ server: c.client.config.server, ca: c.client.config.ca });
    const refused = await anonymous.list(namespaces).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 401 });
    anonymous.close();
  });
});

describe("watch", () => {
  it("iterates events from a revision, with bookmarks ignored unless asked for", async () => {
    const ns = await freshNamespace(c.client);
    const start = await c.client.list(secrets, { namespace: ns });
    const stream = c.client.watch<Secret>(secrets, { namespace: ns, resourceVersion: start.metadata.resourceVersion });
    const a = await c.client.create(secrets, secret("a"), { namespace: ns });
    const a2 = await c.client.update(secrets, { ...a, data: { x: "eA==" } });
    await c.client.delete(secrets, "a", { namespace: ns });
    const seen: WatchEvent<Secret>[] = [];
    for await (const event of stream) {
      if (event.type === "BOOKMARK") continue;
      seen.push(event);
      if (seen.length === 3) break;
    }
    stream.close();
    expect(seen.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    expect(seen[0]!.object.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
    expect(seen[1]!.object.metadata?.resourceVersion).toBe(a2.metadata?.resourceVersion);
    expect(Number(seen[2]!.object.metadata?.resourceVersion)).toBeGreaterThan(Number(a2.metadata?.resourceVersion));
  });

  it("starts with the current state without a revision, and ends at the server's timeout", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("x"), { namespace: ns });
    const events: string[] = [];
    const began = Date.now();
    for await (const event of c.client.watch<Secret>(secrets, { namespace: ns, timeoutSeconds: 1, allowWatchBookmarks: false })) {
      events.push(`${event.type} ${event.object.metadata?.name}`);
    }
    expect(events).toEqual(["ADDED x"]);
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
  });

  it("delivers bookmarks: the initial state ends with one", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("x"), { namespace: ns });
    const stream = c.client.watch<Secret>(secrets, { namespace: ns, sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" });
    const seen: string[] = [];
    for await (const e of stream) {
      seen.push(e.type);
      if (e.type === "BOOKMARK") {
        expect(Number(e.object.metadata?.resourceVersion)).toBeGreaterThan(0);
        expect(e.object.metadata?.annotations?.["orch.io/initial-events-end"]).toBe("true");
        break;
      }
    }
    stream.close();
    expect(seen).toEqual(["ADDED", "BOOKMARK"]);
  });

  it("close() ends a pending iteration without an error", async () => {
    const ns = await freshNamespace(c.client);
    const stream = c.client.watch<Secret>(secrets, { namespace: ns, resourceVersion: "0" });
    const got: string[] = [];
    const done = (async () => {
      for await (const e of stream) got.push(e.type);
      return got;
    })();
    // An event read: the watch is streaming, and the iteration waits for the next one.
    await c.client.create(secrets, secret("a"), { namespace: ns });
    await waitFor("the first event", () => got.length === 1);
    stream.close();
    await expect(done).resolves.toEqual(["ADDED"]);
  });

  it("selects by label on the server", async () => {
    const ns = await freshNamespace(c.client);
    const start = await c.client.list(secrets, { namespace: ns });
    const stream = c.client.watch<Secret>(secrets, {
      namespace: ns,
      resourceVersion: start.metadata.resourceVersion,
      labelSelector: "pick=yes",
    });
    await c.client.create(secrets, secret("no", { pick: "no" }), { namespace: ns });
    await c.client.create(secrets, secret("yes", { pick: "yes" }), { namespace: ns });
    for await (const e of stream) {
      if (e.type === "BOOKMARK") continue;
      expect(`${e.type} ${e.object.metadata?.name}`).toBe("ADDED yes");
      break;
    }
    stream.close();
  });
});

describe("watch from a compacted revision", () => {
  // A server keeping a short history, compacting every second.
  const small = useCluster({ env: { ORCH_HISTORY_REVISIONS: "5", ORCH_COMPACT_INTERVAL_SECONDS: "1" } });

  it("throws ExpiredError (410)", async () => {
    const ns = await freshNamespace(small.client);
    const old = (await small.client.list(secrets, { namespace: ns })).metadata.resourceVersion;
    for (let i = 0; i < 20; i++) await small.client.create(secrets, secret(`s${i}`), { namespace: ns });
    // A watch from `old` fails once a compaction has passed it.
    const error = await eventually(
      "a compaction past the start revision",
      async () => {
        try {
          const stream = small.client.watch(secrets, { namespace: ns, resourceVersion: old, timeoutSeconds: 1 });
          for await (const _ of stream) break;
          stream.close();
          return undefined;
        } catch (e) {
          return e;
        }
      },
      { intervalMs: 200 },
    );
    expect(error).toBeInstanceOf(ExpiredError);
    expect(isExpired(error)).toBe(true);
    expect((error as ApiError).code).toBe(410);
  });
});

describe("updateWithRetry", () => {
  it("re-reads and re-applies on conflict: concurrent writers lose no increment", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, { ...secret("counter"), metadata: { name: "counter", annotations: { n: "0" } } }, { namespace: ns });
    const writers = 6;
    const each = 8;
    let calls = 0;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        for (let i = 0; i < each; i++) {
          await c.client.updateWithRetry<Secret>(
            secrets,
            "counter",
            (s) => {
              calls++;
              const annotations = s.metadata!.annotations!;
              annotations.n = String(Number(annotations.n) + 1);
            },
            { namespace: ns, attempts: 50 },
          );
        }
      }),
    );
    const final = await c.client.get<Secret>(secrets, "counter", { namespace: ns });
    expect(final.metadata?.annotations?.n).toBe(String(writers * each));
    // Writers did collide (otherwise this proves nothing) and were retried.
    expect(calls).toBeGreaterThan(writers * each);
  });

  it("writes nothing when the mutation changes nothing, and writes through a subresource", async () => {
    const ns = await freshNamespace(c.client);
    const d = await c.client.create(deployments, deployment("web"), { namespace: ns });
    const same = await c.client.updateWithRetry<Deployment>(deployments, "web", () => undefined, { namespace: ns });
    expect(same.metadata?.resourceVersion).toBe(d.metadata?.resourceVersion);
    const status = await c.client.updateWithRetry<Deployment>(deployments, "web", (x) => ({ ...x, status: { observedGeneration: 1 } }), {
      namespace: ns,
      subresource: "status",
    });
    expect(status.status).toMatchObject({ observedGeneration: 1 });
  });

  it("gives up with the Conflict after the attempts", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, secret("s"), { namespace: ns });
    // A mutation that itself makes every write stale.
    const e = await c.client
      .updateWithRetry<Secret>(
        secrets,
        "s",
        async (s) => {
          await c.client.patch(secrets, "s", { metadata: { labels: { bump: String(Math.random()) } } }, { namespace: ns });
          s.data = { x: "eA==" };
        },
        { namespace: ns, attempts: 3 },
      )
      .catch((err: unknown) => err);
    expect(isConflict(e)).toBe(true);
  });
});

describe("delete", () => {
  it("returns the object while finalizers hold it, and a Status once it is gone", async () => {
    const ns = await freshNamespace(c.client);
    await c.client.create(secrets, { ...secret("f"), metadata: { name: "f", finalizers: ["example.com/hold"] } }, { namespace: ns });
    const held = await c.client.delete<Secret>(secrets, "f", { namespace: ns });
    expect((held as Secret).metadata?.deletionTimestamp).toBeTruthy();
    await c.client.patch(secrets, "f", { metadata: { finalizers: null } }, { namespace: ns });
    await expect(c.client.get(secrets, "f", { namespace: ns })).rejects.toSatisfy(isNotFound);
    await c.client.create(secrets, secret("g"), { namespace: ns });
    const gone = await c.client.delete(secrets, "g", { namespace: ns, gracePeriodSeconds: 0, propagationPolicy: "Background" });
    expect(["Status", "Secret"]).toContain((gone as Status | Secret).kind);
  });
});

describe("connections", () => {
  /** The apiserver process's open sockets: each connection a client keeps is one of them. */
  const serverSockets = () =>
    readdirSync(`/proc/${c.apiserver.pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${c.apiserver.pid}/fd/${fd}`).startsWith("socket:");
      } catch {
        return false; // closed meanwhile
      }
    }).length;

  it("sends a burst of requests over a few kept connections, while each watch holds its own", async () => {
    const ns = await freshNamespace(c.client);
    const client = ApiClient.fromKubeconfig(c.apiserver.kubeconfigPath, { maxConnections: 4 });
    try {
      const before = serverSockets();
      // More watches than the requests' connections: they must not wait for one.
      const start = await client.list<Secret>(secrets, { namespace: ns });
      const from = { namespace: ns, resourceVersion: start.metadata.resourceVersion };
      const watches = Array.from({ length: 6 }, () => client.watch<Secret>(secrets, from));
      const created = await Promise.all(
        Array.from({ length: 120 }, (_, i) => client.create(secrets, secret(`burst-${i}`), { namespace: ns })),
      );
      expect(created).toHaveLength(120);
      // Each watch sees the burst.
      for (const watch of watches) {
        let seen = 0;
        for await (const event of watch) if (event.type === "ADDED" && ++seen === 120) break;
        expect(seen).toBe(120);
      }
      // The burst went over at most 4 connections (it would have opened one per request in flight), and
      // the 6 watches had one each.
      expect(serverSockets() - before).toBeLessThanOrEqual(4 + 6);
      for (const watch of watches) watch.close();
    } finally {
      client.close();
    }
  });

  it("gives up on a server that accepts a request and never answers, after the request timeout", async () => {
    // A stalled server is outside the project: a TCP listener that reads and never writes.
    const held: Socket[] = [];
    const silent = createServer((socket) => {
      held.push(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const client = new ApiClient({ server: `http://127.0.0.1:${port}` }, { requestTimeoutMs: 300 });
    try {
      await expect(client.get(namespaces, "default")).rejects.toThrow("GET /api/v1/namespaces/default: no response within 300 ms");
    } finally {
      client.close();
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });
});
