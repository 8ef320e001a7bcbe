// What both client suites share: Debian's Python with its kubernetes package, and the apiserver child of a
// launcher (to kill it and watch the launcher restart it).
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Debian's interpreter: python3-kubernetes installs into its dist-packages, not into a pyenv python3. */
export const python = "/usr/bin/python3";
const script = join(import.meta.dirname, "compat.py");

/**
 * The Python client writes the kubeconfig's certificate and key to temp files it never removes: they go
 * into the control plane's data directory, which goes when it stops.
 */
const pythonEnv = (kubeconfig: string): NodeJS.ProcessEnv => ({ ...process.env, TMPDIR: dirname(kubeconfig) });

/** Runs one case of compat.py and returns the JSON it printed; a failed Python assertion fails with its trace. */
export function pythonCase(kubeconfig: string, name: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(python, [script, kubeconfig, name], { timeout: 60_000, env: pythonEnv(kubeconfig) }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`compat.py ${name} failed (${err.code ?? err.signal}):\n${stderr}${stdout}`));
      resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>);
    });
  });
}

/** Starts a long-running case (leader, watch_forever); `lines` collects what it prints. */
export function spawnPython(kubeconfig: string, ...args: string[]): { child: ChildProcess; lines: string[] } {
  const child = spawn(python, [script, kubeconfig, ...args], { stdio: ["ignore", "pipe", "pipe"], env: pythonEnv(kubeconfig) });
  const lines: string[] = [];
  child.stdout!.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
  child.stderr!.resume();
  return { child, lines };
}

/** Kills a child this test started, and waits for it to go. */
export async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((res) => child.once("exit", res));
  child.kill("SIGKILL");
  await gone;
}

/** The apiserver child of the control plane in `dataDir`: the node process whose environment names it. */
export function apiserverPid(dataDir: string): number | undefined {
  for (const line of execFileSync("ps", ["-eo", "pid,args"]).toString().split("\n")) {
    const m = /^\s*(\d+)\s+\S*node\S* \S*apps\/apiserver\/dist\/main\.mjs/.exec(line);
    if (!m) continue;
    try {
      if (readFileSync(`/proc/${m[1]}/environ`, "utf8").includes(`ORCH_DATA_DIR=${dataDir}\0`)) return Number(m[1]);
    } catch {
      // exited meanwhile
    }
  }
  return undefined;
}
