// `npm run bench -- --replicas`: creates/s and gets/s on SQLite with one apiserver, on PostgreSQL with one,
// and on PostgreSQL with three behind HAProxy (the launcher's ORCH_APISERVERS=3), in one run; and how
// soon a watch on one replica sees a create made through another (docs/high-availability.md).
// PostgreSQL databases are created for the run and dropped after it, with durable commits.
import { createPostgresDatabase } from "@orch/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, type Pool, request } from "undici";
import { type LoadResult, type Tls, createNamespace, percentile, pool, runLoad } from "./load.js";

export interface ReplicaRun {
  name: string;
  creates: LoadResult;
  gets: LoadResult;
}

export interface ReplicaFigures {
  runs: ReplicaRun[];
  /** Create sent through one replica until the watch event arrives from another (ms). */
  crossReplica: { p50: number; p99: number };
  /** The same with the watch on the replica that took the create. */
  sameReplica: { p50: number; p99: number };
}

export interface RunningApiserver {
  origin: string;
  tls: Tls;
  stop(): Promise<void>;
}

const configMap = (name: string) => JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { n: name } });

async function throughput(origin: string, tls: Tls, creates: number, gets: number, concurrency: number): Promise<Omit<ReplicaRun, "name">> {
  const p = pool(origin, tls, concurrency);
  try {
    await createNamespace(p, "bench");
    const created = await runLoad(
      creates,
      concurrency,
      async (i) => {
        const res = await p.request({
          path: "/api/v1/namespaces/bench/configmaps",
          method: "POST",
          headers: { "content-type": "application/json" },
          body: configMap(`c-${i}`),
        });
        await res.body.dump();
        return res.statusCode;
      },
      201,
    );
    const got = await runLoad(
      gets,
      concurrency,
      async (i) => {
        const res = await p.request({ path: `/api/v1/namespaces/bench/configmaps/c-${i % creates}`, method: "GET" });
        await res.body.dump();
        return res.statusCode;
      },
      200,
    );
    return { creates: created, gets: got };
  } finally {
    await p.close();
  }
}

/**
 * Creates sent one at a time through `writer`, each watched through `watcher`: the time from sending a
 * create until the watcher's event for it arrives.
 */
async function watchLatency(writer: Pool, watcher: { origin: string; tls: Tls }, namespace: string, events: number) {
  await createNamespace(writer, namespace);
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  const agent = new Agent({ connect: { ...watcher.tls } });
  const res = await request(`${watcher.origin}/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=0`, {
    dispatcher: agent,
  });
  let buffer = "";
  const done = new Promise<void>((resolveDone) => {
    res.body.on("data", (chunk: Buffer) => {
      const now = performance.now();
      buffer += chunk.toString();
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const event = JSON.parse(buffer.slice(0, nl)) as { type: string; object: { metadata: { name: string } } };
        buffer = buffer.slice(nl + 1);
        const t0 = sent.get(event.object.metadata.name);
        if (event.type === "ADDED" && t0 !== undefined) latencies.push(now - t0);
        if (latencies.length === events) resolveDone();
      }
    });
  });
  for (let i = 0; i < events; i++) {
    const name = `w-${i}`;
    sent.set(name, performance.now());
    const r = await writer.request({
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: configMap(name),
    });
    await r.body.dump();
    await new Promise((r) => setTimeout(r, 5));
  }
  await done;
  res.body.destroy();
  await agent.close();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** The launcher with ORCH_APISERVERS=3 on `databaseUrl`, no controllers, no bus: HAProxy and three apiservers. */
async function startReplicated(launcher: string, databaseUrl: string, port: number) {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-replicas-"));
  const child: ChildProcess = spawn(process.execPath, [launcher], {
    env: {
      ...process.env,
      ORCH_DATA_DIR: dataDir,
      ORCH_PORT: String(port),
      ORCH_APISERVERS: "3",
      ORCH_STORAGE: databaseUrl,
      ORCH_CONTROLLERS: "none",
      ORCH_NATS: "off",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const found = /.*apiservers behind HAProxy on .*/.exec(output);
      if (found && output.includes("control plane ready")) resolve(found[0]);
    });
    child.once("exit", (code) => reject(new Error(`launcher exited (${code}):\n${output}`)));
  });
  const pki = (f: string) => readFileSync(join(dataDir, "pki", f), "utf8");
  const tls = { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") };
  const replicas = [...line.matchAll(/on 127\.0\.0\.1:(\d+) \(pid/g)].map((m) => `https://127.0.0.1:${m[1]}`);
  return {
    origin: `https://127.0.0.1:${port}`,
    tls,
    replicas,
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function replicaFigures(options: {
  start: (dataDir: string, env: Record<string, string>) => Promise<RunningApiserver>;
  launcher: string;
  freePort: () => Promise<number>;
  creates: number;
  gets: number;
  watchEvents: number;
  concurrency: number;
}): Promise<ReplicaFigures> {
  const runs: ReplicaRun[] = [];
  const single = async (name: string, env: Record<string, string>) => {
    const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-single-"));
    const api = await options.start(dataDir, env);
    try {
      runs.push({ name, ...(await throughput(api.origin, api.tls, options.creates, options.gets, options.concurrency)) });
    } finally {
      await api.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  };
  await single("SQLite, one apiserver", {});
  const one = await createPostgresDatabase({ durable: true });
  try {
    await single("PostgreSQL, one apiserver", { ORCH_STORAGE: one.url });
  } finally {
    await one.drop();
  }
  const shared = await createPostgresDatabase({ durable: true });
  try {
    const cluster = await startReplicated(options.launcher, shared.url, await options.freePort());
    try {
      runs.push({
        name: "PostgreSQL, three apiservers behind HAProxy",
        ...(await throughput(cluster.origin, cluster.tls, options.creates, options.gets, options.concurrency)),
      });
      const [a, b] = cluster.replicas.map((origin) => ({ origin, tls: cluster.tls }));
      const writer = pool(b!.origin, cluster.tls, 1);
      try {
        const crossReplica = await watchLatency(writer, a!, "cross", options.watchEvents);
        const sameReplica = await watchLatency(writer, b!, "same", options.watchEvents);
        return { runs, crossReplica, sameReplica };
      } finally {
        await writer.close();
      }
    } finally {
      await cluster.stop();
    }
  } finally {
    await shared.drop();
  }
}
