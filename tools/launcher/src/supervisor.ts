// Runs one child process: prefixes its output, restarts it with backoff when it crashes or on request,
// and stops it (TERM, then KILL) on request.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { formatLine } from "@orch/log/format";

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Which output lines to show (all when absent). */
  show?: (line: string) => boolean;
}

const MAX_BACKOFF_MS = 30_000;
/** A run this long counts as healthy and resets the backoff. */
const STABLE_MS = 10_000;
const STOP_GRACE_MS = 5_000;

/**
 * On Linux a child is started through util-linux's `setpriv --pdeathsig SIGTERM`, which execs it with the
 * kernel's parent-death signal set: if the launcher dies, even by SIGKILL, every child gets SIGTERM. The
 * Node children also exit when their stdin pipe closes; nats-server has no such habit.
 */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => process.platform === "linux" && existsSync(p));

export class Supervised {
  private child: ChildProcess | undefined;
  private stopping = false;
  private backoffMs = 500;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly lineWaiters = new Set<(line: string) => void>();

  constructor(
    private readonly spec: ChildSpec,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    const started = Date.now();
    const [command, args] = SETPRIV
      ? [SETPRIV, ["--pdeathsig", "SIGTERM", this.spec.command, ...this.spec.args]]
      : [this.spec.command, this.spec.args];
    const child = spawn(command, args, {
      env: { ...this.spec.env, ORCH_SUPERVISED: "1" },
      // stdin stays an open pipe: children exit when it closes, so none outlives a killed launcher.
      stdio: ["pipe", "pipe", "pipe"],
      // Their own process group: Ctrl-C reaches only the launcher, which stops them in order.
      detached: true,
    });
    this.child = child;
    const prefix = `[${this.spec.name}]`;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on("line", (line) => {
        for (const waiter of this.lineWaiters) waiter(line);
        if (this.spec.show && !this.spec.show(line)) return;
        // The processes log JSON lines that name their source; they are printed as text.
        const text = formatLine(line);
        this.log(text === line ? `${prefix} ${line}` : text);
      });
    }
    child.on("error", (e) => this.log(`${prefix} failed to start: ${e.message}`));
    child.on("exit", (code, signal) => {
      this.child = undefined;
      if (this.stopping) return;
      if (Date.now() - started > STABLE_MS) this.backoffMs = 500;
      this.log(`${prefix} exited (${signal ?? `code ${code}`}); restarting in ${this.backoffMs} ms`);
      this.restartTimer = setTimeout(() => this.start(), this.backoffMs);
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    });
  }

  /** Ends the running child (TERM, then KILL); it is started again as after a crash. */
  restart(reason: string): void {
    const child = this.child;
    if (!child || this.stopping) return;
    this.log(`[${this.spec.name}] ${reason}: restarting it`);
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    child.once("exit", () => clearTimeout(timer));
  }

  /** Resolves when the child prints a line `match` accepts; rejects after `timeoutMs`. */
  waitForLine(match: (line: string) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = (line: string) => match(line) && finish();
      const timer = setTimeout(() => finish(new Error(`${this.spec.name}: no sign within ${timeoutMs} ms`)), timeoutMs);
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.lineWaiters.delete(waiter);
        if (error) reject(error);
        else resolve();
      };
      this.lineWaiters.add(waiter);
    });
  }

  /** Sends `signal` to the running child and resolves once it prints a line `done` accepts (e.g. that it reloaded). */
  signalAndWait(signal: NodeJS.Signals, done: (line: string) => boolean, timeoutMs = 5_000): Promise<void> {
    const child = this.child;
    if (!child) return Promise.reject(new Error(`${this.spec.name} is not running`));
    const answered = this.waitForLine(done, timeoutMs);
    child.kill(signal);
    return answered;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }
}
