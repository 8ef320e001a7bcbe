// Pods that run: the whole control plane as `npm start` runs it (apiserver, NATS, controllers,
// scheduler, simulated nodes), a Deployment of many replicas created at once, and the time until every
// pod is Ready and the Deployment Available. Nothing is marked by hand: the deployment-controller
// creates the pods, the scheduler binds them, the orchlet starts them.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@orch/testing";
import { pool } from "./load.js";

export interface PodFigures {
  nodes: number;
  replicas: number;
  /** From the create request until every pod reports Ready. */
  readyMs: number;
  /** From the create request until the Deployment's Available condition holds with every replica. */
  availableMs: number;
  podsPerSecond: number;
  /**
   * The apiserver's requests from the create until Available and every event sent, per pod, by `<verb> <resource>[/<subresource>]
   * <code>` (apiserver_request_total, read before and after): what each pod costs the control plane. It
   * includes the nodes' heartbeats (Lease renewals, status reports) of that time.
   */
  requestsPerPod: [string, number][];
}

/** apiserver_request_total by verb, resource, subresource and code. */
async function requestCounts(get: (path: string) => Promise<string>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await get("/metrics")).split("\n")) {
    const m = /^apiserver_request_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.verb === "WATCH") continue;
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ""} ${labels.code}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
  }
  return counts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function podFigures(root: string, nodes: number, replicas: number): Promise<PodFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-pods-"));
  const port = await freePort();
  const launcher: ChildProcess = spawn(process.execPath, [join(root, "tools", "launcher", "dist", "main.mjs")], {
    env: { ...process.env, ORCH_DATA_DIR: dataDir, ORCH_PORT: String(port), ORCH_NODES: String(nodes) },
    stdio: "ignore",
  });
  try {
    const kubeconfig = join(dataDir, "kubeconfig");
    while (!existsSync(kubeconfig)) await sleep(20);
    const pki = (f: string) => readFileSync(join(dataDir, "pki", f), "utf8");
    const p = pool(`https://127.0.0.1:${port}`, { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") }, 4);
    const getText = async (path: string) => (await p.request({ path, method: "GET" })).body.text();
    const get = async (path: string) => JSON.parse(await getText(path));
    // The bench's own reads while the clock runs, kept out of the pipeline's requests.
    const own = new Map<string, number>();
    const read = async (key: string, path: string) => {
      own.set(key, (own.get(key) ?? 0) + 1);
      return get(path);
    };
    // Every node registered and Ready before the clock starts.
    for (;;) {
      const list = await get("/api/v1/nodes");
      const ready = (list.items ?? []).filter((n: any) =>
        n.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True"),
      ).length;
      if (ready >= nodes) break;
      await sleep(200);
    }
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "bench" },
      spec: {
        replicas,
        selector: { matchLabels: { app: "bench" } },
        template: { metadata: { labels: { app: "bench" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
      },
    };
    const before = await requestCounts(getText);
    const t0 = performance.now();
    const created = await p.request({
      path: "/apis/apps/v1/namespaces/default/deployments",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(deployment),
    });
    if (created.statusCode !== 201) throw new Error(`create: ${created.statusCode} ${await created.body.text()}`);
    await created.body.dump();
    let readyMs = 0;
    for (;;) {
      if (process.env.BENCH_PODS_TRACE) {
        const pods = (await read("LIST pods 200", "/api/v1/namespaces/default/pods")).items ?? [];
        const count = (f: (p: any) => boolean) => pods.filter(f).length;
        console.log(
          `${((performance.now() - t0) / 1000).toFixed(1)} s: ${pods.length} pods, ${count((p) => p.spec?.nodeName)} bound, ` +
            `${count((p) => p.status?.phase === "Running")} running, ${count((p) => p.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True"))} ready`,
        );
      }
      const d = await read("GET deployments 200", "/apis/apps/v1/namespaces/default/deployments/bench");
      const status = d.status ?? {};
      if (!readyMs && status.readyReplicas === replicas) readyMs = performance.now() - t0;
      const available = status.conditions?.some((c: any) => c.type === "Available" && c.status === "True");
      if (readyMs && available && status.availableReplicas === replicas) {
        const availableMs = performance.now() - t0;
        // Events are sent behind the writes they tell of: counted once their senders have caught up.
        const events = (c: Map<string, number>) => [...c].filter(([k]) => / events /.test(k)).reduce((sum, [, n]) => sum + n, 0);
        let after = await requestCounts(getText);
        for (let settle = 0; settle < 120; settle++) {
          await sleep(1000);
          const next = await requestCounts(getText);
          const done = events(next) === events(after);
          after = next;
          if (done) break;
        }
        await p.close();
        const requestsPerPod = [...after]
          .map(([key, n]): [string, number] => [key, (n - (before.get(key) ?? 0) - (own.get(key) ?? 0)) / replicas])
          .filter(([, n]) => n > 0)
          .sort((a, b) => b[1] - a[1]);
        return { nodes, replicas, readyMs, availableMs, podsPerSecond: replicas / (readyMs / 1000), requestsPerPod };
      }
      if (performance.now() - t0 > 600_000) throw new Error(`not Ready after 10 minutes: ${JSON.stringify(status)}`);
      await sleep(50);
    }
  } finally {
    const exited = new Promise((r) => launcher.once("exit", r));
    launcher.kill("SIGTERM");
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}
