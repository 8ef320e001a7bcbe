// `npm start`: NATS (unless ORCH_NATS_URL is set), the apiserver and every controller app, each its
// own process with the environment of the contract. Ctrl-C or SIGTERM stops them all.
import { apiserverEnvironment } from "@orch/apiserver/process-environment";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { chmod, mkdir, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { answersReady, apiserverReplicasFromEnv, haproxyConfig } from "./apiserver-replicas.js";
import { natsClusterSize } from "./nats-config.js";
import { Supervised } from "./supervisor.js";
import { waitFor } from "./wait-for.js";

const here = dirname(fileURLToPath(import.meta.url));
const started = Date.now();
const log = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Ports this launcher has handed out, the apiserver's among them: a port is free again once probed, so
 * the kernel may offer the same one twice (it gave NATS the port a test harness had just chosen for the
 * apiserver, which then took it first; NATS never started).
 */
const handedOut = new Set<number>([Number(process.env.ORCH_PORT || 6443)]);

/** A port nothing listens on now and this launcher has not handed out before. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function probePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

/** A program on the PATH, or in the system directories Debian installs servers into. */
function findProgram(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/bin"]) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Where the processes' bundles are: beside the launcher in the orch package (`apiserver/main.mjs`,
 * `controllers/<name>/main.mjs`), or in this repository's `apps/<name>/dist/main.mjs`.
 */
function bundles(): { apiserver: string; controllers: Map<string, string> } {
  if (existsSync(join(here, "apiserver", "main.mjs"))) {
    const dir = join(here, "controllers");
    const names = readdirSync(dir).filter((name) => existsSync(join(dir, name, "main.mjs")));
    return {
      apiserver: join(here, "apiserver", "main.mjs"),
      controllers: new Map(names.map((name) => [name, join(dir, name, "main.mjs")])),
    };
  }
  const apps = resolve(here, "..", "..", "..", "apps");
  const built = (name: string) => join(apps, name, "dist", "main.mjs");
  const names = readdirSync(apps).filter((name) => name !== "apiserver" && existsSync(built(name)));
  return { apiserver: built("apiserver"), controllers: new Map(names.map((name) => [name, built(name)])) };
}

/** The controllers ORCH_CONTROLLERS selects: `all` (unset), `none`, or a comma-separated list of names. */
function selectControllers(available: Map<string, string>, setting: string | undefined): [string, string][] {
  const value = (setting ?? "").trim();
  // By code point: localeCompare's first call loads ICU's collation data, about 10 ms before the apiserver starts.
  if (value === "" || value === "all") return [...available].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (value === "none") return [];
  return value.split(",").map((name) => {
    const entry = available.get(name.trim());
    if (!entry)
      throw new Error(`ORCH_CONTROLLERS names ${JSON.stringify(name.trim())}; the controllers are ${[...available.keys()].join(", ")}`);
    return [name.trim(), entry];
  });
}

/** Apps that run once whatever ORCH_CONTROLLER_REPLICAS says: the simulated node agents. */
const NOT_REPLICATED = new Set(["orchlet"]);

/** ORCH_CONTROLLER_REPLICAS: processes per controller app, 1 unless set. */
function controllerReplicas(setting: string | undefined): number {
  if (setting === undefined || setting.trim() === "") return 1;
  const n = Number(setting);
  if (!Number.isInteger(n) || n < 1 || n > 10)
    throw new Error(`ORCH_CONTROLLER_REPLICAS must be a whole number from 1 to 10, not ${JSON.stringify(setting)}`);
  return n;
}

/** Kills the process a pid file names if it is still that program (a pid may have been reused), and waits. */
async function reapEarlierRun(pidFile: string, program: string): Promise<void> {
  const pid = Number(existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() : Number.NaN);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const running = () => {
    try {
      return execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8" }).includes(program);
    } catch {
      return false; // ps exits 1 when there is no such process
    }
  };
  if (!running()) return;
  log(`[launcher] stopping ${program} (pid ${pid}) left running by an earlier launcher`);
  process.kill(pid, "SIGKILL");
  await waitFor(() => !running(), `${program} of an earlier run to exit`, 5_000);
}

async function main(): Promise<void> {
  const dataDir = resolve(process.env.ORCH_DATA_DIR || ".orch");
  // What the control plane writes (database, keys, the NATS store with every event) is this user's
  // alone: the processes started here inherit the mask, and the directory is closed to others.
  process.umask(0o077);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const env: NodeJS.ProcessEnv = { ...process.env, ORCH_DATA_DIR: dataDir };
  // ORCH_CPU_PROFILE_DIR: every Node process of the control plane writes a V8 CPU profile there when it
  // stops (one per thread), to find where a workload's time goes (docs/benchmarks.md).
  const profileDir = process.env.ORCH_CPU_PROFILE_DIR ? resolve(process.env.ORCH_CPU_PROFILE_DIR) : undefined;
  const profiling = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const children: Supervised[] = [];
  const stoppers: (() => Promise<void>)[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log("[launcher] stopping");
    for (const stop of stoppers) await stop();
    // Controllers first, then the apiserver, then NATS.
    for (const child of [...children].reverse()) await child.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void stopAll(0));
  process.on("SIGTERM", () => void stopAll(0));
  // Whoever started the launcher (npm, a service manager, a test) may die without a signal to spare:
  // the launcher is then re-parented, and stops everything as if told to.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && void stopAll(0), 1000).unref();

  // The event bus: the launcher's own nats-server unless ORCH_NATS_URL names one. Ours takes only TLS
  // clients with a certificate from the cluster CA, each mapped to its user and to what RBAC lets that
  // user watch (docs/security.md). The apiserver makes the certificates and the authorization file, so
  // it starts first; its relay connects once NATS is up.
  const pki = join(dataDir, "pki");
  // ORCH_APISERVERS=N: N apiservers on one PostgreSQL database behind HAProxy (./apiserver-replicas.ts).
  const apiservers = apiserverReplicasFromEnv(env);
  const haproxyBinary = apiservers ? findProgram("haproxy") : undefined;
  if (apiservers && !haproxyBinary) throw new Error("ORCH_APISERVERS above 1 needs haproxy on the PATH (Debian: apt-get install haproxy)");
  const { apiserver: apiserverBundle, controllers: available } = bundles();
  const controllers = selectControllers(available, env.ORCH_CONTROLLERS);
  // ORCH_NATS=off, or no nats-server to run: no bus; controllers watch over HTTPS.
  const natsServer = env.ORCH_NATS_URL || env.ORCH_NATS === "off" ? undefined : findProgram("nats-server");
  if (!env.ORCH_NATS_URL && !natsServer) {
    log(
      `[launcher] no event bus (${env.ORCH_NATS === "off" ? "ORCH_NATS=off" : "no nats-server on the PATH"}): controllers watch over HTTPS, nothing is published on NATS`,
    );
  }
  const ownBus = natsServer !== undefined;
  const busAuthorizationFile = join(dataDir, "nats-authorization.conf");
  const natsNodes = ownBus ? natsClusterSize(env.ORCH_NATS_CLUSTER) : 0;
  const natsPorts: number[] = [];
  for (let i = 0; i < natsNodes; i++) natsPorts.push(await freePort());
  const busCredentials = (cert: string): NodeJS.ProcessEnv =>
    ownBus ? { ORCH_NATS_CA_FILE: join(pki, "ca.crt"), ORCH_NATS_CERT_FILE: `${cert}.crt`, ORCH_NATS_KEY_FILE: `${cert}.key` } : {};
  if (ownBus) {
    env.ORCH_NATS_URL = natsPorts.map((port) => `tls://127.0.0.1:${port}`).join(",");
    // In a cluster the event stream is kept on three servers, so that it survives the loss of one.
    if (natsNodes > 1) env.ORCH_EVENTS_REPLICAS ||= "3";
    // A nats-server of an earlier run that outlived its launcher (where no parent-death signal exists)
    // still holds the store: it goes first.
    for (const pidFile of ["nats.pid", ...[1, 2, 3, 4, 5].map((i) => `nats-${i}.pid`)]) {
      await reapEarlierRun(join(dataDir, pidFile), "nats-server");
    }
  }

  // The kubeconfig appears when the apiserver is ready; a stale one must not be mistaken for that.
  const kubeconfig = join(dataDir, "kubeconfig");
  await rm(kubeconfig, { force: true });
  const apiserverEnv = apiserverEnvironment({
    ...env,
    ...busCredentials(join(pki, "event-relay")),
    ...(ownBus ? { ORCH_NATS_AUTHORIZATION_FILE: busAuthorizationFile } : {}),
  });
  if (!apiservers) {
    const apiserver = new Supervised(
      { name: "apiserver", command: process.execPath, args: [...profiling, apiserverBundle], env: apiserverEnv },
      log,
    );
    children.push(apiserver);
    apiserver.start();
    await waitFor(() => existsSync(kubeconfig), "the apiserver");
  } else {
    // HAProxy first, on the one address clients use; then the first replica, which makes the CA, keys
    // and credentials in the data directory, alone; then the others, which find them there.
    const backends = await Promise.all(
      Array.from({ length: apiservers.count }, async (_, i) => ({ name: `apiserver-${i + 1}`, port: await freePort() })),
    );
    const haproxyFile = join(dataDir, "haproxy.cfg");
    writeFileSync(haproxyFile, haproxyConfig(apiservers, backends));
    // -db: in the foreground, under the supervisor, logging to stderr.
    const haproxy = new Supervised({ name: "haproxy", command: haproxyBinary!, args: ["-db", "-f", haproxyFile], env }, log);
    children.push(haproxy);
    haproxy.start();
    for (const [i, backend] of backends.entries()) {
      const child = new Supervised(
        {
          name: backend.name,
          command: process.execPath,
          args: [...profiling, apiserverBundle],
          env: { ...apiserverEnv, ORCH_PORT: String(backend.port), ORCH_BIND: "127.0.0.1", ORCH_EXTERNAL_URL: apiservers.externalUrl },
        },
        log,
      );
      children.push(child);
      child.start();
      if (i === 0) await waitFor(() => existsSync(kubeconfig), backend.name);
    }
    const caFile = join(pki, "ca.crt");
    await Promise.all(backends.map((b) => waitFor(() => answersReady("127.0.0.1", b.port, caFile), b.name)));
    // And through HAProxy, as clients will.
    await waitFor(() => answersReady(apiservers.localHost, apiservers.port, caFile), "HAProxy");
    log(
      `[launcher] ${apiservers.count} apiservers behind HAProxy on ${apiservers.externalUrl}: ${backends
        .map((b, i) => `${b.name} on 127.0.0.1:${b.port} (pid ${children[children.length - backends.length + i]!.pid})`)
        .join(", ")}`,
    );
  }

  if (ownBus) {
    const routePorts: number[] = [];
    if (natsNodes > 1) for (let i = 0; i < natsNodes; i++) routePorts.push(await freePort());
    // Loaded only now (see ./event-bus.ts): the apiserver has not waited for the NATS client's code.
    const { startEventBus } = await import("./event-bus.js");
    await startEventBus(
      {
        natsServer,
        dataDir,
        pki,
        url: env.ORCH_NATS_URL!,
        clientPorts: natsPorts,
        routePorts,
        authorizationFile: busAuthorizationFile,
        env,
      },
      // Stopped last, after the controllers and the apiserver.
      (servers) => children.unshift(...servers),
      (bus) => stoppers.push(() => bus.stop()),
      log,
    );
  }

  // Each controller finds its own identity in the data directory (controllers/<app>.kubeconfig); a
  // KUBECONFIG of the user's environment would send it to another cluster, or as another user.
  const { KUBECONFIG: _userKubeconfig, ...controllerEnv } = env;
  const replicas = controllerReplicas(env.ORCH_CONTROLLER_REPLICAS);
  for (const [name, bundle] of controllers) {
    // An app without a bus identity of its own (one the apiserver does not know) watches over HTTPS.
    const identity = join(pki, "controllers", name);
    const childEnv =
      ownBus && !existsSync(`${identity}.crt`)
        ? { ...controllerEnv, ORCH_NATS_URL: "" }
        : { ...controllerEnv, ...busCredentials(identity) };
    // Replicas of one app share its identity and compete for its Lease: one leads, the others wait. The
    // orchlet holds no Lease to compete for: its nodes are its own, and a second one would run them twice.
    const count = NOT_REPLICATED.has(name) ? 1 : replicas;
    for (let replica = 1; replica <= count; replica++) {
      const child = new Supervised(
        { name: count > 1 ? `${name}-${replica}` : name, command: process.execPath, args: [...profiling, bundle], env: childEnv },
        log,
      );
      children.push(child);
      child.start();
    }
  }
  log(`[launcher] control plane ready in ${Date.now() - started} ms`);
  log(`[launcher] kubectl --kubeconfig ${kubeconfig} get namespaces`);
}

main().catch((e: Error) => {
  log(`[launcher] ${e.message}`);
  process.exit(1);
});
