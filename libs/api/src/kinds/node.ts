// core/v1 Node: a machine pods run on (in orch, a simulated one: the orchlet). Mirrors
// k8s.io/api/core/v1/types.go (NodeSpec, NodeStatus); defaults from pkg/apis/core/v1/defaults.go.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, bool, int32, int64, mapList, opt, quantity, mapOf, setList, str } from "../schema.js";
import { ConditionFields, atomicListMergedOnPatch, nullableTime } from "./fields.js";
import { listOf } from "./meta-list.js";

export const Taint = v.object({
  key: str(),
  value: opt(str()),
  effect: str(),
  timeAdded: nullableTime(),
});
export type Taint = v.InferOutput<typeof Taint>;

export const ConfigMapNodeConfigSource = v.object({
  namespace: str(),
  name: str(),
  uid: opt(str()),
  resourceVersion: opt(str()),
  kubeletConfigKey: str(),
});

export const NodeConfigSource = v.object({
  configMap: opt(ConfigMapNodeConfigSource),
});

export const NodeSpec = v.object({
  podCIDR: opt(str()),
  podCIDRs: opt(setList(str())),
  providerID: opt(str()),
  unschedulable: opt(bool()),
  taints: opt(atomicList(Taint)),
  configSource: opt(NodeConfigSource),
  externalID: opt(str()),
});
export type NodeSpec = v.InferOutput<typeof NodeSpec>;

export const NodeCondition = v.pick(ConditionFields, ["type", "status", "lastHeartbeatTime", "lastTransitionTime", "reason", "message"]);
export type NodeCondition = v.InferOutput<typeof NodeCondition>;

export const NodeAddress = v.object({ type: str(), address: str() });
export type NodeAddress = v.InferOutput<typeof NodeAddress>;

export const NodeDaemonEndpoints = v.object({
  kubeletEndpoint: opt(v.object({ Port: opt(int32(), 0) }), {}),
});

export const NodeSwapStatus = v.object({ capacity: opt(int64()) });

export const NodeSystemInfo = v.object({
  machineID: opt(str(), ""),
  systemUUID: opt(str(), ""),
  bootID: opt(str(), ""),
  kernelVersion: opt(str(), ""),
  osImage: opt(str(), ""),
  containerRuntimeVersion: opt(str(), ""),
  kubeletVersion: opt(str(), ""),
  kubeProxyVersion: opt(str(), ""),
  operatingSystem: opt(str(), ""),
  architecture: opt(str(), ""),
  swap: opt(NodeSwapStatus),
});

export const ContainerImage = v.object({
  names: opt(atomicList(str())),
  sizeBytes: opt(int64()),
});

export const AttachedVolume = v.object({ name: str(), devicePath: str() });

export const NodeConfigStatus = v.object({
  assigned: opt(NodeConfigSource),
  active: opt(NodeConfigSource),
  lastKnownGood: opt(NodeConfigSource),
  error: opt(str()),
});

export const NodeRuntimeHandlerFeatures = v.object({
  recursiveReadOnlyMounts: opt(bool()),
  userNamespaces: opt(bool()),
});

export const NodeRuntimeHandler = v.object({
  name: opt(str(), ""),
  features: opt(NodeRuntimeHandlerFeatures),
});

export const NodeFeatures = v.object({ supplementalGroupsPolicy: opt(bool()) });

export const NodeStatus = v.object({
  capacity: opt(mapOf(quantity())),
  allocatable: opt(mapOf(quantity())),
  phase: opt(str()),
  conditions: opt(mapList(NodeCondition, ["type"])),
  addresses: opt(atomicListMergedOnPatch(NodeAddress, "type")),
  daemonEndpoints: opt(NodeDaemonEndpoints, {}),
  nodeInfo: opt(NodeSystemInfo, {}),
  images: opt(atomicList(ContainerImage)),
  volumesInUse: opt(atomicList(str())),
  volumesAttached: opt(atomicList(AttachedVolume)),
  config: opt(NodeConfigStatus),
  runtimeHandlers: opt(atomicList(NodeRuntimeHandler)),
  features: opt(NodeFeatures),
});
export type NodeStatus = v.InferOutput<typeof NodeStatus>;

export const Node = objectOf({
  spec: opt(NodeSpec, {}),
  status: opt(NodeStatus, {}),
});
export type Node = v.InferOutput<typeof Node>;
export const NodeList = listOf(Node);

/**
 * SetDefaults_NodeStatus: allocatable defaults to capacity. The v1 ↔ internal conversion keeps
 * `podCIDR` equal to `podCIDRs[0]`; a `podCIDR` alone becomes the list.
 */
export function defaultNode(node: Node): void {
  const status = node.status;
  if (status.allocatable === undefined && status.capacity !== undefined) status.allocatable = { ...status.capacity };
  const spec = node.spec;
  if (spec.podCIDRs?.length) spec.podCIDR = spec.podCIDRs[0];
  else if (spec.podCIDR) spec.podCIDRs = [spec.podCIDR];
}
