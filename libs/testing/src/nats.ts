// Starts a real nats-server with JetStream for tests, as nats.js's own tests do. Each call gets its own
// port and store directory; `stop` and `restart` act on that one child process only.
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, writeFileSync } from "node:fs";
import { type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "./ports.js";

export interface NatsServer {
  /** `nats://127.0.0.1:<port>` (`tls://` when the configuration has TLS) */
  url: string;
  port: number;
  /** The JetStream store directory: kept across `stop`/`restart`, removed when the test process ends. */
  storeDir: string;
  /** The running server's process id (e.g. to SIGSTOP it); undefined while stopped. */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM, SIGKILL after 5 s). Idempotent; `restart` can bring it back. */
  stop(): Promise<void>;
  /** Stops it if running, then starts it again on the same port with the same store directory. */
  restart(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

// Test runners may end a worker with a signal, so an "exit" handler is not enough to clean up. A tiny
// shell reads the running server's pid from a pipe; when the pipe closes because this process is gone,
// it kills that pid (if one is running) and removes the store directory.
const WATCHDOG = 'pid=; while read -r line; do pid=$line; done; [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$1"';

/** `nats-server` from PATH, else the Debian package's location. */
export function natsServerBinary(): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "nats-server");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return "/usr/sbin/nats-server";
}

export interface NatsServerOptions {
  /** The server's max_payload in bytes (nats-server's default is 1 MiB). */
  maxPayload?: number;
  /** More of the server's configuration file (e.g. a `tls` block and an `authorization` block). */
  config?: string;
}

export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const binary = natsServerBinary();
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), "orch-nats-"));
  // Settings without a command-line flag go in a config file inside the store directory.
  const configArgs: string[] = [];
  if (options.maxPayload !== undefined || options.config !== undefined) {
    const config = join(storeDir, "nats.conf");
    writeFileSync(config, `${options.maxPayload !== undefined ? `max_payload: ${options.maxPayload}\n` : ""}${options.config ?? ""}\n`);
    configArgs.push("-c", config);
  }
  let child: ChildProcess | undefined;

  const watchdog = spawn("/bin/sh", ["-c", WATCHDOG, "orch-nats-watchdog", storeDir], {
    stdio: ["pipe", "ignore", "ignore"],
  });
  watchdog.unref();
  const pipe = watchdog.stdin as Socket;
  pipe.on("error", () => undefined);
  pipe.unref();
  const tell = (pid: number | undefined): void => void pipe.write(`${pid ?? ""}\n`);

  const stop = async (): Promise<void> => {
    if (!child) return;
    await stopChild(child);
    tell(undefined);
  };

  const start = async (): Promise<void> => {
    const proc = spawn(binary, [...configArgs, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    child = proc;
    tell(proc.pid);
    let log = "";
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (chunk: string) => {
      log = (log + chunk).slice(-4000);
    });
    const exited = new Promise<never>((_, reject) => {
      proc.once("error", (e) => reject(new Error(`cannot run ${binary}: ${e.message}`)));
      proc.once("exit", (code, signal) => reject(new Error(`nats-server exited (${code ?? signal}):\n${log}`)));
    });
    exited.catch(() => undefined);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      // Ready when a client gets the server's INFO line; the listener opens after JetStream has recovered.
      if (await Promise.race([acceptsClients(port), exited])) return;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`nats-server did not accept connections on port ${port} within ${START_TIMEOUT_MS} ms:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  await start();
  return {
    url: `${options.config?.includes("tls") ? "tls" : "nats"}://127.0.0.1:${port}`,
    port,
    storeDir,
    get pid() {
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    stop,
    restart: async () => {
      await stop();
      await start();
    },
  };
}

/** True when a TCP client on the port receives the NATS `INFO` greeting. */
function acceptsClients(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("data", (data) => done(data.toString("utf8").startsWith("INFO ")));
  });
}

async function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
