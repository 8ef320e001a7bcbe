// Assembles the apiserver: data directory, PKI, storage, kinds, HTTPS, event relay, compaction.
import { serve } from "@hono/node-server";
import type { ObjectHeader } from "@orch/api";
import { EventRelay } from "@orch/events";
import { KindRegistry, type KindDefinition, ResourceStore, WatchHub, builtinKinds, ensureBuiltinObjects, storageResource } from "@orch/registry";
import { KeyExistsError, SqliteStorage } from "@orch/storage";
import { randomUUID } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { ApiserverConfig } from "./config.js";
import { ensurePki, kubeconfig } from "./bootstrap/pki.js";
import { createApp } from "./http/app.js";
import { GarbageCollector } from "./garbage-collector.js";
import { NamespaceFinalizer } from "./namespace-finalizer.js";

export interface RunningApiserver {
  url: string;
  port: number;
  kubeconfigPath: string;
  registry: KindRegistry;
  close(): Promise<void>;
}

/** The namespaces every cluster has, created on first start. */
async function ensureDefaultNamespace(storage: SqliteStorage): Promise<void> {
  const ns: ObjectHeader = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "default",
      uid: randomUUID(),
      creationTimestamp: `${new Date().toISOString().slice(0, 19)}Z`,
      labels: { "kubernetes.io/metadata.name": "default" },
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
  try {
    await storage.create({ resource: "core/namespaces", namespace: "", name: "default" }, ns);
  } catch (e) {
    if (!(e instanceof KeyExistsError)) throw e;
  }
}

export async function startApiserver(config: ApiserverConfig): Promise<RunningApiserver> {
  await mkdir(config.dataDir, { recursive: true });
  const hosts = [...new Set(["localhost", "127.0.0.1", config.bind])].filter((h) => h !== "0.0.0.0" && h !== "::");
  const pki = await ensurePki(config.dataDir, hosts);
  const storage = new SqliteStorage({ path: join(config.dataDir, "orch.db") });
  const hub = await WatchHub.create(storage);
  const registry = new KindRegistry();
  for (const kind of builtinKinds(config.profile)) registry.add(kind);
  await ensureDefaultNamespace(storage);
  await ensureBuiltinObjects({ storage, hub }, config.profile);

  const stores = new Map<string, ResourceStore>();
  // What strategies' cross-object rules read (e.g. the one default PriorityClass).
  const cluster = {
    list: async (group: string, plural: string, namespace?: string) =>
      (await storage.list({ resource: `${group || "core"}/${plural}`, namespace })).items.map(
        (o) => JSON.parse(o.value) as ObjectHeader,
      ),
  };
  const storeFor = (kind: KindDefinition) => {
    const key = `${storageResource(kind)}/${kind.version}`;
    let store = stores.get(key);
    if (!store || store.kind !== kind) stores.set(key, (store = new ResourceStore(kind, { storage, hub, cluster })));
    return store;
  };
  let ready = false;
  const app = createApp({
    registry,
    storeFor,
    profile: config.profile,
    tokenFile: config.tokenFile,
    initialEventsAnnotation: config.profile.annotations.initialEventsEnd,
    ready: () => ready,
  });

  const server = serve({
    fetch: app.fetch,
    port: config.port,
    hostname: config.bind,
    createServer,
    serverOptions: {
      key: pki.serverKeyPem,
      cert: pki.serverCertPem,
      ca: pki.caPem,
      requestCert: true,
      rejectUnauthorized: false,
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.bind === "0.0.0.0" || config.bind === "::" ? "127.0.0.1" : config.bind;
  const url = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;

  const systemContext = () => ({
    user: { username: "system:apiserver", groups: ["system:masters"] },
    profile: config.profile,
    warnings: [],
  });
  const namespaceFinalizer = new NamespaceFinalizer(storage, registry, storeFor, systemContext);
  const garbageCollector = new GarbageCollector(storage, registry, storeFor, systemContext);
  // The relay does not wait for NATS: writes succeed while it is away and the backlog follows.
  const relay = config.natsUrl ? EventRelay.start(storage, config.natsUrl) : undefined;
  const compactor = setInterval(() => {
    // Compaction keeps what the relay has not published yet; without a relay nothing waits for it.
    const published = relay ? Promise.resolve() : storage.currentRevision().then((r) => storage.markPublished(r));
    published
      .then(() => storage.compact({ maxRevisions: config.history.maxRevisions, maxAgeMs: config.history.maxAgeMs }))
      .catch((e) => console.error("compaction failed:", e));
  }, config.history.compactEveryMs);
  compactor.unref();

  // Written last, atomically: its presence means the apiserver is ready for clients.
  const kubeconfigPath = join(config.dataDir, "kubeconfig");
  await writeFile(`${kubeconfigPath}.tmp`, kubeconfig(url, pki), { mode: 0o600 });
  await rename(`${kubeconfigPath}.tmp`, kubeconfigPath);
  ready = true;

  return {
    url,
    port,
    kubeconfigPath,
    registry,
    async close() {
      ready = false;
      clearInterval(compactor);
      namespaceFinalizer.stop();
      garbageCollector.stop();
      hub.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await relay?.stop();
      await storage.close();
    },
  };
}
