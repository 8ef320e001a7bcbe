// A real nats-server and a real apiserver process per test file, and small builders for the objects
// tests write.
import {
  type ApiserverProcess,
  type ApiserverProcessOptions,
  type NatsServer,
  type NatsServerOptions,
  startApiserverProcess,
  startNatsServer,
} from "@orch/testing";
import { afterAll, beforeAll } from "vitest";
import { ApiClient, type KubeObject, type ResourceRef } from "../src/index.js";

export interface Cluster {
  nats: NatsServer;
  apiserver: ApiserverProcess;
  /** A client with the admin kubeconfig the apiserver wrote. */
  client: ApiClient;
}

export async function startCluster(
  options: Omit<ApiserverProcessOptions, "natsUrl"> = {},
  natsOptions: NatsServerOptions = {},
): Promise<Cluster & { stop(): Promise<void> }> {
  const nats = await startNatsServer(natsOptions);
  const apiserver = await startApiserverProcess({ ...options, natsUrl: nats.url });
  const client = ApiClient.fromKubeconfig(apiserver.kubeconfigPath, { userAgent: "orch-client-test" });
  return {
    nats,
    apiserver,
    client,
    stop: async () => {
      client.close();
      await apiserver.dispose();
      await nats.stop();
    },
  };
}

/** One cluster for the whole test file; its fields are filled in before the first test. */
export function useCluster(options: Omit<ApiserverProcessOptions, "natsUrl"> = {}, natsOptions: NatsServerOptions = {}): Cluster {
  const c = {} as Cluster & { stop?: () => Promise<void> };
  beforeAll(async () => Object.assign(c, await startCluster(options, natsOptions)));
  afterAll(async () => c.stop?.());
  return c;
}

export const secrets: ResourceRef = { group: "", version: "v1", plural: "secrets", namespaced: true };
export const namespaces: ResourceRef = { group: "", version: "v1", plural: "namespaces", namespaced: false };
export const deployments: ResourceRef = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
export const leases = (domain = "orch.io"): ResourceRef => ({
  group: `coordination.${domain}`,
  version: "v1",
  plural: "leases",
  namespaced: true,
});

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export function secret(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): Secret {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, labels }, type: "Opaque", data };
}

export interface Deployment extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export function deployment(name: string, replicas = 1): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
    },
  };
}

let counter = 0;
/** A fresh namespace per test, so tests in a file never see each other's objects. */
/** A new namespace, once it is settled: the apiserver has given it its `default` ServiceAccount. */
export async function freshNamespace(client: ApiClient, prefix = "t"): Promise<string> {
  const name = `${prefix}-${process.pid}-${++counter}`;
  await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  await waitFor(`the default ServiceAccount of ${name}`, () =>
    client.get(serviceAccountsRef, "default", { namespace: name }).then(
      () => true,
      () => false,
    ),
  );
  return name;
}

const serviceAccountsRef = { group: "", version: "v1", plural: "serviceaccounts", namespaced: true };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
