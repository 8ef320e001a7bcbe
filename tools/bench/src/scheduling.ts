// The scheduler as a real process binding a backlog of pods: 1,000 pending pods and 100 Ready nodes,
// timed from the scheduler's start (its list included) until the last pod is bound, and how evenly they
// spread. The apiserver and the scheduler are real processes; the scheduler watches over HTTP.
import { type ChildProcess, spawn } from "node:child_process";
import type { Pool } from "undici";
import { createNamespace, runLoad } from "./load.js";

export interface SchedulingFigures {
  pods: number;
  nodes: number;
  createsPerSecond: number;
  /** Scheduler started → every pod bound. */
  seconds: number;
  boundPerSecond: number;
  /** Pods on the fullest and the emptiest node. */
  most: number;
  least: number;
  errors: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function json(p: Pool, path: string): Promise<any> {
  const res = await p.request({ path, method: "GET" });
  return res.body.json();
}

function node(name: string): string {
  const capacity = { cpu: "32", memory: "64Gi", pods: "110" };
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name },
    status: { capacity, allocatable: capacity, conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] },
  });
}

const pod = (name: string) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { containers: [{ name: "c", image: "nginx", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] },
  });

/** Starts `apps/scheduler/dist/main.mjs` with its own identity from `dataDir`; stopped by the caller. */
export function startScheduler(bundle: string, dataDir: string): ChildProcess {
  return spawn(process.execPath, [bundle], {
    env: { ...process.env, ORCH_DATA_DIR: dataDir, ORCH_SUPERVISED: "1" },
    stdio: ["pipe", "ignore", "ignore"],
  });
}

export async function scheduling(
  p: Pool,
  pods: number,
  nodes: number,
  concurrency: number,
  startScheduler: () => void,
): Promise<SchedulingFigures> {
  await runLoad(
    nodes,
    concurrency,
    async (i) => {
      const r = await p.request({
        path: "/api/v1/nodes",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: node(`n-${i}`),
      });
      await r.body.dump();
      return r.statusCode;
    },
    201,
  );
  await createNamespace(p, "scheduled");
  const creates = await runLoad(
    pods,
    concurrency,
    async (i) => {
      const r = await p.request({
        path: "/api/v1/namespaces/scheduled/pods",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: pod(`p-${i}`),
      });
      await r.body.dump();
      return r.statusCode;
    },
    201,
  );
  const start = performance.now();
  startScheduler();
  // Pods still without a node: one item is enough to know.
  for (;;) {
    const left = await json(p, "/api/v1/namespaces/scheduled/pods?fieldSelector=spec.nodeName%3D&limit=1");
    if (left.items.length === 0) break;
    if (performance.now() - start > 300_000) throw new Error("pods still pending after 300 s");
    await sleep(20);
  }
  const seconds = (performance.now() - start) / 1000;
  const perNode = new Map<string, number>();
  for (const item of (await json(p, "/api/v1/namespaces/scheduled/pods")).items as { spec: { nodeName: string } }[]) {
    perNode.set(item.spec.nodeName, (perNode.get(item.spec.nodeName) ?? 0) + 1);
  }
  const counts = Array.from({ length: nodes }, (_, i) => perNode.get(`n-${i}`) ?? 0);
  return {
    pods,
    nodes,
    createsPerSecond: creates.perSecond,
    seconds,
    boundPerSecond: pods / seconds,
    most: Math.max(...counts),
    least: Math.min(...counts),
    errors: creates.errors,
  };
}
