// A simulated node as the API sees it: the Node object kubelet registers (labels, podCIDR, capacity,
// addresses, nodeInfo), the conditions it reports, and its Lease in the node-lease namespace.
import type { NamingProfile } from "@orch/api";
import type { KubeObject } from "@orch/client";
import { rfc3339, rfc3339Micro } from "@orch/machinery";
import { createHash } from "node:crypto";
import { release } from "node:os";
import type { OrchletConfig } from "./config.js";

/** The node agent's word in reasons and messages: `kubelet` under Kubernetes' profile, `orchlet` under orch's. */
export function agentWords(profile: NamingProfile): { lower: string; title: string } {
  const lower = profile.nodeAgent;
  return { lower, title: lower[0]!.toUpperCase() + lower.slice(1) };
}

/** The version the simulated nodes report (kubectl get nodes: VERSION). */
export const AGENT_VERSION = "v1.32.0";

export interface NodeCondition {
  type: string;
  status: string;
  lastHeartbeatTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface NodeObject extends KubeObject {
  apiVersion?: string;
  kind?: string;
  spec?: { podCIDR?: string; podCIDRs?: string[]; providerID?: string; unschedulable?: boolean; taints?: unknown[] };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: NodeCondition[];
    addresses?: { type: string; address: string }[];
    daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
    nodeInfo?: Record<string, string>;
    [key: string]: unknown;
  };
}

export interface SimulatedNode {
  name: string;
  index: number;
  address: string;
  podCidr: string;
}

const hex = (text: string, length: number) => createHash("sha256").update(text).digest("hex").slice(0, length);
const uuidOf = (text: string) => {
  const h = hex(text, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

/** The Node kubelet registers (registerWithAPIServer's initialNode). */
export function initialNode(node: SimulatedNode, profile: NamingProfile): NodeObject {
  const wk = profile.wellKnownDomain;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      labels: { [`${wk}/arch`]: "amd64", [`${wk}/hostname`]: node.name, [`${wk}/os`]: "linux" },
    },
    spec: { podCIDR: node.podCidr, podCIDRs: [node.podCidr] },
  };
}

/** The conditions a healthy kubelet reports (the setters of pkg/kubelet/nodestatus). */
export function healthyConditions(profile: NamingProfile): NodeCondition[] {
  const { lower, title } = agentWords(profile);
  return [
    { type: "MemoryPressure", status: "False", reason: `${title}HasSufficientMemory`, message: `${lower} has sufficient memory available` },
    { type: "DiskPressure", status: "False", reason: `${title}HasNoDiskPressure`, message: `${lower} has no disk pressure` },
    { type: "PIDPressure", status: "False", reason: `${title}HasSufficientPID`, message: `${lower} has sufficient PID available` },
    { type: "Ready", status: "True", reason: `${title}Ready`, message: `${lower} is posting ready status` },
  ];
}

/** Whether the Node's conditions say what this agent would report (else it must post at once). */
export function conditionsCurrent(node: NodeObject, profile: NamingProfile): boolean {
  const have = node.status?.conditions ?? [];
  return healthyConditions(profile).every((want) => {
    const c = have.find((x) => x.type === want.type);
    return c?.status === want.status && c.reason === want.reason;
  });
}

/** The whole status kubelet posts: capacity, conditions with a fresh heartbeat, addresses, nodeInfo. */
export function nodeStatus(
  current: NodeObject,
  node: SimulatedNode,
  config: OrchletConfig,
  profile: NamingProfile,
  now = new Date(),
): NodeObject["status"] {
  const capacity = { ...config.capacity, "hugepages-1Gi": "0", "hugepages-2Mi": "0" };
  const old = current.status?.conditions ?? [];
  const conditions = healthyConditions(profile).map((c) => {
    const before = old.find((x) => x.type === c.type);
    return {
      ...c,
      lastHeartbeatTime: rfc3339(now),
      lastTransitionTime: before && before.status === c.status ? (before.lastTransitionTime ?? rfc3339(now)) : rfc3339(now),
    };
  });
  return {
    ...current.status,
    capacity,
    allocatable: { ...capacity },
    conditions,
    addresses: [
      { type: "InternalIP", address: node.address },
      { type: "Hostname", address: node.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: hex(`machine/${node.name}`, 32),
      systemUUID: uuidOf(`system/${node.name}`),
      bootID: uuidOf(`boot/${node.name}`),
      kernelVersion: release(),
      osImage: `${agentWords(profile).title} simulated node`,
      containerRuntimeVersion: "containerd://simulated",
      kubeletVersion: AGENT_VERSION,
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: "amd64",
    },
  };
}

export interface LeaseObject extends KubeObject {
  apiVersion?: string;
  kind?: string;
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; acquireTime?: string };
}

/** A node's Lease (kubelet's nodelease controller): named as the node, owned by it, renewed as heartbeat. */
export function nodeLease(profile: NamingProfile, node: NodeObject, durationSeconds: number, now = new Date()): LeaseObject {
  return {
    apiVersion: `${profile.group("coordination")}/v1`,
    kind: "Lease",
    metadata: {
      name: node.metadata!.name,
      namespace: profile.nodeLeaseNamespace,
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: node.metadata!.name!, uid: node.metadata!.uid! }],
    },
    spec: { holderIdentity: node.metadata!.name, leaseDurationSeconds: durationSeconds, renewTime: rfc3339Micro(now) },
  };
}
