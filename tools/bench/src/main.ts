// `npm run bench`: the apiserver's throughput, latency, list time, watch latency, start time and
// memory on this machine, against the ceiling of a minimal Hono + better-sqlite3 server.
import { apiserverEnvironment } from "@orch/apiserver/process-environment";
import { freePort, startNatsServer } from "@orch/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { type AdmissionFigures, admissionFigures } from "./admission.js";
import { type ConversionFigures, conversionFigures } from "./conversion.js";
import { authorizationLoad } from "./authorization.js";
import { runBaselineServer } from "./baseline.js";
import { eventRate, natsLatency } from "./events.js";
import { scheduling, startScheduler } from "./scheduling.js";
import { type InTurnResult, type LoadResult, type Tls, createNamespace, inTurn, percentile, pool, ratioInTurn, runLoad } from "./load.js";
import { MIXED_OBJECTS, type MixedResult, mixedByKind, mixedWorkload, prepareMixed } from "./mixed.js";
import { slowClientLatency } from "./slow-clients.js";
import { tokenLoad } from "./tokens.js";
import { type ControlPlaneFigures, controlPlaneStarts } from "./control-planes.js";
import { type PodFigures, type RolloutFigures, podFigures, podRequestCosts, stagePercents, stages } from "./pods.js";
import { type CrdFigures, crdFigures, median } from "./crds.js";
import { watcherFanout } from "./watchers.js";
import { type ReplicaFigures, replicaFigures } from "./replicas.js";
import { type ListFigures, TABLE_ACCEPT, listMedian, memoryFigures, rssAfterRestart, rssMiB, timeLists } from "./memory.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const quick = process.argv.includes("--quick");
const N = {
  creates: quick ? 2_000 : 20_000,
  gets: quick ? 5_000 : 50_000,
  list: quick ? 1_000 : 10_000,
  watchEvents: quick ? 200 : 1_000,
  stored: quick ? 10_000 : 100_000,
  starts: quick ? 1 : 5,
  tokens: quick ? 2_000 : 20_000,
  /** Requests of the mixed workload, run once beside few objects and once beside N.stored. */
  mixed: quick ? 5_000 : 30_000,
  /** Connections left with half-sent request headers while gets are measured. */
  slowClients: 500,
  /** Seconds of creates at 1,000/s for the NATS latency; creates for the events/s. */
  natsSeconds: quick ? 2 : 5,
  natsEvents: quick ? 3_000 : 20_000,
  /** HTTP watchers on one resource, and the creates each of them receives (at 20/s, then at 100/s). */
  watchers: quick ? 200 : 1_000,
  fanoutEvents: quick ? 100 : 300,
  /** Creates of each kind in the CRD comparison (a built-in kind, a custom resource with 20 rules). */
  crdCreates: quick ? 2_000 : 10_000,
  /** Simulated nodes and the replicas of the Deployment whose pods are timed to Ready. */
  podNodes: quick ? 20 : 100,
  podReplicas: quick ? 200 : 1_000,
  /** Creates of each path in the admission comparison (none, one policy, two webhooks). */
  admissionCreates: quick ? 2_000 : 10_000,
  /** Gets of each path in the conversion comparison (storage version, through the webhook). */
  conversionGets: quick ? 3_000 : 15_000,
};
const CONCURRENCY = 32;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Apiserver {
  origin: string;
  tls: Tls;
  /** The apiserver's own serving certificate, reused by the baseline server. */
  serving: { cert: string; key: string };
  child: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
}

