// A real nats-server, a real apiserver process and the deployment-controller as a real process (the
// built bundle), per test file; and the test's own kubelet: it marks pods Ready through `/status`.
import type { Deployment, Pod, ReplicaSet, ReplicationController } from "@orch/api";
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import { type ApiserverProcess, type NatsServer, startApiserverProcess, startNatsServer } from "@orch/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";

const bundle = resolve(dirname(fileURLToPath(import.meta.url)), "..", "dist", "main.mjs");

export const deployments: ResourceRef = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
export const replicaSets: ResourceRef = { group: "apps", version: "v1", plural: "replicasets", namespaced: true };
export const pods: ResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
export const replicationControllers: ResourceRef = { group: "", version: "v1", plural: "replicationcontrollers", namespaced: true };
const namespaces: ResourceRef = { group: "", version: "v1", plural: "namespaces", namespaced: false };

export interface ControllerProcess {
  readonly pid: number | undefined;
  /** Output so far, for failure messages. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface Cluster {
  nats: NatsServer;
  apiserver: ApiserverProcess;
  client: ApiClient;
  controller: ControllerProcess;
  /** Starts another controller process (after a kill). */
  startController(): ControllerProcess;
}

export function startController(apiserver: ApiserverProcess, nats: NatsServer): ControllerProcess {
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
  const child: ChildProcess = spawn(process.execPath, [bundle], {
    env: { ...process.env, KUBECONFIG: apiserver.kubeconfigPath, ORCH_NATS_URL: nats.url, ORCH_SUPERVISED: "1" },
    // stdin is a pipe: the controller exits when this test process is gone, however it ended.
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin?.on("error", () => undefined);
  let log = "";
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    get pid() {
      return child.pid;
    },
    output: () => log,
    kill: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        await exited;
      }
    },
  };
}

export function useCluster(): Cluster {
  const c = {} as Cluster;
  beforeAll(async () => {
    c.nats = await startNatsServer();
    c.apiserver = await startApiserverProcess({ natsUrl: c.nats.url });
    c.client = ApiClient.fromKubeconfig(c.apiserver.kubeconfigPath, { userAgent: "deployment-controller-test" });
    c.startController = () => (c.controller = startController(c.apiserver, c.nats));
    c.startController();
  });
  afterAll(async () => {
    await c.controller?.kill();
    c.client?.close();
    await c.apiserver?.dispose();
    await c.nats?.stop();
  });
  return c;
}

let counter = 0;
export async function freshNamespace(client: ApiClient): Promise<string> {
  const name = `dc-${process.pid}-${++counter}`;
  await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a value (not undefined/false); the last error or value goes in the message. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  controller?: ControllerProcess,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out waiting for ${what} (last: ${detail})${controller ? `\ncontroller output:\n${controller.output()}` : ""}`);
    }
    await sleep(50);
  }
}

export function deployment(name: string, replicas: number, spec: Record<string, unknown> = {}, image = "nginx:1"): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image }] } },
      ...spec,
    },
  } as unknown as Deployment;
}

export function replicationController(name: string, replicas: number): ReplicationController {
  return {
    apiVersion: "v1",
    kind: "ReplicationController",
    metadata: { name },
    spec: {
      replicas,
      selector: { app: name },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } },
    },
  } as unknown as ReplicationController;
}

export async function list<T extends KubeObject>(client: ApiClient, ref: ResourceRef, namespace: string): Promise<T[]> {
  return (await client.list<T>(ref, { namespace })).items;
}

export const isActive = (p: Pod) => !p.metadata.deletionTimestamp && p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed";
export const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

export async function activePods(client: ApiClient, namespace: string): Promise<Pod[]> {
  return (await list<Pod>(client, pods, namespace)).filter(isActive);
}

/** The kubelet's part: the pod runs and is Ready. */
export async function markReady(client: ApiClient, pod: Pod): Promise<void> {
  const now = `${new Date().toISOString().slice(0, 19)}Z`;
  await client.patch(
    pods,
    pod.metadata.name ?? "",
    { status: { phase: "Running", conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }] } },
    { namespace: pod.metadata.namespace, subresource: "status" },
  );
}

/** Marks every active pod Ready that is not yet; returns how many it marked. */
export async function markAllReady(client: ApiClient, namespace: string): Promise<number> {
  const waiting = (await activePods(client, namespace)).filter((p) => !isReady(p));
  for (const pod of waiting) await markReady(client, pod).catch(() => undefined);
  return waiting.length;
}

export const ownerUid = (o: KubeObject) => o.metadata?.ownerReferences?.find((r) => r.controller)?.uid;

export async function replicaSetsOf(client: ApiClient, namespace: string): Promise<ReplicaSet[]> {
  return list<ReplicaSet>(client, replicaSets, namespace);
}

/**
 * Follows every revision of a resource in a namespace (list, then watch from the list's revision) and
 * calls `check` with the objects as they are after each change: an invariant checked at every step,
 * not at sampled moments.
 */
export async function everyRevision<T extends KubeObject>(
  client: ApiClient,
  ref: ResourceRef,
  namespace: string,
  check: (objects: T[]) => void,
): Promise<{ stop(): Promise<void> }> {
  const listed = await client.list<T>(ref, { namespace });
  const objects = new Map(listed.items.map((o) => [o.metadata?.name ?? "", o]));
  check([...objects.values()]);
  const stream = client.watch<T>(ref, { namespace, resourceVersion: listed.metadata.resourceVersion });
  // A watch that fails (the apiserver stopping under a failed test) is reported by stop(), not left unhandled.
  const running = (async () => {
    for await (const event of stream) {
      if (event.type === "BOOKMARK") continue;
      const name = event.object.metadata?.name ?? "";
      if (event.type === "DELETED") objects.delete(name);
      else objects.set(name, event.object);
      check([...objects.values()]);
    }
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
  return {
    stop: async () => {
      stream.close();
      const failure = await running;
      if (failure) throw failure;
    },
  };
}
