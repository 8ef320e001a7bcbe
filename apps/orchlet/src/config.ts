// The orchlet's settings, from the environment: how many nodes it simulates and their shape, its
// heartbeats, and how long the simulated containers take. Defaults are kubelet's where kubelet has one.
import { join, resolve } from "node:path";
import { parseQuantity } from "@orch/machinery";

export interface OrchletConfig {
  dataDir: string;
  /** Node names: `<prefix><index>`, index 0 .. nodes-1. */
  nodeNamePrefix: string;
  nodes: number;
  capacity: { cpu: string; memory: string; pods: string; "ephemeral-storage": string };
  /** The cluster's pod range (IPv4, /16 or wider); node i gets the i-th /24 of it. */
  clusterCidr: string;
  /** Node i's InternalIP is the (i+1)-th address of this range. */
  nodeCidr: string;
  /** Kubelet's nodeLeaseDurationSeconds (40). */
  leaseDurationSeconds: number;
  /** How often a node's Lease is renewed: kubelet renews at a quarter of the duration. */
  leaseRenewMs: number;
  /** Kubelet's nodeStatusUpdateFrequency (10 s): how often a node's status is compared and, if changed, posted. */
  statusUpdateMs: number;
  /** Kubelet's nodeStatusReportFrequency (5 min): a status is posted at least this often. */
  statusReportMs: number;
  /**
   * From a container's start to its readiness (readinessProbe.initialDelaySeconds, when longer, wins).
   * Default 0: kubelet reports a container without a readiness probe ready as soon as it runs.
   */
  readyDelayMs: number;
  /** How long a container takes to stop on SIGTERM; a deleted pod is gone after min(this, its grace period). */
  stopDelayMs: number;
  /** How long a container annotated to exit runs first. */
  runBeforeExitMs: number;
  /** Kubelet's crash-loop back-off: base (10 s), doubled per restart up to the cap (5 min). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** The bootstrap kubeconfig: an identity that may only ask for node client certificates. */
  bootstrapKubeconfig: string;
  /** Where each node's key and issued certificates are kept (`<node>-client.{key,crt}`, `<node>-serving.…`). */
  certDir: string;
  /** Ask for a serving certificate per node (orchlet-serving signer; an administrator approves it). */
  serving: boolean;
  /** How often a pending serving certificate request is looked at again. */
  servingRecheckMs: number;
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, check: (n: number) => boolean, what: string): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || !check(value)) throw new Error(`${name} must be ${what}, not ${JSON.stringify(text)}`);
  return value;
}

function quantity(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const text = env[name]?.trim();
  if (!text) return fallback;
  try {
    parseQuantity(text);
  } catch {
    throw new Error(`${name} must be a quantity (e.g. 4, 500m, 16Gi), not ${JSON.stringify(text)}`);
  }
  return text;
}

const positive = (n: number) => n > 0;
const nonNegative = (n: number) => n >= 0;

export function orchletConfig(env: NodeJS.ProcessEnv = process.env): OrchletConfig {
  const dataDir = resolve(env.ORCH_DATA_DIR || ".orch");
  const leaseDurationSeconds = number(
    env,
    "ORCH_NODE_LEASE_DURATION_SECONDS",
    40,
    (n) => Number.isInteger(n) && n > 0,
    "a positive whole number",
  );
  const seconds = (name: string, fallback: number) =>
    Math.round(number(env, name, fallback, positive, "a positive number of seconds") * 1000);
  const ms = (name: string, fallback: number) =>
    Math.round(number(env, name, fallback, nonNegative, "a number of milliseconds, 0 or more"));
  const nodes = number(env, "ORCH_NODES", 3, (n) => Number.isInteger(n) && n >= 0 && n <= 256, "a whole number from 0 to 256");
  return {
    dataDir,
    nodeNamePrefix: env.ORCH_NODE_NAME_PREFIX || "node-",
    nodes,
    capacity: {
      cpu: quantity(env, "ORCH_NODE_CPU", "4"),
      memory: quantity(env, "ORCH_NODE_MEMORY", "16Gi"),
      pods: quantity(env, "ORCH_NODE_PODS", "110"),
      "ephemeral-storage": quantity(env, "ORCH_NODE_EPHEMERAL_STORAGE", "100Gi"),
    },
    clusterCidr: env.ORCH_CLUSTER_CIDR || "10.244.0.0/16",
    nodeCidr: env.ORCH_NODE_CIDR || "10.89.0.0/16",
    leaseDurationSeconds,
    leaseRenewMs: seconds("ORCH_NODE_LEASE_RENEW_SECONDS", leaseDurationSeconds / 4),
    statusUpdateMs: seconds("ORCH_NODE_STATUS_UPDATE_SECONDS", 10),
    statusReportMs: seconds("ORCH_NODE_STATUS_REPORT_SECONDS", 300),
    readyDelayMs: ms("ORCH_POD_READY_DELAY_MS", 0),
    stopDelayMs: ms("ORCH_POD_STOP_DELAY_MS", 1000),
    runBeforeExitMs: ms("ORCH_POD_RUN_BEFORE_EXIT_MS", 1000),
    backoffBaseMs: ms("ORCH_POD_BACKOFF_BASE_MS", 10_000),
    backoffMaxMs: ms("ORCH_POD_BACKOFF_MAX_MS", 300_000),
    bootstrapKubeconfig: resolve(env.ORCH_ORCHLET_BOOTSTRAP_KUBECONFIG || join(dataDir, "controllers", "orchlet-bootstrap.kubeconfig")),
    certDir: resolve(env.ORCH_ORCHLET_CERT_DIR || join(dataDir, "orchlet", "pki")),
    serving: env.ORCH_ORCHLET_SERVING_CERTIFICATES !== "off",
    servingRecheckMs: seconds("ORCH_ORCHLET_SERVING_RECHECK_SECONDS", 10),
  };
}

export const nodeNames = (config: Pick<OrchletConfig, "nodeNamePrefix" | "nodes">): string[] =>
  Array.from({ length: config.nodes }, (_, i) => `${config.nodeNamePrefix}${i}`);
