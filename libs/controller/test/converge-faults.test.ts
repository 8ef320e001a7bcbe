// A controller on the runtime (NATS informer → work queue → status writes) converges on every object
// while the apiserver is SIGKILLed and restarted and nats-server restarts, in the middle of a burst.
import { ApiClient, Informer, type KubeObject, type ResourceRef, isAlreadyExists } from "@orch/client";
import { type ApiserverProcess, type NatsServer, eventually, startApiserverProcess, startNatsServer } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Controller, runController, silentLogger, writeStatus } from "../src/index.js";

interface Deployment extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { observedGeneration?: number };
}

const deployments: ResourceRef = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
const NAMESPACE = "default";
const COUNT = 200;

let nats: NatsServer;
let apiserver: ApiserverProcess;
let client: ApiClient;

beforeAll(async () => {
  nats = await startNatsServer();
  apiserver = await startApiserverProcess({ natsUrl: nats.url });
  client = ApiClient.fromKubeconfig(apiserver.kubeconfigPath);
});

afterAll(async () => {
  client?.close();
  await apiserver?.dispose();
  await nats?.stop();
});

const deployment = (name: string, image: string): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image }] } },
  },
});

/** Retries a write through the apiserver's restart; an earlier attempt that did commit is fine. */
async function persist(write: () => Promise<unknown>): Promise<void> {
  await eventually(
    "a write to go through",
    async () => {
      try {
        await write();
        return true;
      } catch (e) {
        return isAlreadyExists(e);
      }
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

async function converged(): Promise<boolean> {
  try {
    const list = await client.listAll<Deployment>(deployments, { namespace: NAMESPACE });
    return list.items.length === COUNT && list.items.every((d) => d.status?.observedGeneration === d.metadata?.generation);
  } catch {
    return false;
  }
}

const until = (what: string, check: () => Promise<boolean>) => eventually(what, check, { timeoutMs: 60_000, intervalMs: 200 });

describe("a controller under faults (real processes)", () => {
  it("converges on every object through an apiserver SIGKILL and a nats-server restart during bursts", { timeout: 180_000 }, async () => {
    const controllerClient = ApiClient.fromKubeconfig(apiserver.kubeconfigPath);
    const informer = new Informer<Deployment>(controllerClient, { ref: deployments, namespace: NAMESPACE, nats: { servers: nats.url } });
    let controller: Controller | undefined;
    try {
      controller = runController({
        name: "observed-generation",
        sources: [informer],
        workers: 4,
        log: silentLogger,
        reconciler: async (key) => {
          const d = informer.getByKey(key);
          if (!d || d.status?.observedGeneration === d.metadata?.generation) return;
          await writeStatus(controllerClient, deployments, d, (o) => {
            o.status = { ...o.status, observedGeneration: o.metadata?.generation };
          });
        },
      });
      await controller.ready;

      // Creates, with the apiserver SIGKILLed and restarted a third of the way in.
      let crash: Promise<void> | undefined;
      for (let i = 0; i < COUNT; i += 20) {
        if (i === 60) crash = apiserver.kill("SIGKILL").then(() => apiserver.restart());
        await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            persist(() => client.create(deployments, deployment(`d-${i + j}`, "nginx:1"), { namespace: NAMESPACE })),
          ),
        );
      }
      await crash;
      await until("every Deployment observed at generation 1", converged);

      // Spec changes (generation 2), with nats-server restarted in the middle.
      let restart: Promise<void> | undefined;
      for (let i = 0; i < COUNT; i += 20) {
        if (i === 100) restart = nats.restart();
        await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            persist(() =>
              client.patch(
                deployments,
                `d-${i + j}`,
                { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:2" }] } } } },
                { namespace: NAMESPACE },
              ),
            ),
          ),
        );
      }
      await restart;
      await until("every Deployment observed at generation 2", converged);
      const all = await client.listAll<Deployment>(deployments, { namespace: NAMESPACE });
      expect(all.items.map((d) => d.metadata?.generation)).toEqual(Array(COUNT).fill(2));
    } finally {
      await controller?.stop();
      await informer.stop();
      controllerClient.close();
    }
  });
});
