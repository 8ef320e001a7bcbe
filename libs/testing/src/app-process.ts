// Starts an app of this repository as a real process (its built bundle `apps/<name>/dist/main.mjs`),
// for tests that run controllers beside the apiserver process. stdin is a pipe, so under
// ORCH_SUPERVISED=1 the app exits when the test process is gone, however it ended.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export interface AppProcess {
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  /** What it printed so far (stdout and stderr, the last 50,000 characters). */
  output(): string;
  /** Resolves when a line of its output matches. */
  waitForOutput(match: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM (or the given signal) and waits for the exit; nothing when it has exited already. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export const appBundle = (name: string): string => join(repoRoot, "apps", name, "dist", "main.mjs");

export function startAppProcess(name: string, env: Record<string, string | undefined>): AppProcess {
  const bundle = appBundle(name);
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`node tools/build.mjs apps/${name}\` first`);
  const child = spawn(process.execPath, [bundle], {
    env: { ...process.env, ORCH_SUPERVISED: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin?.on("error", () => undefined);
  let log = "";
  const waiters = new Set<() => void>();
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-50_000);
    for (const w of waiters) w();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    child,
    get pid() {
      return child.pid;
    },
    output: () => log,
    waitForOutput: (match, timeoutMs = 30_000) =>
      new Promise<void>((res, rej) => {
        const check = () => {
          if (!match.test(log)) return;
          waiters.delete(check);
          clearTimeout(timer);
          res();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          rej(new Error(`${name} did not print ${match} within ${timeoutMs} ms:\n${log}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        await exited;
      }
    },
  };
}
