// Starts the real apiserver as a child process (the built bundle apps/apiserver/dist/main.mjs), for tests
// of libraries that must not import apps. Each call gets its own data directory and port; `stop`,
// `kill` and `restart` act on that one child process only.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { get as httpsGet } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./ports.js";

export interface ApiserverProcess {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  dataDir: string;
  /** `$dataDir/kubeconfig`: cluster CA, server URL and the cluster-admin client certificate. */
  kubeconfigPath: string;
  pid: number | undefined;
  /** SIGTERM (SIGKILL after 5 s). Idempotent; keeps the data directory so `restart` can bring it back. */
  stop(): Promise<void>;
  /** Ends the process with a signal at once (e.g. SIGKILL to test crash recovery). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Stops it if running, then starts it again on the same port and data directory. */
  restart(): Promise<void>;
  /** Stops it and removes the data directory. */
  dispose(): Promise<void>;
}

export interface ApiserverProcessOptions {
  /** `ORCH_NATS_URL`; without it the apiserver publishes no events. */
  natsUrl?: string;
  /** More environment (e.g. `ORCH_HISTORY_REVISIONS`). */
  env?: Record<string, string>;
  /**
   * Another apiserver's data directory, to run as a replica beside it (same CA, keys and credentials; with
   * ORCH_STORAGE, the same database). Readiness is then this process's `/readyz`, not the kubeconfig
   * (which the first one wrote), and `dispose` leaves the directory to its owner.
   */
  sharedDataDir?: string;
}

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const apiserverBundle = join(repoRoot, "apps", "apiserver", "dist", "main.mjs");

/** Builds the bundles (`node tools/build.mjs`) when the apiserver's is missing. `npm test` builds first. */
function ensureBundle(): void {
  if (existsSync(apiserverBundle)) return;
  const r = spawnSync(process.execPath, [join(repoRoot, "tools", "build.mjs")], { cwd: repoRoot, stdio: "inherit" });
  if (r.status !== 0 || !existsSync(apiserverBundle)) throw new Error(`building ${apiserverBundle} failed`);
}

// Data directories of servers not yet disposed: removed when the test process exits normally (a killed
// worker leaves them in the temp directory; the apiserver itself still exits, see ORCH_SUPERVISED).
const leftovers = new Set<string>();
process.once("exit", () => {
  for (const dir of leftovers) rmSync(dir, { recursive: true, force: true });
});

export async function startApiserverProcess(options: ApiserverProcessOptions = {}): Promise<ApiserverProcess> {
  ensureBundle();
  const port = await freePort();
  const shared = options.sharedDataDir !== undefined;
  const dataDir = options.sharedDataDir ?? mkdtempSync(join(tmpdir(), "orch-apiserver-"));
  if (!shared) leftovers.add(dataDir);
  const kubeconfigPath = join(dataDir, "kubeconfig");
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    // The kubeconfig is written last at startup: its appearance is the readiness signal, so a stale one
    // from the previous run must go first.
    if (!shared) rmSync(kubeconfigPath, { force: true });
    const proc = spawn(process.execPath, [apiserverBundle], {
      cwd: dataDir,
      env: {
        ...process.env,
        ORCH_DATA_DIR: dataDir,
        ORCH_PORT: String(port),
        ORCH_BIND: "127.0.0.1",
        ORCH_NATS_URL: options.natsUrl ?? "",
        // Under supervision the apiserver exits when its stdin closes, i.e. when this test process is
        // gone, however it ended: no orphan survives a killed test worker.
        ORCH_SUPERVISED: "1",
        ...options.env,
      },
      stdio: ["pipe", "ignore", "pipe"],
    });
    child = proc;
    proc.stdin?.on("error", () => undefined);
    let log = "";
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (chunk: string) => {
      log = (log + chunk).slice(-8000);
    });
    const exited = new Promise<never>((_, reject) => {
      proc.once("error", (e) => reject(new Error(`cannot run the apiserver: ${e.message}`)));
      proc.once("exit", (code, signal) => reject(new Error(`apiserver exited (${code ?? signal}):\n${log}`)));
    });
    exited.catch(() => undefined);
    const deadline = Date.now() + START_TIMEOUT_MS;
    const ready = shared ? () => answersReady(port, dataDir) : async () => existsSync(kubeconfigPath);
    while (!(await ready())) {
      if (Date.now() > deadline) {
        await stopChild(proc, "SIGKILL");
        throw new Error(`the apiserver wrote no kubeconfig within ${START_TIMEOUT_MS} ms:\n${log}`);
      }
      await Promise.race([new Promise((r) => setTimeout(r, 20)), exited]);
    }
  };

  const stop = async (signal: NodeJS.Signals = "SIGTERM"): Promise<void> => {
    if (child) await stopChild(child, signal);
  };

  try {
    await start();
  } catch (e) {
    // Nobody gets a server to dispose: its directory goes now (a test runner's worker may never exit).
    if (!shared) {
      rmSync(dataDir, { recursive: true, force: true });
      leftovers.delete(dataDir);
    }
    throw e;
  }
  const server: ApiserverProcess = {
    url: `https://127.0.0.1:${port}`,
    port,
    dataDir,
    kubeconfigPath,
    get pid() {
      return child?.pid;
    },
    stop: () => stop(),
    kill: (signal = "SIGKILL") => stop(signal),
    restart: async () => {
      await stop();
      await start();
    },
    dispose: async () => {
      await stop();
      if (shared) return;
      rmSync(dataDir, { recursive: true, force: true });
      leftovers.delete(dataDir);
    },
  };
  return server;
}

/** Whether the apiserver on `port` answers its `/readyz` with 200 (trusting the data directory's CA). */
function answersReady(port: number, dataDir: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = httpsGet(
      { host: "127.0.0.1", port, path: "/readyz", ca: readFileSync(join(dataDir, "pki", "ca.crt")), timeout: 1000 },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    request.on("error", () => resolve(false));
    request.on("timeout", () => request.destroy());
  });
}

async function stopChild(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
