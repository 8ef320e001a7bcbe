// Throw-away control planes as a test suite starts them (`@orch/control-plane/testing`, from the
// assembled package): the time to a ready kubeconfig with no controllers and with all of them, to a CRD
// Established (what envtest users wait for: the apiserver, the crd-controller and their CRDs), the
// memory of one, and eight started at once.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { widgetCrd } from "./crds.js";

/** What the bench uses of the test API (the package's own types exist only once it is assembled). */
interface TestingApi {
  startControlPlane(options?: {
    controllers?: "all" | "none";
    crds?: Record<string, unknown>[];
  }): Promise<{ pid: number; stop(): Promise<void> }>;
}

export interface ControlPlaneFigures {
  none: number[];
  all: number[];
  /** No controllers but the crd-controller, until the Widget CRD (./crds.ts) is Established. */
  crd: number[];
  /** RSS of one control plane with every controller: the launcher and all its descendants. */
  rssMiB: number;
  /** Eight started together, until the last is ready. */
  parallel: { count: number; ms: number };
}

/** Resident memory of `pid` and every process below it, from /proc. */
function treeRssMiB(pid: number): number {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,rss="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number, number]);
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, parent] of rows) {
      if (tree.has(parent) && !tree.has(p)) {
        tree.add(p);
        grew = true;
      }
    }
  }
  return rows.filter(([p]) => tree.has(p)).reduce((sum, [, , rss]) => sum + rss, 0) / 1024;
}

export async function controlPlaneStarts(root: string, runs: number, parallel = 8): Promise<ControlPlaneFigures> {
  execFileSync(process.execPath, [join(root, "tools", "control-plane", "assemble.mjs")], { stdio: "ignore" });
  const api = (await import(pathToFileURL(join(root, "tools", "control-plane", "dist", "testing.mjs")).href)) as TestingApi;
  const timed = async (controllers: "all" | "none", crds?: Record<string, unknown>[]) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const cp = await api.startControlPlane({ controllers, ...(crds ? { crds } : {}) });
      times.push(performance.now() - t0);
      await cp.stop();
    }
    return times.sort((a, b) => a - b);
  };
  const none = await timed("none");
  const all = await timed("all");
  const crd = await timed("none", [widgetCrd]);
  const one = await api.startControlPlane({ controllers: "all" });
  // Settled: the controllers have listed and the relay caught up.
  await new Promise((r) => setTimeout(r, 2000));
  const rssMiB = treeRssMiB(one.pid);
  await one.stop();
  const t0 = performance.now();
  const started = await Promise.allSettled(Array.from({ length: parallel }, () => api.startControlPlane({ controllers: "all" })));
  const ms = performance.now() - t0;
  // Those that started are stopped (their processes and data directories gone) even if another failed.
  await Promise.all(started.map((p) => (p.status === "fulfilled" ? p.value.stop() : undefined)));
  const failed = started.find((p): p is PromiseRejectedResult => p.status === "rejected");
  if (failed) throw failed.reason;
  return { none, all, crd, rssMiB, parallel: { count: parallel, ms } };
}
