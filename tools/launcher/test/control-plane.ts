// Starts the control plane exactly as the README says (`node tools/launcher/dist/main.mjs`, which
// `npm start` runs after building) in a fresh data directory, and drives the real kubectl against it.
import { natsConnectOptions } from "@orch/bus-access";
import { freePort } from "@orch/testing";
import type { ConnectionOptions } from "nats";
import { expect } from "vitest";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..", "..", "..");

export interface ControlPlane {
  dataDir: string;
  kubeconfig: string;
  /** The launcher's nats-server (`tls://…`), when it started one. */
  natsUrl: string | undefined;
  output: string[];
  launcher: ChildProcess;
  kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Starts kubectl and returns it running (for `get -w`). */
  spawnKubectl(...args: string[]): ChildProcess;
  stop(): Promise<number | null>;
}

/** `dataDir`: a data directory to start in (the test's to prepare and remove), instead of a fresh one. */
export async function startControlPlane(env: NodeJS.ProcessEnv = {}, options: { dataDir?: string } = {}): Promise<ControlPlane> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "orch-e2e-")));
  const cacheDir = join(dataDir, "kubectl-cache");
  const port = await freePort();
  const launcher = spawn(process.execPath, [join(root, "tools", "launcher", "dist", "main.mjs")], {
    env: { ...process.env, ORCH_DATA_DIR: dataDir, ORCH_PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  // Several apiservers start one after the other: more time than one.
  const readyTimeoutS = Number(env.ORCH_APISERVERS ?? 1) > 1 ? 60 : 20;
  const ready = new Promise<void>((res, rej) => {
    const onData = (chunk: Buffer) => {
      output.push(...chunk.toString().split("\n").filter(Boolean));
      if (output.some((l) => l.includes("control plane ready"))) res();
    };
    launcher.stdout!.on("data", onData);
    launcher.stderr!.on("data", onData);
    launcher.once("exit", (code) => rej(new Error(`launcher exited with ${code}:\n${output.join("\n")}`)));
    setTimeout(() => rej(new Error(`control plane not ready in ${readyTimeoutS} s:\n${output.join("\n")}`)), readyTimeoutS * 1000);
  });
  try {
    await ready;
  } catch (err) {
    launcher.kill("SIGTERM");
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
    throw err;
  }
  const kubeconfig = join(dataDir, "kubeconfig");
  const base = ["--kubeconfig", kubeconfig, "--cache-dir", cacheDir];
  return {
    dataDir,
    kubeconfig,
    natsUrl: /nats-server listening on (\S+)/.exec(output.join("\n"))?.[1],
    output,
    launcher,
    kubectl: (...args) =>
      new Promise((res) => {
        execFile("kubectl", [...base, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
          res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      }),
    spawnKubectl: (...args) => spawn("kubectl", [...base, ...args], { stdio: ["ignore", "pipe", "pipe"] }),
    async stop() {
      if (launcher.exitCode === null && launcher.signalCode === null) {
        const exited = new Promise((res) => launcher.once("exit", res));
        launcher.kill("SIGTERM");
        await exited;
      }
      const code = launcher.exitCode;
      // Removed now: a timer would not outlive the test worker. Tests that check no process runs from
      // the directory look for its path in `ps`, which needs no directory.
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
      return code;
    },
  };
}

/** A kubeconfig that knows the cluster but no user, so that `--token` is the only credential. */
export async function tokenOnlyKubeconfig(cp: ControlPlane): Promise<string> {
  const server = /server: (\S+)/.exec(await readFile(cp.kubeconfig, "utf8"))![1]!;
  const path = join(cp.dataDir, "anonymous.kubeconfig");
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: orch
  cluster:
    server: ${server}
    certificate-authority: ${join(cp.dataDir, "pki", "ca.crt")}
users:
- name: nobody
  user: {}
contexts:
- name: orch
  context: {cluster: orch, user: nobody, namespace: default}
current-context: orch
`,
  );
  return path;
}

/**
 * Options to connect to the control plane's NATS with one of the certificates in its `pki` directory
 * ("admin", "event-relay", "controllers/csr-signer"), or with any other certificate and key files.
 */
export function busAs(cp: ControlPlane, identity: string | { certFile: string; keyFile: string }): ConnectionOptions {
  const files =
    typeof identity === "string"
      ? { certFile: join(cp.dataDir, "pki", `${identity}.crt`), keyFile: join(cp.dataDir, "pki", `${identity}.key`) }
      : identity;
  return natsConnectOptions({ servers: cp.natsUrl!, caFile: join(cp.dataDir, "pki", "ca.crt"), ...files }, "orch-test");
}

/** Runs kubectl against `cp`, expects it to succeed without a word on stderr, and gives its output. */
export async function kubectlOk(cp: ControlPlane, ...args: string[]): Promise<string> {
  const out = await cp.kubectl(...args);
  expect(out.stderr).toBe("");
  expect(out.code).toBe(0);
  return out.stdout;
}
