// Process-test harness for the simulated nodes: a real nats-server and apiserver, the csr-approver and
// csr-signer (which issue the nodes' certificates), the node-lifecycle-controller, and the orchlet, each
// a real process from its built bundle, with short timings so a test sees a pod start and a lease expire.
import { type Pod, clusterTrustBundleResource, namingProfile } from "@orch/api";
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import {
  type ApiserverProcess,
  type AppProcess,
  type NatsServer,
  eventually,
  startApiserverProcess,
  startAppProcess,
  startNatsServer,
} from "@orch/testing";
import { execFile } from "node:child_process";
import { afterAll, beforeAll } from "vitest";

export const pods: ResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
export const nodes: ResourceRef = { group: "", version: "v1", plural: "nodes", namespaced: false };
export const events: ResourceRef = { group: "", version: "v1", plural: "events", namespaced: true };
const nodeClientSigner = (profile: "orch" | "kubernetes") => namingProfile(profile).signers.apiserverClientNodeAgent;
const namespaces: ResourceRef = { group: "", version: "v1", plural: "namespaces", namespaced: false };

/** The orchlet's timings in these tests: fractions of a second where kubelet takes seconds. */
export const ORCHLET_ENV = {
  ORCH_NODES: "2",
  ORCH_NODE_LEASE_DURATION_SECONDS: "2",
  ORCH_NODE_LEASE_RENEW_SECONDS: "0.5",
  ORCH_NODE_STATUS_UPDATE_SECONDS: "0.5",
  ORCH_POD_READY_DELAY_MS: "300",
  ORCH_POD_STOP_DELAY_MS: "300",
  ORCH_POD_RUN_BEFORE_EXIT_MS: "300",
  ORCH_POD_BACKOFF_BASE_MS: "500",
  ORCH_POD_BACKOFF_MAX_MS: "2000",
  ORCH_ORCHLET_SERVING_RECHECK_SECONDS: "0.3",
};

export interface Cluster {
  nats: NatsServer;
  apiserver: ApiserverProcess;
  admin: ApiClient;
  orchlet: AppProcess;
  /** Starts the orchlet again (after a kill), with the same data directory. */
  startOrchlet(): Promise<AppProcess>;
  kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Output of every process, for a failure message. */
  output(): string;
}

export function useCluster(profile: "orch" | "kubernetes" = "orch"): Cluster {
  const c = {} as Cluster;
  const apps: AppProcess[] = [];
  beforeAll(async () => {
    c.nats = await startNatsServer();
    c.apiserver = await startApiserverProcess({ natsUrl: c.nats.url, env: { ORCH_PROFILE: profile } });
    c.admin = ApiClient.fromKubeconfig(c.apiserver.kubeconfigPath, { userAgent: "orchlet-test" });
    const common = { ORCH_DATA_DIR: c.apiserver.dataDir, ORCH_NATS_URL: c.nats.url, ORCH_PROFILE: profile, KUBECONFIG: "" };
    apps.push(startAppProcess("csr-approver", common), startAppProcess("csr-signer", common));
    apps.push(
      startAppProcess("node-lifecycle-controller", {
        ...common,
        ORCH_NODE_MONITOR_GRACE_SECONDS: "3",
        ORCH_NODE_MONITOR_PERIOD_SECONDS: "0.5",
      }),
    );
    c.startOrchlet = async () => {
      // The orchlet has no bus identity: it watches over HTTPS, as under the launcher.
      c.orchlet = startAppProcess("orchlet", { ...common, ORCH_NATS_URL: "", ...ORCHLET_ENV });
      apps.push(c.orchlet);
      await c.orchlet.waitForOutput(/"msg":"ready"/);
      return c.orchlet;
    };
    c.output = () => apps.map((a) => a.output()).join("\n");
    c.kubectl = (...args) =>
      new Promise((res) => {
        execFile("kubectl", ["--kubeconfig", c.apiserver.kubeconfigPath, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
          res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    // The nodes verify the apiserver with the trust bundle the csr-signer publishes: it is there first.
    await eventually(
      "the node client signer's trust bundle",
      async () =>
        (
          await c.admin.list(clusterTrustBundleResource(namingProfile(profile)), {
            fieldSelector: `spec.signerName=${nodeClientSigner(profile)}`,
          })
        ).items.length > 0,
      { timeoutMs: 20_000 },
    );
    await c.startOrchlet();
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    c.admin?.close();
    await c.apiserver?.dispose();
    await c.nats?.stop();
  });
  return c;
}

let counter = 0;
export async function freshNamespace(client: ApiClient): Promise<string> {
  const name = `orchlet-${process.pid}-${++counter}`;
  await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name } } as KubeObject);
  return name;
}

export function pod(name: string, node: string, options: { simulate?: string; restartPolicy?: string; annotationKey?: string } = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      ...(options.simulate ? { annotations: { [options.annotationKey ?? "orch.io/orchlet-simulate"]: options.simulate } } : {}),
    },
    spec: {
      nodeName: node,
      ...(options.restartPolicy ? { restartPolicy: options.restartPolicy } : {}),
      containers: [{ name: "web", image: "nginx:1.27" }],
    },
  } as unknown as Pod;
}

export const isReady = (p: Pod | undefined) => p?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
