// Pods that run: the whole control plane as `npm start` runs it (apiserver, NATS, controllers,
// scheduler, simulated nodes), a Deployment of many replicas created at once, and the time until every
// pod is Ready and the Deployment Available. Nothing is marked by hand: the deployment-controller
// creates the pods, the scheduler binds them, the orchlet starts them.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@orch/testing";
import { pool } from "./load.js";

/** One Deployment's rollout, from its create request until every replica is Ready and it is Available. */
export interface RolloutFigures {
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
  /**
   * With `timeline`: when the pods reached each stage, from a watch opened before the create (one more
   * watcher for the apiserver to serve): milliseconds from the create request until 10, 50, 90 and 100 %
   * of the replicas had been created, bound, were Running, were Ready; and how many were in each stage
   * at the end of each second.
   */
  timeline?: { stages: Record<Stage, number[]>; perSecond: Record<Stage, number>[] };
  /** CPU seconds (user + system) each process of the control plane spent from the create until Ready. */
  cpuSeconds: [string, number][];
  /** CPU seconds the whole machine was busy in the same time (every process, the bench's and others' too). */
  machineCpuSeconds: number;
}

export interface PodFigures {
  nodes: number;
  replicas: number;
  /**
   * The first Deployment, created as soon as the nodes are Ready: its pods run the pod paths of every
   * process for the first time, while V8 still compiles them (a fifth of the apiserver's CPU in that
   * rollout went to its optimizing compiler's threads).
   */
  first: RolloutFigures;
  /** A second Deployment of as many replicas beside the first: the control plane as it runs from then on. */
  second: RolloutFigures;
  /** Lines of the launcher's log that say a process exited or lost its lease (restarts under load). */
  restarts: string[];
}

export const stages = ["created", "bound", "running", "ready"] as const;
export type Stage = (typeof stages)[number];
export const stagePercents = [10, 50, 90, 100];

/** The stage a pod has reached, from the pod as a watch shows it. */
function stageTimes(pod: any, at: number, times: Partial<Record<Stage, number>>): void {
  times.created ??= at;
  if (pod.spec?.nodeName) times.bound ??= at;
  if (pod.status?.phase === "Running") times.running ??= at;
  if (pod.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True")) times.ready ??= at;
}

/**
 * The launcher's children by name (`apiserver`, `scheduler`, …, `nats-server`), from /proc: their
 * command lines name the bundle (`apps/<name>/dist/main.mjs`) or the program.
 */
function controlPlaneProcesses(launcherPid: number): Map<string, number> {
  const found = new Map<string, number>();
  const children = (pid: number): number[] => {
    try {
      return readdirSync(`/proc/${pid}/task`).flatMap((t) =>
        readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number),
      );
    } catch {
      return [];
    }
  };
  for (const pid of children(launcherPid)) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue;
    }
    const app = /apps\/([\w-]+)\/dist\/main\.mjs/.exec(cmdline)?.[1] ?? (/nats-server/.test(cmdline) ? "nats-server" : undefined);
    if (app) found.set(found.has(app) ? `${app} ${pid}` : app, pid);
  }
  return found;
}

/** utime + stime of a process, in seconds (clock ticks of 1/100 s on Linux). */
function cpuOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Busy seconds of the whole machine, every core and every process (from /proc/stat). */
function machineBusy(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  return ticks.slice(0, 8).reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + t), 0) / 100;
}

/**
 * CPU time of each control-plane process while the clock runs, sampled often enough that a process
 * restarted by the launcher (a lost lease) still counts: its successor's time is added under its name.
 */
class CpuMeter {
  private readonly last = new Map<number, number>();
  readonly seconds = new Map<string, number>();
  private machineStart = 0;
  machineSeconds = 0;

  constructor(private readonly launcherPid: number) {}

  start(): void {
    for (const [, pid] of controlPlaneProcesses(this.launcherPid)) this.last.set(pid, cpuOf(pid) ?? 0);
    this.machineStart = machineBusy();
  }