async function startApiserver(
  dataDir: string,
  env: Record<string, string> = {},
  entry = join(root, "apps", "apiserver", "dist", "main.mjs"),
): Promise<Apiserver> {
  const port = await freePort();
  const kubeconfig = join(dataDir, "kubeconfig");
  // It appears when the apiserver is ready; one from an earlier run must not count.
  await rm(kubeconfig, { force: true });
  // In the environment the launcher gives it (its malloc setting among it), so that its memory is what `npm start`'s is.
  const child = spawn(process.execPath, [entry], {
    env: apiserverEnvironment({ ...process.env, ORCH_DATA_DIR: dataDir, ORCH_PORT: String(port), ...env }),
    stdio: "ignore",
  });
  while (!existsSync(kubeconfig)) await sleep(10);
  const pki = (f: string) => readFileSync(join(dataDir, "pki", f), "utf8");
  return {
    origin: `https://127.0.0.1:${port}`,
    tls: { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") },
    serving: { cert: pki("apiserver.crt"), key: pki("apiserver.key") },
    child,
    dataDir,
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const serviceAccount = (name: string) =>
  JSON.stringify({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, labels: { bench: "yes" } } });

const serviceAccounts = (namespace: string) => `/api/v1/namespaces/${namespace}/serviceaccounts`;

function createMany(p: ReturnType<typeof pool>, namespace: string, prefix: string, count: number, first = 0): Promise<LoadResult> {
  return postMany(p, serviceAccounts(namespace), prefix, count, first);
}

/** Creates of ServiceAccounts `<prefix>-<first + i>` in `collection`: orch's, or the baseline's `/items`. */
function postMany(p: ReturnType<typeof pool>, collection: string, prefix: string, count: number, first = 0): Promise<LoadResult> {
  return runLoad(
    count,
    CONCURRENCY,
    async (i) => {
      const res = await p.request({
        path: collection,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: serviceAccount(`${prefix}-${first + i}`),
      });
      await res.body.dump();
      return res.statusCode;
    },
    201,
  );
}

/** Gets of the objects `postMany` made as `sa-<i>` in `collection`, spread over them. */
function getMany(p: ReturnType<typeof pool>, count: number, created: number, collection = serviceAccounts("default")): Promise<LoadResult> {
  return runLoad(
    count,
    CONCURRENCY,
    async (i) => {
      const r = await p.request({ path: `${collection}/sa-${(i * 7919) % created}`, method: "GET" });
      await r.body.dump();
      return r.statusCode;
    },
    200,
  );
}

async function watchLatency(api: Apiserver, p: ReturnType<typeof pool>): Promise<{ p50: number; p99: number }> {
  await createNamespace(p, "watched");
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  const agent = new Agent({ connect: { ...api.tls } });
  const res = await request(`${api.origin}/api/v1/namespaces/watched/serviceaccounts?watch=true&resourceVersion=0`, { dispatcher: agent });
  let buffer = "";
  const done = new Promise<void>((resolveDone) => {
    res.body.on("data", (chunk: Buffer) => {
      const now = performance.now();
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const event = JSON.parse(buffer.slice(0, nl)) as { type: string; object: { metadata: { name: string } } };
        buffer = buffer.slice(nl + 1);
        const t0 = sent.get(event.object.metadata.name);
        if (event.type === "ADDED" && t0 !== undefined) latencies.push(now - t0);
        if (latencies.length === N.watchEvents) resolveDone();
      }
    });
  });
  await sleep(200);
  for (let i = 0; i < N.watchEvents; i++) {
    const name = `w-${i}`;
    sent.set(name, performance.now());
    const r = await p.request({
      path: "/api/v1/namespaces/watched/serviceaccounts",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: serviceAccount(name),
    });
    await r.body.dump();
    await sleep(2);
  }
  await done;
  res.body.destroy();
  await agent.close();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Time from spawning `command` until /readyz answers 200, over fresh data directories. */
async function coldStart(command: string, args: string[]): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < N.starts; run++) {
    const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-start-"));
    const port = await freePort();
    const agent = new Agent({ connect: { rejectUnauthorized: false } });
    const t0 = performance.now();
    const launcher = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ORCH_DATA_DIR: dataDir, ORCH_PORT: String(port) },
      stdio: "ignore",
      detached: true,
    });
    for (;;) {
      try {
        const r = await request(`https://127.0.0.1:${port}/readyz`, { dispatcher: agent });
        await r.body.dump();
        if (r.statusCode === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(5);
    }
    times.push(performance.now() - t0);
    const exited = new Promise((r) => launcher.once("exit", r));
    process.kill(-launcher.pid!, "SIGTERM");
    await exited;
    await sleep(300);
    await agent.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return times;
}

interface StartFigures {
  launcher: number[];
  npmStart: number[];
}

/** The launcher alone (after the build), then `npm start` with nothing to build: each N.starts times. */
async function startFigures(): Promise<StartFigures> {
  const launcher = await coldStart(process.execPath, [join(root, "tools", "launcher", "dist", "main.mjs")]);
  const npmStart = await coldStart("npm", ["start", "--silent"]);
  return { launcher, npmStart };
}

function startRows(s: StartFigures): Row[] {
  const summary = (times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    return `${fmt(percentile(sorted, 50), 0)} ms median of ${sorted.length} (${fmt(sorted[0]!, 0)}–${fmt(sorted.at(-1)!, 0)})`;
  };
  return [
    ["start until /readyz: the launcher (after the build)", summary(s.launcher), "≤ 500 ms"],
    ["start until /readyz: `npm start` (npm + build check + launcher)", summary(s.npmStart), "≤ 1,500 ms"],
  ];
}

function planeRows(planes: ControlPlaneFigures): Row[] {
  return [
    [
      "startControlPlane() (@orch/control-plane/testing) to a ready kubeconfig: no controllers / all",
      `${fmt(percentile(planes.none, 50), 0)} / ${fmt(percentile(planes.all, 50), 0)} ms median of ${planes.none.length}`,
      "≤ 1,000 / ≤ 1,500 ms",
    ],
    [
      "startControlPlane({ crds: [the Widget CRD, 20 CEL rules] }): the apiserver and the crd-controller, until it is Established",
      `${fmt(percentile(planes.crd, 50), 0)} ms median of ${planes.crd.length}`,
      "",
    ],
    [
      "one such control plane with every controller: RSS of all its processes; 8 started at once",
      `${fmt(planes.rssMiB, 0)} MiB; the 8 ready after ${fmt(planes.parallel.ms, 0)} ms`,
      "",
    ],
  ];
}

/** The baseline server (./baseline.ts) in a process of its own, serving `/items` as orch serves ServiceAccounts. */
interface Baseline {
  pool: ReturnType<typeof pool>;
  stop(): Promise<void>;
}

async function startBaseline(tls: Tls, serving: { cert: string; key: string }): Promise<Baseline> {
  const dir = await mkdtemp(join(tmpdir(), "orch-bench-baseline-"));
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--baseline-server", join(dir, "baseline.db")], {
    env: { ...process.env, BENCH_TLS: JSON.stringify({ ...serving, ca: tls.ca }) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((res) =>
    child.stdout!.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) res(Number(m[1]));
    }),
  );
  const p = pool(`https://127.0.0.1:${port}`, tls, CONCURRENCY);
  return {
    pool: p,
    async stop() {
      await p.close();
      const exited = new Promise((r) => child.once("exit", r));
      child.kill();
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Rounds of orch's and the baseline's creates and gets: many short ones, whose ratios vary less than three long ones'. */
const ROUNDS_IN_TURN = 9;

/**
 * orch's creates and gets beside the baseline's, measured in turn (`inTurn`): the ratios the targets
 * name then compare the two over the same minutes of a machine whose speed drifts, each warmed alike.
 */
async function createsAndGetsInTurn(
  p: ReturnType<typeof pool>,
  base: Baseline,
): Promise<{ creates: InTurnResult; gets: InTurnResult; created: number; base: { creates: InTurnResult; gets: InTurnResult } }> {
  await createMany(p, "default", "warm", 1000);
  await postMany(base.pool, "/items", "warm", 1000);
  const share = Math.ceil(N.creates / ROUNDS_IN_TURN);
  const creates = await inTurn(
    {
      orch: (round) => createMany(p, "default", "sa", share, round * share),
      baseline: (round) => postMany(base.pool, "/items", "sa", share, round * share),
    },
    ROUNDS_IN_TURN,
  );
  const created = ROUNDS_IN_TURN * share;
  const gets = await inTurn(
    {
      orch: () => getMany(p, Math.ceil(N.gets / ROUNDS_IN_TURN), created),
      baseline: () => getMany(base.pool, Math.ceil(N.gets / ROUNDS_IN_TURN), created, "/items"),
    },
    ROUNDS_IN_TURN,
  );
  return { creates: creates.orch, gets: gets.orch, created, base: { creates: creates.baseline, gets: gets.baseline } };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);
/** One line of a figures table: measure, result, target. */
type Row = [string, string, string];

/** The machine every table names in its heading. */
const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}`;

/** The CRD figures (crds.ts) on a launcher of their own: kubernetes profile, the crd-controller, no bus. */
async function crds(): Promise<CrdFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-crds-"));
  const plane = await startApiserver(
    dataDir,
    { ORCH_PROFILE: "kubernetes", ORCH_CONTROLLERS: "crd-controller", ORCH_NATS: "off" },
    join(root, "tools", "launcher", "dist", "main.mjs"),
  );
  const p = pool(plane.origin, plane.tls, CONCURRENCY);
  try {
    return await crdFigures(root, p, N.crdCreates, CONCURRENCY, Math.max(N.starts, 3));
  } finally {
    await p.close();
    await plane.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function crdRows(c: CrdFigures): Row[] {
  return [
    [
      `create → Established and served: the largest CRD of the corpus (${c.largest.file}, ${fmt(c.largest.bytes / 2 ** 20, 2)} MiB of YAML, ${c.largest.versions} version(s)), crd-controller running`,
      `${fmt(median(c.establish), 0)} ms median of ${c.establish.length} (${c.establish.map((x) => fmt(x, 0)).join(", ")})`,
      "",
    ],
    ["creates/s of a built-in kind (ServiceAccount, 32 clients), same run", rate(c.plain), ""],
    [
      "creates/s of a custom resource with 20 CEL rules (32 clients), same run",
      `${rate(c.withRules)}; ${fmt((100 * c.withRules.perSecond) / c.plain.perSecond, 0)} % of the built-in`,
      "",
    ],
  ];
}
/** The admission figures (admission.ts) on an apiserver of their own. */
async function admission(): Promise<AdmissionFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-admission-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, CONCURRENCY);
  try {
    return await admissionFigures(p, api.tls, api.serving, N.admissionCreates, CONCURRENCY);
  } finally {
    await p.close();
    await api.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function admissionRows(a: AdmissionFigures): Row[] {
  const share = (r: LoadResult) => `${fmt((100 * r.perSecond) / a.plain.perSecond, 0)} % of plain`;
  return [
    ["ConfigMap creates/s, no admission configured (32 clients; median of 3 rounds taken in turn with the two below)", rate(a.plain), ""],
    ["the same through one ValidatingAdmissionPolicy (CEL, one binding, Deny)", `${rate(a.policy)}; ${share(a.policy)}`, ""],
    [
      "the same through one mutating + one validating webhook (HTTPS, in the bench process)",
      `${rate(a.webhooks)}; ${share(a.webhooks)}`,
      "",
    ],
  ];
}

/** Creates, gets and the mixed workload again on an apiserver serving from two threads (ORCH_APISERVER_THREADS=2). */
async function twoThreads(): Promise<{ creates: LoadResult; gets: LoadResult; mixed: MixedResult }> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-threads-"));
  const api = await startApiserver(dataDir, { ORCH_APISERVER_THREADS: "2" });
  try {
    // The second thread serves a moment after the first wrote the kubeconfig: connections opened before
    // would all be the first's.
    const probe = pool(api.origin, api.tls, 1);
    for (;;) {
      const r = await probe.request({ path: "/metrics", method: "GET" });
      if (/^orch_apiserver_serving_threads 2$/m.test(await r.body.text())) break;
      await sleep(50);
    }
    await probe.close();
    const p = pool(api.origin, api.tls, CONCURRENCY);
    await createMany(p, "default", "warm", 1000);
    const creates = await createMany(p, "default", "sa", N.creates);
    const gets = await getMany(p, N.gets, N.creates);
    await p.close();
    const p64 = pool(api.origin, api.tls, 64);
    await prepareMixed(p64, "mixed");
    const mixed = await mixedWorkload(p64, "mixed", N.mixed);
    await p64.close();
    return { creates, gets, mixed };
  } finally {
    await api.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The conversion webhook figures (conversion.ts) on an apiserver of their own. */
async function conversion(): Promise<ConversionFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-conversion-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, CONCURRENCY);
  try {
    return await conversionFigures(p, api.tls, api.serving, N.conversionGets, CONCURRENCY);
  } finally {
    await p.close();
    await api.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function conversionRows(c: ConversionFigures): Row[] {
  return [
    ["custom resource gets/s in its storage version (32 clients; median of 3 rounds taken in turn with the one below)", rate(c.plain), ""],
    [
      "the same objects' gets/s in their other version, through the CRD's conversion webhook (HTTPS, in the bench process)",
      `${rate(c.webhook)}; ${fmt((100 * c.webhook.perSecond) / c.plain.perSecond, 0)} % of the storage version`,
      "",
    ],
  ];
}

const rate = (r: LoadResult) => `${fmt(r.perSecond, 0)} (p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms)`;
/** `r` in percent of `baseline`: round by round when the two were measured in turn. */
const percentOf = (r: LoadResult | InTurnResult, baseline: InTurnResult) =>
  fmt(100 * ("rounds" in r ? ratioInTurn(r, baseline) : r.perSecond / baseline.perSecond), 0);

/**
 * Every figure; with `apiOnly` (`npm run bench -- --api`) only the apiserver's own (issue 18's: creates,
 * gets, list, watch latency and fan-out, the mixed workload, memory) beside the baseline server, in a few minutes.
 */
async function main(apiOnly = false): Promise<void> {
  const unlessApiOnly = <T>(measure: () => Promise<T>): Promise<T | undefined> => (apiOnly ? Promise.resolve(undefined) : measure());
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, CONCURRENCY);

  const baseline = await startBaseline(api.tls, api.serving);
  const { creates, gets, created, base } = await createsAndGetsInTurn(p, baseline);
  await baseline.stop();

  await createNamespace(p, "listed");
  await createMany(p, "listed", "l", N.list);
  // The objects created, and the namespace's default ServiceAccount.
  const list = await timeLists(p, "listed", N.list + 1);
  const chunkedList = await timeLists(p, "listed", N.list + 1, KUBECTL_CHUNK);
  const tableList = await timeLists(p, "listed", N.list + 1, KUBECTL_CHUNK, TABLE_ACCEPT);

  const watch = await watchLatency(api, p);
  const fanout = await watcherFanout(api.origin, api.tls, p, N.watchers, N.fanoutEvents, 20, "fanout-20");
  const fanoutBusy = await watcherFanout(api.origin, api.tls, p, N.watchers, N.fanoutEvents, 100, "fanout-100");
  const tokens = await unlessApiOnly(() => tokenLoad(api.origin, api.tls, p, N.tokens, CONCURRENCY));
  const authz = await unlessApiOnly(() => authorizationLoad(api.origin, api.tls, p, N.gets, CONCURRENCY, 100));
  const slow = await unlessApiOnly(() =>
    slowClientLatency(api.origin, api.tls, p, "/api/v1/namespaces/default/serviceaccounts/sa-1", N.slowClients, N.gets / 10),
  );

  const p64 = pool(api.origin, api.tls, 64);
  await prepareMixed(p64, "mixed");
  const mixed = await mixedWorkload(p64, "mixed", N.mixed);

  const stored = 1000 + created + N.list + N.watchEvents + 2 * N.fanoutEvents;
  await createNamespace(p, "bulk");
  if (N.stored > stored) await createMany(p, "bulk", "b", N.stored - stored);
  const mixedFull = await mixedWorkload(p64, "mixed", N.mixed);
  await p64.close();
  const rssLoaded = rssMiB(api.child.pid!);
  await p.close();
  await api.stop();
  // After a restart: the memory a server holding that many objects needs to serve them.
  const rssRestarted = await restartApiserver(dataDir);
  await rm(dataDir, { recursive: true, force: true });
  const threads = await twoThreads();

  const events = await unlessApiOnly(natsFigures);
  const starts = await unlessApiOnly(startFigures);
  const planes = await unlessApiOnly(() => controlPlaneStarts(root, N.starts));
  const crd = await unlessApiOnly(crds);
  const adm = await unlessApiOnly(admission);
  const conv = await unlessApiOnly(conversion);
  const pods = await unlessApiOnly(() => podFigures(root, N.podNodes, N.podReplicas));

  const rows: Row[] = [
    [
      `creates/s (32 clients; median of ${ROUNDS_IN_TURN} rounds taken in turn with the baseline's)`,
      rate(creates),
      "≥ 70 % of the baseline's",
    ],
    ["gets/s (32 clients; the same)", rate(gets), "≥ 60 % of the baseline's"],
    listRow(list),
    listRow(chunkedList, KUBECTL_CHUNK),
    listRow(tableList, KUBECTL_CHUNK, "as Tables (`kubectl get`)"),
    ["create request → watch event", `p50 ${fmt(watch.p50)} ms, p99 ${fmt(watch.p99)} ms`, "p99 ≤ 5 ms"],
    ...[fanout, fanoutBusy].map(
      (f): Row => [
        `create request → watch event at each of ${f.watchers.toLocaleString("en")} HTTP watchers, ${f.events} creates at ${f.rate}/s`,
        `p50 ${fmt(f.p50)} ms, p99 ${fmt(f.p99)} ms (${f.deliveries.toLocaleString("en")} of ${(f.watchers * f.events).toLocaleString("en")} deliveries)`,
        f === fanoutBusy ? "p99 ≤ 100 ms" : "",
      ],
    ),
    ...(events ? natsRows(events) : []),
    ...[mixed, mixedFull].map(
      (m): Row => [
        `mixed: 70 % gets, 20 % updates, 10 % lists by label (1 % of ${MIXED_OBJECTS.toLocaleString("en")}), 64 clients${m === mixedFull ? `, beside ${N.stored.toLocaleString("en")} stored objects` : ""}`,
        mixedRow(m),
        "",
      ],
    ),
    ...(slow
      ? [
          [
            `a get (4 clients) alone, and while ${slow.slow} slow connections hold half-sent headers`,
            `p50 ${fmt(slow.alone.p50)} / p99 ${fmt(slow.alone.p99)} ms alone; p50 ${fmt(slow.besideSlow.p50)} / p99 ${fmt(slow.besideSlow.p99)} ms beside them`,
            "",
          ] as Row,
        ]
      : []),
    ...(tokens
      ? ([
          ["service account tokens issued/s (TokenRequest)", rate(tokens.issued), ""],
          ["token reviews/s, a new token each (signature verified)", rate(tokens.reviewsFresh), ""],
          ["token reviews/s, one token again (signature remembered)", rate(tokens.reviewsSame), ""],
          ["gets/s authenticated by a service account token", rate(tokens.requests), ""],
        ] as Row[])
      : []),
    ...(authz
      ? ([
          [`gets/s by a service account allowed by RBAC (${authz.bindings} other bindings)`, rate(authz.allowed), ""],
          [`requests/s denied by RBAC (403, ${authz.bindings} other bindings)`, rate(authz.denied), ""],
        ] as Row[])
      : []),
    ...(starts ? startRows(starts) : []),
    ...(planes ? planeRows(planes) : []),
    rssRow(N.stored, rssLoaded, rssRestarted),
    ...(crd ? crdRows(crd) : []),
    ...(adm ? admissionRows(adm) : []),
    ...(conv ? conversionRows(conv) : []),
    ...(pods ? podRows(pods) : []),
    ["creates/s (32 clients), 2 serving threads (ORCH_APISERVER_THREADS=2)", rate(threads.creates), ""],
    ["gets/s (32 clients), 2 serving threads", rate(threads.gets), ""],
    [`mixed, 64 clients, 2 serving threads`, mixedRow(threads.mixed), ""],
    [
      "baseline (Hono + better-sqlite3) creates/s",
      `${fmt(base.creates.perSecond, 0)} (p99 ${fmt(base.creates.p99)} ms); orch = ${percentOf(creates, base.creates)} % (median of the rounds' ratios), with 2 threads ${percentOf(threads.creates, base.creates)} %`,
      "orch ≥ 70 %",
    ],
    [
      "baseline (Hono + better-sqlite3) gets/s",
      `${fmt(base.gets.perSecond, 0)} (p99 ${fmt(base.gets.p99)} ms); orch = ${percentOf(gets, base.gets)} % (median of the rounds' ratios), with 2 threads ${percentOf(threads.gets, base.gets)} %`,
      "orch ≥ 60 %",
    ],
  ];
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [a, b, c] of rows) console.log(`| ${a} | ${b} | ${c} |`);
  const failed = (...results: ({ errors: number } | undefined)[]) => results.reduce((n, r) => n + (r?.errors ?? 0), 0);
  const errors = failed(
    creates,
    gets,
    fanout,
    events?.latency,
    tokens?.issued,
    tokens?.reviewsFresh,
    tokens?.reviewsSame,
    tokens?.requests,
    authz?.allowed,
    authz?.denied,
    mixed,
    mixedFull,
    threads.creates,
    threads.gets,
    threads.mixed,
    slow?.alone,
    slow?.besideSlow,
    base.creates,
    base.gets,
    crd?.plain,
    crd?.withRules,
    adm?.plain,
    adm?.policy,
    adm?.webhooks,
    conv?.plain,
    conv?.webhook,
  );
  if (errors > 0) console.log(`\n${errors} requests failed`);
}

