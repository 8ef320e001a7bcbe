// One apiserver process serving from two threads (ORCH_APISERVER_THREADS=2, docs/architecture.md#serving-threads)
// on its SQLite file: the kernel gives each new connection to either thread, so writes made over many
// connections land in both; a watch on any connection sees all of them in revision order, each once;
// /metrics reports the whole process whichever thread answers; what must run once (the event relay)
// runs in one thread; one audit log file holds every thread's events, up to the shutdown.
import { type ApiserverProcess, type NatsServer, eventually, startApiserverProcess, startNatsServer } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminClient, freshNamespace } from "./harness.js";

vi.setConfig({ testTimeout: 120_000 });

const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const ours = (ns: string) => `${configMaps(ns)}?labelSelector=test%3Dthreads`;
const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { test: "threads" } } });

/** One sample's value from an exposition: the first line whose name and labels start with `series`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("an apiserver serving from two threads", () => {
  let nats: NatsServer;
  let server: ApiserverProcess;
  /** A scrape over a connection of its own: each may reach either thread. */
  const scrape = async (): Promise<string> => {
    const api = adminClient(server.url, server.dataDir);
    try {
      return (await api.get("/metrics")).text;
    } finally {
      api.close();
    }
  };

  beforeAll(async () => {
    nats = await startNatsServer();
    server = await startApiserverProcess({ natsUrl: nats.url, env: { ORCH_APISERVER_THREADS: "2" } });
    // The second thread serves once it is ready, a moment after the first wrote the kubeconfig.
    await eventually("both threads serve", async () => sample(await scrape(), "orch_apiserver_serving_threads ") === 2, {
      timeoutMs: 30_000,
    });
  });
  afterAll(async () => {
    await server?.dispose();
    await nats?.stop();
  });

  it("delivers to watches on any connection every write made over many, in revision order, each once", async () => {
    const api = adminClient(server.url, server.dataDir);
    try {
      const ns = await freshNamespace(api, "threads");
      const start = (await api.get(ours(ns))).body.metadata.resourceVersion;
      const watches = await Promise.all([1, 2, 3, 4].map(() => api.watch(`${ours(ns)}&resourceVersion=${start}`)));
      // 16 writers at once: 16 connections, which the kernel spreads over the two threads.
      const written: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = next++; i < 400; i = next++) {
            const r = await api.post(configMaps(ns), configMap(`cm-${i}`));
            expect(r.status).toBe(201);
            written.push(Number(r.body.metadata.resourceVersion));
          }
        }),
      );
      const expected = [...written].sort((a, b) => a - b);
      for (const watch of watches) {
        const seen: number[] = [];
        while (seen.length < expected.length) {
          const event = await watch.next(30_000);
          if (event.type !== "BOOKMARK") seen.push(Number(event.object.metadata.resourceVersion));
        }
        watch.close();
        expect(seen).toEqual(expected);
      }
      // Every write is stored, whichever thread took it.
      expect((await api.get(ours(ns))).body.items).toHaveLength(400);
    } finally {
      api.close();
    }
  });

  it("reports the whole process on /metrics whichever thread answers, and publishes each revision once", async () => {
    const api = adminClient(server.url, server.dataDir);
    try {
      const ns = await freshNamespace(api, "threads-metrics");
      const posted = (text: string) =>
        sample(
          text,
          `apiserver_request_total{verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="201"}`,
        ) ?? 0;
      const before = posted(await scrape());
      await Promise.all(Array.from({ length: 60 }, (_, i) => api.post(configMaps(ns), configMap(`m-${i}`))));
      const stored = (await api.get("/api/v1/configmaps")).body.items.length as number;
      for (let i = 0; i < 6; i++) {
        const text = await scrape();
        // Requests are counted in the thread that served them and summed over both.
        expect(posted(text) - before).toBe(60);
        expect(sample(text, "orch_apiserver_serving_threads ")).toBe(2);
        // The database's and the process's figures are reported once, not once per thread.
        expect(sample(text, 'apiserver_storage_objects{resource="configmaps"}')).toBe(stored);
        const started = sample(text, "process_start_time_seconds ")!;
        expect(started * 1000).toBeGreaterThan(Date.now() - 600_000);
        expect(started * 1000).toBeLessThanOrEqual(Date.now());
        const resident = sample(text, "process_resident_memory_bytes ")!;
        const vmRss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))![1]) * 1024;
        expect(resident / vmRss).toBeGreaterThan(0.75);
        expect(resident / vmRss).toBeLessThan(1.33);
      }
      // One thread relays events to NATS: the relay's count reaches the newest revision and stays there.
      const current = Number((await api.get(ours(ns))).body.metadata.resourceVersion);
      await eventually(
        "every revision published",
        async () => sample(await scrape(), "orch_event_relay_published_events_total ") === current,
        {
          timeoutMs: 30_000,
        },
      );
      expect(sample(await scrape(), "orch_event_relay_published_events_total ")).toBe(current);
    } finally {
      api.close();
    }
  });
});