  sample(): void {
    for (const [name, pid] of controlPlaneProcesses(this.launcherPid)) {
      const now = cpuOf(pid);
      if (now === undefined) continue;
      const key = name.replace(/ \d+$/, "");
      this.seconds.set(key, (this.seconds.get(key) ?? 0) + now - (this.last.get(pid) ?? 0));
      this.last.set(pid, now);
    }
    this.machineSeconds = machineBusy() - this.machineStart;
  }
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

export async function podFigures(root: string, nodes: number, replicas: number, options: { timeline?: boolean } = {}): Promise<PodFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-pods-"));
  const port = await freePort();
  const launcher: ChildProcess = spawn(process.execPath, [join(root, "tools", "launcher", "dist", "main.mjs")], {
    env: { ...process.env, ORCH_DATA_DIR: dataDir, ORCH_PORT: String(port), ORCH_NODES: String(nodes) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The launcher's log: kept whole in BENCH_PODS_LOG when set, scanned for restarts either way.
  const restarts: string[] = [];
  const logFile = process.env.BENCH_PODS_LOG ? createWriteStream(process.env.BENCH_PODS_LOG) : undefined;
  let t0 = Number.POSITIVE_INFINITY;
  let partial = "";
  const onLog = (chunk: Buffer) => {
    logFile?.write(chunk);
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines)
      if (/exited \(|lost leadership/i.test(line) && performance.now() > t0)
        restarts.push(`${((performance.now() - t0) / 1000).toFixed(1)} s: ${line.slice(0, 200)}`);
  };
  launcher.stdout!.on("data", onLog);
  launcher.stderr!.on("data", onLog);
  try {
    const kubeconfig = join(dataDir, "kubeconfig");
    while (!existsSync(kubeconfig)) await sleep(20);
    const pki = (f: string) => readFileSync(join(dataDir, "pki", f), "utf8");
    const p = pool(`https://127.0.0.1:${port}`, { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") }, 4);
    const getText = async (path: string) => (await p.request({ path, method: "GET" })).body.text();
    const get = async (path: string) => JSON.parse(await getText(path));
    // Every node registered and Ready before the clock starts.
    for (;;) {
      const list = await get("/api/v1/nodes");
      const ready = (list.items ?? []).filter((n: any) =>
        n.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True"),
      ).length;
      if (ready >= nodes) break;
      await sleep(200);
    }
    // And every node has asked for its serving certificate: a hundred CSRs parsed and validated by the
    // apiserver are the nodes' start, not the pods' cost.
    const domain = process.env.ORCH_PROFILE === "kubernetes" ? "k8s.io" : "orch.io";
    for (;;) {
      const list = await get(`/apis/certificates.${domain}/v1/certificatesigningrequests`);
      const serving = (list.items ?? []).filter((r: any) => r.spec?.signerName?.endsWith("/orchlet-serving")).length;
      if (serving >= nodes) break;
      await sleep(200);
    }
    /** Creates a Deployment of `replicas` pods labelled `app: <name>` and measures it until Available. */
    async function rollout(name: string, timeline: boolean): Promise<RolloutFigures> {
      const deployment = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
        },
      };
      // The bench's own reads while the clock runs, kept out of the pipeline's requests.
      const own = new Map<string, number>();
      const read = async (key: string, path: string) => {
        own.set(key, (own.get(key) ?? 0) + 1);
        return get(path);
      };
      // The timeline: one watch from the bench, on its own connection, opened before the create.
      const times = new Map<string, Partial<Record<Stage, number>>>();
      const watchPool = timeline
        ? pool(`https://127.0.0.1:${port}`, { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") }, 1)
        : undefined;
      const selector = `labelSelector=${encodeURIComponent(`app=${name}`)}`;
      const listed = watchPool ? await get(`/api/v1/namespaces/default/pods?${selector}`) : undefined;
      const watch = await watchPool?.request({
        path: `/api/v1/namespaces/default/pods?${selector}&watch=1&allowWatchBookmarks=false&resourceVersion=${listed.metadata.resourceVersion}`,
        method: "GET",
      });
      let pending = "";
      const start = performance.now();
      watch?.body.on("data", (chunk: Buffer) => {
        const at = performance.now() - start;
        const lines = (pending + chunk.toString("utf8")).split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          if (!line) continue;
          const event = JSON.parse(line);
          if (event.type !== "ADDED" && event.type !== "MODIFIED") continue;
          const pod = event.object.metadata.name;
          let t = times.get(pod);
          if (!t) times.set(pod, (t = {}));
          stageTimes(event.object, at, t);
        }
      });
      watch?.body.on("error", () => undefined);
      const cpu = new CpuMeter(launcher.pid!);
      cpu.start();
      const sampling = setInterval(() => cpu.sample(), 250);
      const before = await requestCounts(getText);
      const t = performance.now();
      t0 = Math.min(t0, t);
      // For profiles of the processes (their timestamps are the monotonic clock's, in microseconds).
      logFile?.write(`[bench] ${name}: clock started at monotonic ${process.hrtime.bigint() / 1000n} µs\n`);
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
        const d = await read("GET deployments 200", `/apis/apps/v1/namespaces/default/deployments/${name}`);
        const status = d.status ?? {};
        if (!readyMs && status.readyReplicas === replicas) {
          readyMs = performance.now() - t;
          logFile?.write(`[bench] ${name}: all Ready at monotonic ${process.hrtime.bigint() / 1000n} µs\n`);
          clearInterval(sampling);
          cpu.sample();
        }
        const available = status.conditions?.some((c: any) => c.type === "Available" && c.status === "True");
        if (readyMs && available && status.availableReplicas === replicas) break;
        if (performance.now() - t > 600_000) throw new Error(`${name} not Ready after 10 minutes: ${JSON.stringify(status)}`);
        await sleep(50);
      }
      const availableMs = performance.now() - t;
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
      watch?.body.destroy();
      await watchPool?.destroy();
      const at = (stage: Stage) =>
        [...times.values()]
          .map((t) => t[stage])
          .filter((t): t is number => t !== undefined)
          .sort((a, b) => a - b);
      const sorted = Object.fromEntries(stages.map((s) => [s, at(s)])) as Record<Stage, number[]>;
      const stagesAt = Object.fromEntries(
        stages.map((s) => [s, stagePercents.map((pc) => sorted[s][Math.min(replicas, Math.ceil((pc / 100) * replicas)) - 1] ?? NaN)]),
      ) as Record<Stage, number[]>;
      const perSecond = Array.from({ length: Math.ceil(readyMs / 1000) }, (_, i) =>
        Object.fromEntries(stages.map((s) => [s, sorted[s].filter((t) => t <= (i + 1) * 1000).length])),
      ) as Record<Stage, number>[];
      const requestsPerPod = [...after]
        .map(([key, n]): [string, number] => [key, (n - (before.get(key) ?? 0) - (own.get(key) ?? 0)) / replicas])
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1]);
      return {
        readyMs,
        availableMs,
        podsPerSecond: replicas / (readyMs / 1000),
        requestsPerPod,
        timeline: watchPool ? { stages: stagesAt, perSecond } : undefined,
        cpuSeconds: [...cpu.seconds].sort((a, b) => b[1] - a[1]),
        machineCpuSeconds: cpu.machineSeconds,
      };
    }

    const first = await rollout("bench", options.timeline === true);
    const second = await rollout("bench-2", false);
    await p.close();
    return { nodes, replicas, first, second, restarts };
  } finally {
    const exited = new Promise((r) => launcher.once("exit", r));
    launcher.kill("SIGTERM");
    await exited;
    logFile?.end();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export interface RequestCost {
  request: string;
  count: number;
  perSecond: number;
  /** The apiserver process's CPU time (user + system) per request, in milliseconds. */
  cpuMs: number;
}

/**
 * What each kind of request a pod costs takes of the apiserver's CPU, measured alone: an apiserver of
 * its own (no bus), 32 clients, `count` of each in turn — pod creates, their bindings, status writes
 * like the orchlet's (a GET, counted apart, then a PUT), events like kubelet's — and ConfigMap creates
 * as the plainest write. CPU is read from /proc before and after each kind.
 */
export async function podRequestCosts(
  apiserverPid: number,
  p: ReturnType<typeof pool>,
  count: number,
  concurrency: number,
): Promise<RequestCost[]> {
  const send = async (method: "GET" | "POST" | "PUT", path: string, body?: unknown): Promise<any> => {
    const res = await p.request({
      method,
      path,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const costs: RequestCost[] = [];
  const measure = async (request: string, n: number, one: (i: number) => Promise<unknown>) => {
    const cpu0 = cpuOf(apiserverPid) ?? 0;
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) await one(next++);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    costs.push({ request, count: n, perSecond: n / seconds, cpuMs: (((cpuOf(apiserverPid) ?? 0) - cpu0) * 1000) / n });
  };
  const ns = "/api/v1/namespaces/default";
  await measure("warm-up (ConfigMap creates)", 500, (i) => send("POST", `${ns}/configmaps`, { metadata: { name: `warm-${i}` } }));
  costs.length = 0;
  await measure("POST configmaps", count, (i) => send("POST", `${ns}/configmaps`, { metadata: { name: `c-${i}` }, data: { a: "b" } }));
  const pods: any[] = [];
  const spec = { containers: [{ name: "c", image: "nginx" }] };
  await measure("POST pods", count, async (i) => {
    pods[i] = await send("POST", `${ns}/pods`, { metadata: { generateName: "bench-", labels: { app: "bench" } }, spec });
  });
  await measure("POST pods/binding", count, (i) =>
    send("POST", `${ns}/pods/${pods[i].metadata.name}/binding`, {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: pods[i].metadata.name },
      target: { kind: "Node", name: `node-${i % 100}` },
    }),
  );
  await measure("GET pods", count, async (i) => {
    pods[i] = await send("GET", `${ns}/pods/${pods[i].metadata.name}`);
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  await measure("PUT pods/status (Running and Ready)", count, (i) => {
    const pod = pods[i];
    pod.status = {
      ...pod.status,
      phase: "Running",
      hostIP: "10.89.0.1",
      podIP: `10.244.${i >> 8}.${i & 255}`,
      startTime: now,
      qosClass: "BestEffort",
      conditions: ["PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled"].map((type) => ({
        type,
        status: "True",
        lastProbeTime: null,
        lastTransitionTime: now,
      })),
      containerStatuses: [
        {
          name: "c",
          state: { running: { startedAt: now } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: "nginx",
          imageID: "nginx@sha256:0",
          containerID: `containerd://${i}`,
          started: true,
        },
      ],
    };
    return send("PUT", `${ns}/pods/${pod.metadata.name}/status`, pod);
  });
  await measure("POST events", count, (i) =>
    send("POST", `${ns}/events`, {
      metadata: { name: `${pods[i].metadata.name}.${i.toString(16)}` },
      involvedObject: {
        kind: "Pod",
        namespace: "default",
        name: pods[i].metadata.name,
        uid: pods[i].metadata.uid,
        apiVersion: "v1",
        fieldPath: "spec.containers{c}",
      },
      reason: "Started",
      message: "Started container c",
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type: "Normal",
      reportingComponent: "kubelet",
      reportingInstance: "node-1",
    }),
  );
  return costs;
}