/** Events on NATS: an apiserver of its own with the relay on, and a nats-server. */
async function natsFigures() {
  const nats = await startNatsServer();
  const natsDir = await mkdtemp(join(tmpdir(), "orch-bench-nats-"));
  const withNats = await startApiserver(natsDir, { ORCH_NATS_URL: nats.url });
  const p = pool(withNats.origin, withNats.tls, CONCURRENCY);
  await createMany(p, "default", "warm", 1000);
  const latency = await natsLatency(p, nats.url, 1_000, N.natsSeconds);
  const rate = await eventRate(p, nats, N.natsEvents, CONCURRENCY);
  await p.close();
  await withNats.stop();
  await nats.stop();
  await rm(natsDir, { recursive: true, force: true });
  return { latency, rate };
}

function natsRows({ latency, rate }: Awaited<ReturnType<typeof natsFigures>>): Row[] {
  return [
    [
      `commit → core NATS subscriber event at ${fmt(latency.sentPerSecond, 0)} creates/s for ${N.natsSeconds} s (the relay's Orch-Committed-At header)`,
      `p50 ${fmt(latency.commitP50)} ms, p99 ${fmt(latency.commitP99)} ms (${latency.events} events)`,
      "p99 ≤ 15 ms",
    ],
    [
      "the same from sending the create request (adds the HTTP request and its queueing)",
      `p50 ${fmt(latency.p50)} ms, p99 ${fmt(latency.p99)} ms`,
      "",
    ],
    [
      `events/s at a NATS subscriber during a burst of ${N.natsEvents.toLocaleString("en")} creates (32 clients)`,
      `${fmt(rate.burst, 0)} (creates ${fmt(rate.creates, 0)}/s)`,
      "",
    ],
    [
      `events/s the relay publishes a backlog into JetStream (${rate.backlogEvents.toLocaleString("en")} written while NATS was down)`,
      fmt(rate.backlog, 0),
      "",
    ],
  ];
}

