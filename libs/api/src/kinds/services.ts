// core/v1 Service and Endpoints (k8s.io/api/core/v1/types.go), with SetDefaults_Service
// (pkg/apis/core/v1/defaults.go). The defaults that depend on the cluster (IP families, addresses,
// node ports) are the registry's: libs/registry/src/kinds/core/service.ts.
import * as v from "valibot";
import { ObjectReference, objectOf } from "../meta.js";
import { atomicList, bool, int32, intOrString, mapList, opt, str, stringMap } from "../schema.js";
import { ConditionFields } from "./fields.js";
import { listOf } from "./meta-list.js";

export const ServicePort = v.object({
  name: opt(str()),
  protocol: opt(str(), "TCP"),
  appProtocol: opt(str()),
  port: int32(),
  targetPort: opt(intOrString()),
  nodePort: opt(int32()),
});
export type ServicePort = v.InferOutput<typeof ServicePort>;

export const ClientIPConfig = v.object({ timeoutSeconds: opt(int32()) });
export const SessionAffinityConfig = v.object({ clientIP: opt(ClientIPConfig) });

export const ServiceSpec = v.object({
  ports: opt(mapList(ServicePort, ["port", "protocol"])),
  selector: opt(stringMap()),
  clusterIP: opt(str()),
  clusterIPs: opt(atomicList(str())),
  type: opt(str()),
  externalIPs: opt(atomicList(str())),
  sessionAffinity: opt(str()),
  loadBalancerIP: opt(str()),
  loadBalancerSourceRanges: opt(atomicList(str())),
  externalName: opt(str()),
  externalTrafficPolicy: opt(str()),
  healthCheckNodePort: opt(int32()),
  publishNotReadyAddresses: opt(bool()),
  sessionAffinityConfig: opt(SessionAffinityConfig),
  ipFamilies: opt(atomicList(str())),
  ipFamilyPolicy: opt(str()),
  allocateLoadBalancerNodePorts: opt(bool()),
  loadBalancerClass: opt(str()),
  internalTrafficPolicy: opt(str()),
  trafficDistribution: opt(str()),
});
export type ServiceSpec = v.InferOutput<typeof ServiceSpec>;

export const PortStatus = v.object({ port: int32(), protocol: str(), error: opt(str()) });
export const LoadBalancerIngress = v.object({
  ip: opt(str()),
  hostname: opt(str()),
  ipMode: opt(str()),
  ports: opt(atomicList(PortStatus)),
});
export const ServiceStatus = v.object({
  loadBalancer: opt(v.object({ ingress: opt(atomicList(LoadBalancerIngress)) }), {}),
  conditions: opt(
    mapList(v.pick(ConditionFields, ["type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"]), ["type"]),
  ),
});

export const Service = objectOf({
  spec: opt(ServiceSpec, {}),
  status: opt(ServiceStatus, {}),
});
export type Service = v.InferOutput<typeof Service>;
export const ServiceList = listOf(Service);

/** The `None` clusterIP of a headless Service. */
export const CLUSTER_IP_NONE = "None";

/** SetDefaults_Service: type, session affinity, each port's protocol and target port, traffic policies. */
export function defaultService(service: Service): void {
  const spec = service.spec;
  if (!spec.sessionAffinity) spec.sessionAffinity = "None";
  if (!spec.type) spec.type = "ClusterIP";
  for (const port of spec.ports ?? []) {
    if (!port.protocol) port.protocol = "TCP";
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === "") port.targetPort = port.port;
  }
  if ((spec.type === "NodePort" || spec.type === "LoadBalancer") && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = "Cluster";
  if (spec.type !== "ExternalName" && !spec.internalTrafficPolicy) spec.internalTrafficPolicy = "Cluster";
  if (spec.sessionAffinity === "ClientIP" && !spec.sessionAffinityConfig?.clientIP?.timeoutSeconds) {
    spec.sessionAffinityConfig = { ...spec.sessionAffinityConfig, clientIP: { timeoutSeconds: 10800 } };
  }
  if (spec.type === "LoadBalancer") {
    spec.allocateLoadBalancerNodePorts ??= true;
    for (const ingress of service.status.loadBalancer?.ingress ?? []) if (ingress.ip && !ingress.ipMode) ingress.ipMode = "VIP";
  }
}

export const EndpointAddress = v.object({
  ip: str(),
  hostname: opt(str()),
  nodeName: opt(str()),
  targetRef: opt(ObjectReference),
});
export type EndpointAddress = v.InferOutput<typeof EndpointAddress>;

export const EndpointPort = v.object({
  name: opt(str()),
  port: int32(),
  protocol: opt(str(), "TCP"),
  appProtocol: opt(str()),
});
export type EndpointPort = v.InferOutput<typeof EndpointPort>;

export const EndpointSubset = v.object({
  addresses: opt(atomicList(EndpointAddress)),
  notReadyAddresses: opt(atomicList(EndpointAddress)),
  ports: opt(atomicList(EndpointPort)),
});
export type EndpointSubset = v.InferOutput<typeof EndpointSubset>;

export const Endpoints = objectOf({
  subsets: opt(atomicList(EndpointSubset)),
});
export type Endpoints = v.InferOutput<typeof Endpoints>;
export const EndpointsList = listOf(Endpoints);
