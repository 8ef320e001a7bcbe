// `ORCH_APISERVERS=3 ORCH_STORAGE=postgres://…`: three apiserver processes on one PostgreSQL database
// behind HAProxy (TCP), the one address in the kubeconfig; kubectl keeps working through it when one
// apiserver is SIGKILLed, and every write it acknowledged is there.
import { createPostgresDatabase, postgresAvailable } from "@orch/testing";
import { readFile } from "node:fs/promises";
import { describe, expect, it, vi } from "vitest";
import { apiserverReplicasFromEnv, haproxyConfig } from "../src/apiserver-replicas.js";
import { kubectlOk, startControlPlane } from "./control-plane.js";

vi.setConfig({ testTimeout: 180_000 });

describe("ORCH_APISERVERS", () => {
  it("is one apiserver by default, and more only on a shared PostgreSQL database", () => {
    expect(apiserverReplicasFromEnv({})).toBeUndefined();
    expect(apiserverReplicasFromEnv({ ORCH_APISERVERS: "1" })).toBeUndefined();
    expect(() => apiserverReplicasFromEnv({ ORCH_APISERVERS: "3" })).toThrow(/needs ORCH_STORAGE=postgres/);
    expect(() => apiserverReplicasFromEnv({ ORCH_APISERVERS: "two" })).toThrow(/ORCH_APISERVERS must be a number/);
    expect(apiserverReplicasFromEnv({ ORCH_APISERVERS: "3", ORCH_STORAGE: "postgres://db/orch", ORCH_PORT: "7443" })).toEqual({
      count: 3,
      externalUrl: "https://127.0.0.1:7443",
      bind: "127.0.0.1",
      port: 7443,
      localHost: "127.0.0.1",
    });
  });

  it("puts every replica behind one HAProxy frontend in TCP mode", () => {
    const config = haproxyConfig(
      { count: 2, externalUrl: "https://127.0.0.1:6443", bind: "127.0.0.1", port: 6443, localHost: "127.0.0.1" },
      [
        { name: "apiserver-1", port: 7001 },
        { name: "apiserver-2", port: 7002 },
      ],
    );
    expect(config).toContain("mode tcp");
    expect(config).toContain("bind 127.0.0.1:6443");
    expect(config).toContain("server apiserver-1 127.0.0.1:7001");
    expect(config).toContain("server apiserver-2 127.0.0.1:7002");
  });
});

const available = await postgresAvailable();

describe.runIf(available)("three apiservers behind HAProxy", () => {
  it("serves kubectl through one address, and keeps serving it when an apiserver is killed", async () => {
    const db = await createPostgresDatabase();
    const cp = await startControlPlane({ ORCH_APISERVERS: "3", ORCH_STORAGE: db.url, ORCH_CONTROLLERS: "none" });
    try {
      const line = cp.output.find((l) => l.includes("apiservers behind HAProxy on"))!;
      const [, address] = /behind HAProxy on (\S+):/.exec(line)!;
      const pids = [...line.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
      expect(pids).toHaveLength(3);
      // The kubeconfig names HAProxy, not any one apiserver; the certificate covers its address (kubectl verifies it).
      expect(await readFile(cp.kubeconfig, "utf8")).toContain(`server: ${address}`);
      expect(await kubectlOk(cp, "get", "namespaces", "-o", "name")).toContain("namespace/default");

      const created: string[] = [];
      const create = async (name: string) => {
        await kubectlOk(cp, "create", "configmap", name, "--from-literal", `n=${name}`);
        created.push(name);
      };
      for (let i = 0; i < 6; i++) await create(`before-${i}`);
      process.kill(pids[1]!, "SIGKILL");
      // New connections go to the survivors: HAProxy redispatches one that the dead replica refuses.
      for (let i = 0; i < 6; i++) await create(`after-${i}`);
      const listed = (await kubectlOk(cp, "get", "configmaps", "-l", "!kubernetes.io/service-account.name", "-o", "name"))
        .split("\n")
        .filter((n) => n.startsWith("configmap/before-") || n.startsWith("configmap/after-"))
        .map((n) => n.slice("configmap/".length));
      expect(listed.sort()).toEqual([...created].sort());
      // The launcher restarts the killed replica.
      await expect.poll(() => cp.output.some((l) => l.includes("[apiserver-2] exited")), { timeout: 10_000 }).toBe(true);
    } finally {
      await cp.stop();
      await db.drop();
    }
  });
});
