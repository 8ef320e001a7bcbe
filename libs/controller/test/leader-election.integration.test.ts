// Leader election against a real apiserver process (the built bundle), with real timers: short lease
// timings so a takeover after expiry costs about two seconds. A sampler checks continuously that two
// candidates never lead at the same time.
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import { type ApiserverProcess, eventually, startApiserverProcess } from "@orch/testing";
import { build } from "esbuild";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaderElector, type Lease, type LeaseClient, leaseResource, runControllerApp, silentLogger } from "../src/index.js";

const TIMINGS = { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 200 };
const leases = leaseResource("orch.io");

let apiserver: ApiserverProcess;
let admin: ApiClient;
const opened: ApiClient[] = [];

beforeAll(async () => {
  apiserver = await startApiserverProcess();
  admin = ApiClient.fromKubeconfig(apiserver.kubeconfigPath);
});

afterAll(async () => {
  for (const c of opened) c.close();
  admin?.close();
  await apiserver?.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls every 10 ms: the takeover timings below are measured from when these return. */
const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) =>
  eventually(what, check, { timeoutMs, intervalMs: 10 });

/** A client of its own (its own connections), which a test can cut off: every later request hangs. */
function connection(): { client: LeaseClient; cut(): void } {
  const real = ApiClient.fromKubeconfig(apiserver.kubeconfigPath);
  opened.push(real);
  let cut = false;
  const gate = async () => {
    if (cut) await new Promise(() => undefined);
  };
  return {
    client: {
      get: async (ref, name, o) => (await gate(), real.get(ref, name, o)),
      create: async (ref, obj, o) => (await gate(), real.create(ref, obj, o)),
      update: async (ref, obj, o) => (await gate(), real.update(ref, obj, o)),
    },
    cut: () => {
      cut = true;
    },
  };
}

let leaseCounter = 0;
const freshLease = () => `it-${process.pid}-${++leaseCounter}`;

function candidate(lease: string, identity: string) {
  const conn = connection();
  const elector = new LeaderElector({ client: conn.client, namespace: "default", name: lease, identity, log: silentLogger, ...TIMINGS });
  const running = elector.run();
  return { elector, running, cut: conn.cut };
}

/** Samples every few ms until stopped; records any moment with more than one leader. */
function sampler(electors: () => LeaderElector[]) {
  const overlaps: string[] = [];
  let samples = 0;
  const timer = setInterval(() => {
    samples++;
    const leading = electors().filter((e) => e.isLeader());
    if (leading.length > 1) overlaps.push(leading.map((e) => e.identity).join("+"));
  }, 5);
  return {
    stop: () => {
      clearInterval(timer);
      return { overlaps, samples };
    },
  };
}

/** Bundles a script importing this package's source (as tools/build.mjs bundles apps) into `dir`. */
async function bundle(dir: string, contents: string): Promise<string> {
  const outfile = join(dir, "script.mjs");
  await build({
    stdin: { contents, resolveDir: import.meta.dirname, loader: "ts" },
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@orch/source"],
    external: ["better-sqlite3"],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: "warning",
  });
  return outfile;
}

const holderOf = async (name: string) => (await admin.get<Lease>(leases, name, { namespace: "default" })).spec?.holderIdentity;
const renewTimeOf = async (name: string) => (await admin.get<Lease>(leases, name, { namespace: "default" })).spec?.renewTime;

/**
 * Waits until `waiting` has found the lease held by `holder`, and the holder has renewed it twice since:
 * by then `waiting` has campaigned against a live leader for a while (it retries every retry period).
 */
async function contested(name: string, waiting: LeaderElector, holder: string): Promise<void> {
  await until(() => waiting.leader === holder, `${waiting.identity} to find ${holder} leading`);
  let last = await renewTimeOf(name);
  let renewals = 0;
  await until(async () => {
    const now = await renewTimeOf(name);
    if (now !== last) [last, renewals] = [now, renewals + 1];
    return renewals >= 2;
  }, `${holder} to renew twice`);
}

describe("leader election against the apiserver", () => {
  it("elects exactly one of two candidates, and hands over at once when the leader stops (release)", async () => {
    const name = freshLease();
    const a = candidate(name, "a");
    const b = candidate(name, "b");
    const s = sampler(() => [a.elector, b.elector]);
    await until(() => a.elector.isLeader() || b.elector.isLeader(), "a leader");
    const [leader, other] = a.elector.isLeader() ? [a, b] : [b, a];
    // Stays so over several lease durations: the leader renews, the other keeps waiting. (A fixed time:
    // outliving the lease duration is the point; the sampler checks the whole time.)
    await sleep(2.5 * TIMINGS.leaseDurationMs);
    expect(leader.elector.isLeader()).toBe(true);
    expect(other.elector.isLeader()).toBe(false);
    expect(await holderOf(name)).toBe(leader.elector.identity);

    const stoppedAt = Date.now();
    await leader.elector.stop();
    expect(await holderOf(name)).not.toBe(leader.elector.identity);
    await until(() => other.elector.isLeader(), "the takeover");
    // Released: no waiting for the 2 s expiry, only for the other's next retry (at most 2.2 retry periods).
    expect(Date.now() - stoppedAt).toBeLessThan(TIMINGS.leaseDurationMs);
    expect(await holderOf(name)).toBe(other.elector.identity);
    await other.elector.stop();
    const { overlaps, samples } = s.stop();
    // The sampler really watched the whole time (every 5 ms for ~6 s; fewer ticks on a loaded machine).
    expect(samples).toBeGreaterThan(200);
    expect(overlaps).toEqual([]);
  });

  it("a leader cut off from the apiserver steps down before the other takes over after expiry", async () => {
    const name = freshLease();
    const a = candidate(name, "a");
    await until(() => a.elector.isLeader(), "a to lead");
    const b = candidate(name, "b");
    const s = sampler(() => [a.elector, b.elector]);
    await contested(name, b.elector, "a");
    const lastRenew = Date.parse((await admin.get<Lease>(leases, name, { namespace: "default" })).spec!.renewTime!);
    a.cut();
    await until(() => !a.elector.isLeader(), "a to step down", 5_000);
    const steppedDown = Date.now() - lastRenew;
    await until(() => b.elector.isLeader(), "b to take over", 10_000);
    const tookOver = Date.now() - lastRenew;
    await a.running;
    const { overlaps } = s.stop();
    expect(overlaps).toEqual([]);
    expect(steppedDown).toBeLessThan(TIMINGS.renewDeadlineMs + 2 * TIMINGS.retryPeriodMs + 200);
    expect(tookOver).toBeGreaterThanOrEqual(TIMINGS.leaseDurationMs);
    expect(await holderOf(name)).toBe("b");
    await b.elector.stop();
  });

  it("takes over from a leader process killed with SIGKILL once its lease expires", async () => {
    const name = freshLease();
    const dir = mkdtempSync(join(tmpdir(), "orch-elector-"));
    let child: ChildProcess | undefined;
    try {
      // A real second process: this package's source bundled into one file, run by node.
      const script = await bundle(
        dir,
        `
          import { ApiClient } from "@orch/client";
          import { LeaderElector } from "@orch/controller";
          const [kubeconfig, name, timings] = process.argv.slice(2);
          const client = ApiClient.fromKubeconfig(kubeconfig);
          const elector = new LeaderElector({ client, namespace: "default", name, identity: "child", ...JSON.parse(timings),
            onStartedLeading: () => console.log("LEADING") });
          void elector.run();
          process.stdin.on("end", () => process.exit(0)).resume();
        `,
      );
      const proc = spawn(process.execPath, [script, apiserver.kubeconfigPath, name, JSON.stringify(TIMINGS)], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      child = proc;
      let out = "";
      proc.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
      await until(() => out.includes("LEADING"), "the child to lead");

      const b = candidate(name, "b");
      await contested(name, b.elector, "child");
      expect(b.elector.isLeader()).toBe(false);
      const lastRenew = Date.parse((await admin.get<Lease>(leases, name, { namespace: "default" })).spec!.renewTime!);
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGKILL");
      await exited;
      // The server-side view, sampled while waiting: the child's lease until b holds it, never a gap filled by two.
      await until(() => b.elector.isLeader(), "b to take over", 10_000);
      const tookOver = Date.now() - lastRenew;
      expect(tookOver).toBeGreaterThanOrEqual(TIMINGS.leaseDurationMs);
      expect(tookOver).toBeLessThan(TIMINGS.leaseDurationMs + 3 * TIMINGS.retryPeriodMs + 1_000);
      const spec = (await admin.get<Lease>(leases, name, { namespace: "default" })).spec!;
      expect(spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
      await b.elector.stop();
    } finally {
      child?.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("runControllerApp against the apiserver", () => {
  const secrets: ResourceRef = { group: "", version: "v1", plural: "secrets", namespaced: true };

  it("runs the controllers of the elected replica only, and hands over when it stops", async () => {
    const name = freshLease();
    const env = { KUBECONFIG: apiserver.kubeconfigPath, ORCH_PROFILE: "orch" };
    const seen: Record<string, string[]> = { one: [], two: [] };
    const exits: number[] = [];
    const app = (replica: "one" | "two") =>
      runControllerApp({
        name,
        env,
        exit: (code) => void exits.push(code),
        log: silentLogger,
        leaderElection: { ...TIMINGS, identity: replica },
        setup: (ctx) => {
          const informer = ctx.informer<KubeObject>(secrets, { namespace: "default", labelSelector: `test=${name}` });
          ctx.runController({ name: "secrets", sources: [informer], reconciler: async (key) => void seen[replica]!.push(key) });
        },
      });
    const one = await app("one");
    let two: Awaited<ReturnType<typeof app>> | undefined;
    try {
      await until(() => one.elector?.isLeader() === true, "replica one to lead");
      // Leading, with its informer listed: what a process waits for before saving its code cache.
      await one.working;
      two = await app("two");
      await admin.create(secrets, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "c1", namespace: "default", labels: { test: name } },
      });
      await until(() => seen.one!.includes("default/c1"), "replica one to reconcile c1");
      // Two has been campaigning, not leading, while one reconciled and renewed.
      await contested(name, two.elector!, "one");
      expect(seen.two).toEqual([]);
      const waiting = new Promise((resolve) => setTimeout(() => resolve("waiting"), 100));
      expect(await Promise.race([two.working.then(() => "working"), waiting])).toBe("waiting");

      expect(await one.stop()).toBe(0);
      expect(await one.done).toBe(0);
      await until(() => two?.elector?.isLeader() === true, "replica two to take over", 3_000);
      await two.working;
      // The new leader lists everything: level-triggered, nothing lost in the handover.
      await until(() => seen.two!.includes("default/c1"), "replica two to reconcile c1");
      await admin.create(secrets, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "c2", namespace: "default", labels: { test: name } },
      });
      await until(() => seen.two!.includes("default/c2"), "replica two to reconcile c2");
      expect(seen.one).not.toContain("default/c2");
    } finally {
      await one.stop();
      await two?.stop();
    }
    expect(exits).toEqual([0, 0]);
  });

  it("exits 1 when it loses leadership or its setup fails, so the supervisor restarts it", async () => {
    const env = { KUBECONFIG: apiserver.kubeconfigPath };
    const lost = freshLease();
    let stopSeen = false;
    const app = await runControllerApp({
      name: lost,
      env,
      exit: () => undefined,
      log: silentLogger,
      leaderElection: { ...TIMINGS, identity: "victim" },
      setup: (ctx) => ctx.signal.addEventListener("abort", () => (stopSeen = true)),
    });
    await until(() => app.elector?.isLeader() === true, "the app to lead");
    const current = await admin.get<Lease>(leases, lost, { namespace: "default" });
    await admin.update(leases, { ...current, spec: { ...current.spec, holderIdentity: "usurper" } });
    expect(await app.done).toBe(1);
    expect(stopSeen).toBe(true);
    expect(await holderOf(lost)).toBe("usurper");

    const broken = await runControllerApp({
      name: freshLease(),
      env,
      exit: () => undefined,
      log: silentLogger,
      leaderElection: TIMINGS,
      setup: () => {
        throw new Error("no such kind");
      },
    });
    expect(await broken.done).toBe(1);
  });

  it("exits at once when it loses leadership, without waiting for a reconcile still in flight", async () => {
    const lease = freshLease();
    const env = { KUBECONFIG: apiserver.kubeconfigPath, ORCH_PROFILE: "orch" };
    const exits: number[] = [];
    let reconciling = false;
    const app = await runControllerApp({
      name: lease,
      env,
      exit: (code) => void exits.push(code),
      log: silentLogger,
      leaderElection: { ...TIMINGS, identity: "slow" },
      setup: (ctx) => {
        const informer = ctx.informer<KubeObject>(secrets, { namespace: "default", labelSelector: `test=${lease}` });
        // A reconcile that never ends, as a batch of creates against an apiserver that does not answer.
        ctx.runController({
          name: "stuck",
          sources: [informer],
          reconciler: () => {
            reconciling = true;
            return new Promise(() => undefined);
          },
        });
      },
    });
    try {
      await until(() => app.elector?.isLeader() === true, "the app to lead");
      await admin.create(secrets, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s", namespace: "default", labels: { test: lease } },
      });
      await until(() => reconciling, "the reconcile to start");
      const current = await admin.get<Lease>(leases, lease, { namespace: "default" });
      await admin.update(leases, { ...current, spec: { ...current.spec, holderIdentity: "usurper" } });
      expect(await app.done).toBe(1);
      expect(exits).toEqual([1]);
    } finally {
      await app.stop();
    }
  });

  it("as a supervised process: stops and releases its lease on SIGTERM and when stdin closes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-app-"));
    const children: ChildProcess[] = [];
    try {
      const script = await bundle(
        dir,
        `
          import { runControllerApp } from "@orch/controller";
          const timings = JSON.parse(process.env.TEST_TIMINGS);
          await runControllerApp({ name: process.env.TEST_LEASE, leaderElection: { ...timings, identity: process.env.TEST_ID },
            setup: (app) => app.log.info("setup ran") });
        `,
      );
      for (const how of ["SIGTERM", "stdin"] as const) {
        const name = freshLease();
        const proc = spawn(process.execPath, [script], {
          env: {
            ...process.env,
            KUBECONFIG: apiserver.kubeconfigPath,
            ORCH_SUPERVISED: "1",
            TEST_LEASE: name,
            TEST_ID: `app-${how}`,
            TEST_TIMINGS: JSON.stringify(TIMINGS),
          },
          stdio: ["pipe", "pipe", "pipe"],
        });
        children.push(proc);
        let out = "";
        proc.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
        proc.stderr?.setEncoding("utf8").on("data", (d: string) => (out += d));
        const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
        await until(() => out.includes("setup ran"), `the app to lead (${how})\n${out}`);
        // Lines are JSON objects naming the app (the launcher prints them as text).
        const lines = out
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as { name: string; msg: string });
        expect(lines.find((l) => l.msg.startsWith("became leader (app-"))?.name).toBe(name);
        expect(await holderOf(name)).toBe(`app-${how}`);
        if (how === "SIGTERM") proc.kill("SIGTERM");
        else proc.stdin?.end();
        expect(await exited).toBe(0);
        expect(await holderOf(name)).toBe("");
        expect(out).toContain("released lease");
      }
    } finally {
      for (const c of children) c.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
