// The launcher owns its children: however it ends — SIGKILL included, or a signal sent only to the
// `npm start` in front of it — no process it started keeps running.
import { eventually, freePort } from "@orch/testing";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startControlPlane } from "./control-plane.js";

const root = resolve(import.meta.dirname, "..", "..", "..");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Every process started for this data directory: they all inherit ORCH_DATA_DIR (nats-server too). */
function processesOf(dataDir: string): { pid: number; args: string }[] {
  const found: { pid: number; args: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, "utf8").includes(`ORCH_DATA_DIR=${dataDir}\0`)) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      if (args) found.push({ pid: Number(entry), args }); // a zombie has no command line: it is gone
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Kills what a failed test left, by pid, so that one failure does not leave a control plane running. */
function killAll(dataDir: string): void {
  for (const { pid } of processesOf(dataDir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

it("a SIGKILLed launcher leaves no process behind, nats-server included", async () => {
  const cp = await startControlPlane();
  cleanups.push(async () => {
    killAll(cp.dataDir);
    await rm(cp.dataDir, { recursive: true, force: true });
  });
  const started = processesOf(cp.dataDir).map((p) => p.args);
  expect(started.some((a) => a.includes("nats-server"))).toBe(true);
  expect(started.some((a) => a.includes("apps/apiserver/dist/main.mjs"))).toBe(true);
  expect(started.some((a) => a.includes("apps/csr-signer/dist/main.mjs"))).toBe(true);
  // The apiserver gets its malloc setting from the launcher: glibc reads it only when a process starts.
  const apiserver = processesOf(cp.dataDir).find((p) => p.args.includes("apps/apiserver/dist/main.mjs"));
  expect(readFileSync(`/proc/${apiserver!.pid}/environ`, "utf8")).toMatch(
    /(^|\0)GLIBC_TUNABLES=([^\0]*:)?glibc\.malloc\.mmap_threshold=65536[:\0]/,
  );

  cp.launcher.kill("SIGKILL");
  const left = await eventually("every child to exit", () => {
    const running = processesOf(cp.dataDir);
    return running.length === 0 ? running : undefined;
  });
  expect(left).toEqual([]);
});

it("SIGTERM to the `npm start` process alone stops every process behind it", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-npm-start-"));
  cleanups.push(async () => {
    killAll(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  });
  const npm = spawn("npm", ["start", "--silent"], {
    cwd: root,
    env: { ...process.env, ORCH_DATA_DIR: dataDir, ORCH_PORT: String(await freePort()) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  for (const stream of [npm.stdout!, npm.stderr!]) stream.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  await eventually("the control plane to be ready", () => output.join("").includes("control plane ready"), { timeoutMs: 60_000 });
  expect(processesOf(dataDir).some((p) => p.args.includes("nats-server"))).toBe(true);

  const exited = new Promise<number | null>((res) => npm.once("exit", (code) => res(code)));
  npm.kill("SIGTERM");
  await exited;
  await eventually("every process behind npm to exit", () => processesOf(dataDir).length === 0);
  expect(output.join("")).toContain("[launcher] stopping");
});