describe("an audit log file written from two serving threads", () => {
  it("holds every request's events, each once, across a rotation and the shutdown", async () => {
    const dir = await mkdtemp(join(tmpdir(), "orch-threads-audit-"));
    const policyFile = join(dir, "policy.yaml");
    await writeFile(policyFile, JSON.stringify({ apiVersion: "audit.k8s.io/v1", kind: "Policy", rules: [{ level: "RequestResponse" }] }));
    const logPath = join(dir, "audit.log");
    const server = await startApiserverProcess({
      env: {
        ORCH_APISERVER_THREADS: "2",
        ORCH_AUDIT_POLICY_FILE: policyFile,
        ORCH_AUDIT_LOG_PATH: logPath,
        // 1 MB: the events of the 800 creates below (~1.4 MB) rotate the file while both threads write.
        ORCH_AUDIT_LOG_MAXSIZE: "1",
      },
    });
    try {
      const admin = adminClient(server.url, server.dataDir);
      await eventually(
        "both threads serve",
        async () => sample((await admin.get("/metrics")).text, "orch_apiserver_serving_threads ") === 2,
        {
          timeoutMs: 30_000,
        },
      );
      const ns = await freshNamespace(admin, "threads-audit");
      admin.close();
      // A connection per writer: the kernel gives each to either thread.
      const ids: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 24 }, async () => {
          const api = adminClient(server.url, server.dataDir);
          try {
            for (let i = next++; i < 800; i = next++) {
              const r = await api.post(configMaps(ns), configMap(`a-${i}`));
              expect(r.status).toBe(201);
              ids.push(String(r.headers["audit-id"]));
            }
          } finally {
            api.close();
          }
        }),
      );
      // Watches open at shutdown: each ends then, and its last event (ResponseComplete) comes from the
      // thread that served it while the first thread is stopping too.
      const watchers = Array.from({ length: 8 }, () => adminClient(server.url, server.dataDir));
      for (const w of watchers) ids.push(String((await w.watch(configMaps(ns))).headers["audit-id"]));
      await server.stop();
      for (const w of watchers) w.close();
      const files = (await readdir(dir)).filter((f) => f.startsWith("audit"));
      expect(files.length, `${files}`).toBeGreaterThan(1);
      const completed = files
        .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean))
        .map((line) => JSON.parse(line) as { auditID: string; stage: string })
        .filter((e) => e.stage === "ResponseComplete")
        .map((e) => e.auditID);
      const mine = new Set(ids);
      expect(completed.filter((id) => mine.has(id)).sort()).toEqual([...ids].sort());
    } finally {
      await server.dispose();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("ORCH_APISERVER_THREADS", () => {
  it("refuses a count below one", async () => {
    await expect(startApiserverProcess({ env: { ORCH_APISERVER_THREADS: "0" } })).rejects.toThrow(
      /ORCH_APISERVER_THREADS must be a positive integer, not "0"/,
    );
  });
});
