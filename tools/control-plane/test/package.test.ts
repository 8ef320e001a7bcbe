// The @orch/control-plane package as a user gets it: `npm pack`, installed from the tarball into a copy
// of examples/greeting-controller (which imports nothing of this repository), whose own tests (vitest and
// node:test) then run against throw-away control planes; the `orch` command; control planes in parallel;
// and nothing left behind.
import { execFile, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..", "..", "..");
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), "orch-package-"));
const project = join(work, "greeting-controller");

/** Processes running anything from the installed package. */
const packageProcesses = () =>
  execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(join(project, "node_modules", "@orch", "control-plane")));

beforeAll(async () => {
  await run("npm", ["pack", "-w", "tools/control-plane", "--pack-destination", work], { cwd: root });
  const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"))!;
  cpSync(join(root, "examples", "greeting-controller"), project, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
  manifest.devDependencies["@orch/control-plane"] = `file:${join(work, tarball)}`;
  writeFileSync(join(project, "package.json"), JSON.stringify(manifest, null, 2));
  // Install scripts are skipped: better-sqlite3's would download its prebuilt binary from GitHub, which
  // this machine cannot reach (or compile it for a minute); the binary this repository's `npm ci` built
  // for the same version and platform is the one it would get.
  await run("npm", ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: project });
  const version = (dir: string) => JSON.parse(readFileSync(join(dir, "better-sqlite3", "package.json"), "utf8")).version;
  expect(version(join(project, "node_modules"))).toBe(version(join(root, "node_modules")));
  cpSync(join(root, "node_modules", "better-sqlite3", "build"), join(project, "node_modules", "better-sqlite3", "build"), {
    recursive: true,
  });
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

it("runs the example project's own tests, with vitest and with node:test, from the packed tarball", async () => {
  const { stdout: colored } = await run("npm", ["test"], { cwd: project, env: { ...process.env, CI: "true" } });
  const stdout = colored.replace(/\x1b\[[0-9;]*m/g, "");
  expect(stdout).toMatch(/Tests\s+3 passed/);
  expect(stdout).toMatch(/# pass 1\n# fail 0/);
  expect(packageProcesses()).toEqual([]);
}, 120_000);

it("starts control planes in parallel that do not interfere, and stop() leaves no process and no file", async () => {
  writeFileSync(
    join(project, "parallel.mjs"),
    `import { startControlPlane } from "@orch/control-plane/testing";
const planes = await Promise.all([0, 1, 2, 3].map((i) => startControlPlane({ controllers: i % 2 ? "all" : "none", nats: i !== 3 })));
const servers = new Set(planes.map((p) => p.server));
const dirs = planes.map((p) => p.dataDir);
const recorder = await planes[0].recordEvents();
console.log(JSON.stringify({ servers: servers.size, nats: planes.map((p) => Boolean(p.natsUrl)), dirs }));
await recorder.stop();
await Promise.all(planes.map((p) => p.stop()));
`,
  );
  const { stdout } = await run(process.execPath, ["parallel.mjs"], { cwd: project });
  const result = JSON.parse(stdout) as { servers: number; nats: boolean[]; dirs: string[] };
  expect(result.servers).toBe(4);
  expect(result.nats).toEqual([true, true, true, false]);
  for (const dir of result.dirs) expect(existsSync(dir)).toBe(false);
  expect(packageProcesses()).toEqual([]);
}, 120_000);

it("has an `orch` command: version, and `start --ephemeral` that leaves nothing behind", async () => {
  const orch = join(project, "node_modules", ".bin", "orch");
  expect((await run(orch, ["version"])).stdout.trim()).toBe(
    JSON.parse(readFileSync(join(root, "tools", "control-plane", "package.json"), "utf8")).version,
  );
  const child = spawn(orch, ["start", "--ephemeral", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c));
  child.stderr.on("data", (c: Buffer) => (output += c));
  // Ready, and the line after it names the data directory (the two may arrive in separate reads).
  const dataDir = await eventually(
    "orch start to be ready",
    () => output.includes("control plane ready") && /--kubeconfig (\S+)\/kubeconfig/.exec(output)?.[1],
    {
      timeoutMs: 30_000,
      intervalMs: 50,
    },
  );
  expect(existsSync(dataDir)).toBe(true);
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
  expect(existsSync(dataDir)).toBe(false);
  await eventually("no process of the package", () => packageProcesses().length === 0, { timeoutMs: 10_000 });
}, 60_000);