/** Starts an apiserver again on `dataDir`: its RSS after the start and one list of every ServiceAccount. */
const restartApiserver = (dataDir: string) =>
  rssAfterRestart(
    () => startApiserver(dataDir),
    (api) => pool(api.origin, api.tls, 4),
  );

/** The page size kubectl asks for (`--chunk-size`'s default). */
const KUBECTL_CHUNK = 500;

function listRow(l: ListFigures, pageSize?: number, format = ""): Row {
  return [
    `list of ${N.list.toLocaleString("en")} objects${pageSize ? ` in pages of ${pageSize} (kubectl's chunks)${format ? ` ${format}` : ""}, all pages` : ""}`,
    `${fmt(listMedian(l))} ms median, ${fmt(l.times[0]!)} ms best (${fmt(l.bytes / 2 ** 20)} MiB)`,
    pageSize ? "" : "≤ 50 ms",
  ];
}

function rssRow(stored: number, loaded: number, restarted: number): Row {
  return [
    `apiserver RSS with ${stored.toLocaleString("en")} objects`,
    `${fmt(loaded, 0)} MiB after loading them, ${fmt(restarted, 0)} MiB after a restart and a list`,
    "≤ 300 MiB",
  ];
}

function mixedRow(m: MixedResult): string {
  const op = (o: keyof MixedResult["byOp"]) => `${o} p50 ${fmt(m.byOp[o].p50)} / p99 ${fmt(m.byOp[o].p99)} ms`;
  return `${fmt(m.perSecond, 0)} requests/s; ${op("get")}, ${op("update")}, ${op("list")}`;
}

/** `npm run bench -- --mixed-by-kind`: only the mixed workload's kinds of request, each alone. */
async function mixedKindsOnly(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, 64);
  await prepareMixed(p, "mixed");
  const kinds = await mixedByKind(p, "mixed", N.mixed / 10);
  console.log("| alone, 64 clients | per second | p50 / p99 |\n|---|---|---|");
  for (const [kind, r] of Object.entries(kinds)) console.log(`| ${kind} | ${fmt(r.perSecond, 0)} | ${fmt(r.p50)} / ${fmt(r.p99)} ms |`);
  await p.close();
  await api.stop();
  await rm(dataDir, { recursive: true, force: true });
}

