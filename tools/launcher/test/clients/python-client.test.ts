// The official Python client (Debian's python3-kubernetes) against a control plane started the way the
// README says, under the kubernetes profile so that the client's built-in group names are the server's.
// Each case is a function in compat.py that asserts in Python; the cases that outlive one call (leader
// election, a watch through an apiserver restart) run as children this file drives.
import { eventually } from "@orch/testing";
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "../control-plane.js";
import { apiserverPid, killChild, pythonCase, spawnPython } from "./harness.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

describe("the Python client", () => {
  it("creates, reads, lists (in pages), replaces and deletes (also dry-run and by collection) ConfigMaps, Secrets (stringData), Deployments (and their scale) and Services", async () => {
    expect(await pythonCase(cp.kubeconfig, "crud")).toEqual({ ok: true });
  });

  it("patches with JSON, strategic merge and merge patches, and applies with a conflict and then force", async () => {
    expect(await pythonCase(cp.kubeconfig, "patches")).toEqual({ ok: true });
  });

  it("drives ConfigMaps through kubernetes.dynamic, which finds every resource by discovery", async () => {
    expect(await pythonCase(cp.kubeconfig, "dynamic_client")).toEqual({ ok: true });
  });

  it("watches from a resourceVersion (watch=True), replays history, and gets the initial-events-end bookmark", async () => {
    expect(await pythonCase(cp.kubeconfig, "watches")).toMatchObject({ ok: true });
  });

  it("requests service account tokens with an audience and reviews them", async () => {
    expect(await pythonCase(cp.kubeconfig, "token_request")).toEqual({ ok: true });
  });

  it("defines a CRD and creates, patches (main and status), replaces and deletes custom objects", async () => {
    expect(await pythonCase(cp.kubeconfig, "custom_resources")).toEqual({ ok: true });
  });

  it("records v1 and events/v1 Events as an event recorder does", async () => {
    expect(await pythonCase(cp.kubeconfig, "events")).toEqual({ ok: true });
  });

  it("lands 100 concurrent strategic merge patches of one ConfigMap from 8 writers, none refused", async () => {
    expect(await pythonCase(cp.kubeconfig, "concurrent_patches")).toEqual({ ok: true, keys: 100 });
  });

  it("elects a leader with kubernetes.leaderelection's ConfigMapLock, and hands over when the leader dies", async () => {
    const a = spawnPython(cp.kubeconfig, "leader", "candidate-a");
    let b: ReturnType<typeof spawnPython> | undefined;
    try {
      await eventually("candidate-a leads", () => a.lines.includes("leading candidate-a"), { timeoutMs: 15_000 });
      b = spawnPython(cp.kubeconfig, "leader", "candidate-b");
      const lock = await cp.kubectl("get", "configmap", "py-leader", "-o", "jsonpath={.metadata.annotations}");
      expect(JSON.parse(JSON.parse(lock.stdout)["control-plane.alpha.kubernetes.io/leader"]).holderIdentity).toBe("candidate-a");
      // The follower keeps following while the leader renews (lease 3 s, renew every 1 s).
      await new Promise((r) => setTimeout(r, 4000));
      expect(b.lines).not.toContain("leading candidate-b");
      await killChild(a.child);
      await eventually("candidate-b takes over", () => b?.lines.includes("leading candidate-b"), { timeoutMs: 15_000 });
    } finally {
      await killChild(a.child);
      if (b) await killChild(b.child);
    }
  });

  it("resumes a watch from its last resourceVersion after the apiserver is killed, and misses nothing", async () => {
    const configMap = async (name: string, n: number) => {
      const path = `${cp.dataDir}/${name}.yaml`;
      await writeFile(
        path,
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","labels":{"suite":"resume"}},"data":{"n":"${n}"}}`,
      );
      const applied = await cp.kubectl("apply", "-f", path);
      expect(applied.stderr).toBe("");
    };
    const w = spawnPython(cp.kubeconfig, "watch_forever");
    const events = () => w.lines.map((l) => JSON.parse(l) as { type: string; name?: string; data?: object });
    try {
      await eventually("the list", () => events().some((e) => e.type === "LISTED"), { timeoutMs: 15_000 });
      await configMap("resume-1", 1);
      await eventually("resume-1 added", () => events().some((e) => e.type === "ADDED" && e.name === "resume-1"));

      const pid = apiserverPid(cp.dataDir);
      expect(pid).toBeDefined();
      process.kill(pid!, "SIGKILL");
      await eventually(
        "a new apiserver that answers",
        async () => {
          const now = apiserverPid(cp.dataDir);
          return !!now && now !== pid && (await cp.kubectl("get", "namespace", "default", "-o", "name")).code === 0;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      // Written as soon as the new apiserver answers, possibly before the watch is back: the resumed watch
      // starts from the last version it saw, so it still gets both.
      await configMap("resume-2", 2);
      await configMap("resume-1", 10);
      await eventually(
        "the changes after the restart",
        () =>
          events().some((e) => e.type === "ADDED" && e.name === "resume-2") &&
          events().some((e) => e.type === "MODIFIED" && e.name === "resume-1"),
        { timeoutMs: 20_000 },
      );
      // The kill ended the stream (an error, or a stream cut short) and the loop watched again.
      expect(events().some((e) => e.type === "RETRY" || e.type === "ENDED")).toBe(true);
      const seen = events()
        .filter((e) => !["LISTED", "RETRY", "ENDED"].includes(e.type))
        .map((e) => `${e.type} ${e.name}`);
      expect(seen).toEqual(["ADDED resume-1", "ADDED resume-2", "MODIFIED resume-1"]);
    } finally {
      await killChild(w.child);
    }
  });
});
