// One apiserver process serving from two threads (ORCH_APISERVER_THREADS=2, docs/architecture.md#serving-threads)
// on its SQLite file: the kernel gives each new connection to either thread, so writes made over many
// connections land in both; a watch on any connection sees all of them in revision order, each once;
// /metrics reports the whole process whichever thread answers; what must run once (the event relay)
// runs in one thread.
import { type ApiserverProcess, type NatsServer, eventually, startApiserverProcess, startNatsServer } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configFromEnv } from "../src/config.js";
import { startApiserver } from "../src/server.js";
import { adminClient, freshNamespace, testLog } from "./harness.js";

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

describe("ORCH_APISERVER_THREADS", () => {
  it("refuses what it cannot serve: a count below one, and an audit log file shared by several threads", async () => {
    await expect(startApiserverProcess({ env: { ORCH_APISERVER_THREADS: "0" } })).rejects.toThrow(
      /ORCH_APISERVER_THREADS must be a positive integer, not "0"/,
    );
    // Each thread would rotate the one file under the others.
    const config = configFromEnv({ ORCH_DATA_DIR: join(tmpdir(), "orch-unused"), ORCH_AUDIT_LOG_PATH: "audit.log" });
    await expect(startApiserver(config, testLog, { index: 0, threads: 2 })).rejects.toThrow(
      /an audit log file needs ORCH_APISERVER_THREADS=1/,
    );
  });
});