function podRows(f: PodFigures): Row[] {
  const figures = (r: RolloutFigures) =>
    `${fmt(r.podsPerSecond, 0)} pods/s (all Ready after ${fmt(r.readyMs / 1000, 1)} s; Available after ${fmt(r.availableMs / 1000, 1)} s)`;
  const what = `pods created → Ready for a ${f.replicas.toLocaleString("en")}-replica Deployment over ${f.nodes} simulated nodes (scheduler + orchlet)`;
  return [
    [`${what}: the first after start`, figures(f.first), "≥ 500 pods/s"],
    [`${what}: a second one beside it`, figures(f.second), "≥ 500 pods/s"],
  ];
}

if (process.argv[2] === "--baseline-server") {
  // The baseline serves with the apiserver's certificate and asks for client certificates too.
  const tls = JSON.parse(process.env.BENCH_TLS ?? "{}") as Tls;
  runBaselineServer(process.argv[3]!, { key: tls.key, cert: tls.cert, ca: tls.ca });
} else if (process.argv.includes("--mixed-by-kind")) {
  await mixedKindsOnly();
} else if (process.argv.includes("--admission")) {
  // `npm run bench -- --admission`: only the admission figures.
  const a = await admission();
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [m, r, t] of admissionRows(a)) console.log(`| ${m} | ${r} | ${t} |`);
  const failed = a.plain.errors + a.policy.errors + a.webhooks.errors;
  if (failed > 0) console.log(`\n${failed} requests failed`);
} else if (process.argv.includes("--conversion")) {
  // `npm run bench -- --conversion`: only the conversion webhook figures.
  const c = await conversion();
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [m, r, t] of conversionRows(c)) console.log(`| ${m} | ${r} | ${t} |`);
  if (c.plain.errors + c.webhook.errors > 0) console.log(`\n${c.plain.errors + c.webhook.errors} requests failed`);
} else if (process.argv.includes("--scheduling")) {
  // `npm run bench -- --scheduling`: only the scheduler's figures.
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, CONCURRENCY);
  let scheduler: ChildProcess | undefined;
  const s = await scheduling(p, quick ? 300 : 1_000, quick ? 30 : 100, CONCURRENCY, () => {
    scheduler = startScheduler(join(root, "apps", "scheduler", "dist", "main.mjs"), dataDir);
  });
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  console.log(
    `| scheduler start → ${s.pods.toLocaleString("en")} pending pods bound onto ${s.nodes} Ready nodes | ${fmt(s.seconds)} s, ${fmt(s.boundPerSecond, 0)} pods bound/s; ${s.least}–${s.most} pods per node | — |`,
  );
  if (s.errors > 0) console.log(`\n${s.errors} creates failed`);
  scheduler?.kill("SIGTERM");
  await p.close();
  await api.stop();
  await rm(dataDir, { recursive: true, force: true });
} else if (process.argv.includes("--pod-requests")) {
  // `npm run bench -- --pod-requests`: the apiserver's CPU per request of each kind a pod costs, alone.
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, CONCURRENCY);
  const costs = await podRequestCosts(api.child.pid!, p, quick ? 300 : 1_000, CONCURRENCY);
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log(`| request (${CONCURRENCY} clients) | count | per second | apiserver CPU per request |\n|---|---|---|---|`);
  for (const c of costs) console.log(`| ${c.request} | ${c.count} | ${fmt(c.perSecond, 0)} | ${fmt(c.cpuMs, 2)} ms |`);
  await p.close();
  await api.stop();
  await rm(dataDir, { recursive: true, force: true });
} else if (process.argv.includes("--pods")) {
  // `npm run bench -- --pods`: only the pods figures.
  // `--timeline`: also when each pod was created, bound, Running and Ready (one more watch on the apiserver).
  const f = await podFigures(root, N.podNodes, N.podReplicas, { timeline: process.argv.includes("--timeline") });
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [a, b, t] of podRows(f)) console.log(`| ${a} | ${b} | ${t} |`);
  // Side by side: the first rollout, then the second.
  const rollouts = [f.first, f.second];
  const column = (pick: (r: RolloutFigures) => Map<string, number>, key: string, digits: number) =>
    rollouts.map((r) => fmt(pick(r).get(key) ?? 0, digits)).join(" | ");
  const requests = (r: RolloutFigures) => new Map(r.requestsPerPod);
  const keys = (pick: (r: RolloutFigures) => Map<string, number>) => [...new Set(rollouts.flatMap((r) => [...pick(r).keys()]))];
  const total = (pick: (r: RolloutFigures) => Map<string, number>) =>
    rollouts
      .map((r) =>
        fmt(
          [...pick(r).values()].reduce((sum, n) => sum + n, 0),
          2,
        ),
      )
      .join(" | ");
  console.log(`\n| apiserver requests per pod (verb, resource, code) | first | second |\n|---|---|---|`);
  for (const key of keys(requests)) console.log(`| ${key} | ${column(requests, key, 2)} |`);
  console.log(`| total | ${total(requests)} |`);
  const timeline = f.first.timeline;
  if (timeline) {
    console.log(`\n| stage of the first rollout (from a watch) | ${stagePercents.map((pc) => `${pc} % of pods`).join(" | ")} |`);
    console.log(`|---|${stagePercents.map(() => "---|").join("")}`);
    for (const s of stages) console.log(`| ${s} | ${timeline.stages[s].map((ms) => `${fmt(ms / 1000, 2)} s`).join(" | ")} |`);
    console.log(`\n| seconds after the create | ${stages.join(" | ")} |\n|---|${stages.map(() => "---|").join("")}`);
    for (const [i, counts] of timeline.perSecond.entries()) console.log(`| ${i + 1} | ${stages.map((s) => counts[s]).join(" | ")} |`);
  }
  const cpu = (r: RolloutFigures) => new Map(r.cpuSeconds);
  console.log(`\n| process | CPU seconds, create → all Ready: first | second |\n|---|---|---|`);
  for (const name of keys(cpu)) console.log(`| ${name} | ${column(cpu, name, 2)} |`);
  console.log(`| control plane, total | ${total(cpu)} |`);
  console.log(
    `| the whole machine (${cpus().length} cores × the time until Ready) | ${rollouts
      .map((r) => `${fmt(r.machineCpuSeconds, 2)} of ${fmt((cpus().length * r.readyMs) / 1000, 1)}`)
      .join(" | ")} |`,
  );
  if (f.restarts.length > 0) console.log(`\nRestarts and lost leases during the run:\n${f.restarts.join("\n")}`);
} else if (process.argv.includes("--replicas")) {
  // `npm run bench -- --replicas`: SQLite, PostgreSQL, and three PostgreSQL apiservers behind HAProxy.
  const r: ReplicaFigures = await replicaFigures({
    start: (dataDir, env) => startApiserver(dataDir, env),
    launcher: join(root, "tools", "launcher", "dist", "main.mjs"),
    freePort,
    creates: N.crdCreates,
    gets: N.crdCreates * 2,
    watchEvents: N.watchEvents,
    concurrency: CONCURRENCY,
  });
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log(`| configuration | ConfigMap creates/s (${CONCURRENCY} clients) | gets/s |\n|---|---|---|`);
  for (const run of r.runs) console.log(`| ${run.name} | ${rate(run.creates)} | ${rate(run.gets)} |`);
  console.log(
    `\nWatch latency, create sent through one replica until the event arrives: on another replica p50 ${fmt(r.crossReplica.p50)} ms, p99 ${fmt(r.crossReplica.p99)} ms; on the same replica p50 ${fmt(r.sameReplica.p50)} ms, p99 ${fmt(r.sameReplica.p99)} ms`,
  );
  const failed = r.runs.reduce((n, run) => n + run.creates.errors + run.gets.errors, 0);
  if (failed > 0) console.log(`\n${failed} requests failed`);
} else if (process.argv.includes("--memory")) {
  // `npm run bench -- --memory`: only the list and memory figures.
  const dataDir = await mkdtemp(join(tmpdir(), "orch-bench-"));
  const api = await startApiserver(dataDir);
  const p = pool(api.origin, api.tls, CONCURRENCY);
  const m = await memoryFigures({
    api,
    p,
    create: (namespace, prefix, count) => createMany(p, namespace, prefix, count),
    restart: () => restartApiserver(dataDir),
    listed: N.list,
    stored: N.stored,
  });
  await rm(dataDir, { recursive: true, force: true });
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [a, b, t] of [listRow(m.list), rssRow(m.stored, m.rssLoaded, m.rssRestarted)]) console.log(`| ${a} | ${b} | ${t} |`);
  const loading = m.bulkCreates ? `; loaded at ${rate(m.bulkCreates)} creates/s` : "";
  console.log(`\n${m.created.toLocaleString("en")} ServiceAccounts created, ${m.stored.toLocaleString("en")} stored${loading}`);
} else if (process.argv.includes("--crds")) {
  // `npm run bench -- --crds`: only the custom resource figures.
  const c = await crds();
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [a, b, t] of crdRows(c)) console.log(`| ${a} | ${b} | ${t} |`);
  if (c.plain.errors + c.withRules.errors > 0) console.log(`\n${c.plain.errors + c.withRules.errors} requests failed`);
} else if (process.argv.includes("--starts")) {
  // `npm run bench -- --starts`: only the start figures, the launcher's and the test API's.
  const s = await startFigures();
  const planes = await controlPlaneStarts(root, N.starts);
  console.log(`\nMachine: ${machine}${quick ? " (quick run)" : ""}\n`);
  console.log("| measure | result | target |\n|---|---|---|");
  for (const [a, b, t] of [...startRows(s), ...planeRows(planes)]) console.log(`| ${a} | ${b} | ${t} |`);
} else {
  await main(process.argv.includes("--api"));
}
