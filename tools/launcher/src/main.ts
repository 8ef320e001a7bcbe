// `npm start`: NATS (unless ORCH_NATS_URL is set), the apiserver and every controller app, each its
// own process with the environment of the contract. Ctrl-C or SIGTERM stops them all.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { chmod, mkdir, rm } from "node:fs/promises";
import { createServer, connect } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { watchJetStream } from "./jetstream-watchdog.js";
import { Supervised } from "./supervisor.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const started = Date.now();
const log = (line: string) => process.stdout.write(`${line}\n`);

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((res) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), res(true)));
    s.once("error", () => res(false));
  });

function findNatsServer(): string {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/bin"]) {
    const candidate = join(dir, "nats-server");
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new Error("nats-server not found on PATH (install it, e.g. `apt-get install nats-server`, or set ORCH_NATS_URL)");
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

/** Controller apps: every app with a built entry point, apart from the apiserver. */
function controllerApps(): string[] {
  return readdirSync(join(root, "apps"))
    .filter((name) => name !== "apiserver" && existsSync(join(root, "apps", name, "dist", "main.mjs")))
    .sort();
}

async function main(): Promise<void> {
  const dataDir = resolve(process.env.ORCH_DATA_DIR || ".orch");
  // What the control plane writes (database, keys, the NATS store with every event) is this user's
  // alone: the processes started here inherit the mask, and the directory is closed to others.
  process.umask(0o077);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const env: NodeJS.ProcessEnv = { ...process.env, ORCH_DATA_DIR: dataDir };
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

  if (!env.ORCH_NATS_URL) {
    const port = await freePort();
    // Room for the largest object the apiserver accepts (3 MiB) in one event; larger ones would be sent
    // as their identity only (see libs/event-relay busEnvelope).
    const config = join(dataDir, "nats.conf");
    writeFileSync(config, "max_payload: 4MB\n");
    // A nats-server of an earlier run that outlived its launcher (where no parent-death signal exists)
    // still holds the store: it goes first.
    const pidFile = join(dataDir, "nats.pid");
    await reapEarlierRun(pidFile, "nats-server");
    const nats = new Supervised(
      {
        name: "nats",
        command: findNatsServer(),
        args: ["-c", config, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", join(dataDir, "nats"), "-P", pidFile],
        env,
        // nats-server's banner is noise here; its warnings and errors are not.
        show: (line) => !line.includes("[INF]"),
      },
      log,
    );
    children.push(nats);
    nats.start();
    env.ORCH_NATS_URL = `nats://127.0.0.1:${port}`;
    await waitFor(() => accepts(port), "nats-server");
    log(`[launcher] nats-server listening on ${env.ORCH_NATS_URL}`);
    const watchdog = await watchJetStream(env.ORCH_NATS_URL, () => nats.restart("JetStream stopped answering"));
    stoppers.push(() => watchdog.stop());
  }

  // The kubeconfig appears when the apiserver is ready; a stale one must not be mistaken for that.
  const kubeconfig = join(dataDir, "kubeconfig");
  await rm(kubeconfig, { force: true });
  const apiserver = new Supervised(
    { name: "apiserver", command: process.execPath, args: [join(root, "apps", "apiserver", "dist", "main.mjs")], env },
    log,
  );
  children.push(apiserver);
  apiserver.start();
  await waitFor(() => existsSync(kubeconfig), "the apiserver");

  // Each controller finds its own identity in the data directory (controllers/<app>.kubeconfig); a
  // KUBECONFIG of the user's environment would send it to another cluster, or as another user.
  const { KUBECONFIG: _userKubeconfig, ...controllerEnv } = env;
  for (const name of controllerApps()) {
    const child = new Supervised(
      { name, command: process.execPath, args: [join(root, "apps", name, "dist", "main.mjs")], env: controllerEnv },
      log,
    );
    children.push(child);
    child.start();
  }
  log(`[launcher] control plane ready in ${Date.now() - started} ms`);
  log(`[launcher] kubectl --kubeconfig ${kubeconfig} get namespaces`);
}

main().catch((e: Error) => {
  log(`[launcher] ${e.message}`);
  process.exit(1);
});
