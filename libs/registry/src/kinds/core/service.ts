// Service (core/v1), as pkg/registry/core/service: SetDefaults_Service (in @orch/api), the strategy's
// normalisation of clusterIP/clusterIPs, the IP families and allocation of a single-stack IPv4 cluster
// (storage/alloc.go), and ValidateService/ValidateServiceUpdate (pkg/apis/core/validation).
import { CLUSTER_IP_NONE, type Service, type ServicePort, Service as ServiceSchema, defaultService } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  errors,
  fieldError,
  isDNS1123Subdomain,
  isQualifiedName,
  jsonEqual,
  nameIsDNS1035Label,
  omitValue,
  validateLabels,
} from "@orch/machinery";
import { isIP } from "node:net";
import { AGE, column, defineKind, formatLabels, statusSubresource } from "../../generic/define.js";
import type { KindDefinition, PrinterColumn, Strategy, SubresourceStrategy } from "../../generic/kind.js";
import { dnsLabel, isValidPortName, isValidPortNum, validIP } from "./pod-validation-formats.js";
import { type ServiceAllocators, ipv4ToNumber, numberToIpv4 } from "./service-allocator.js";

const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS = ["SCTP", "TCP", "UDP"];
const IP_FAMILIES = ["IPv4", "IPv6"];
const IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const TRAFFIC_POLICIES = ["Cluster", "Local"];
const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
/** The kubelet's port: a load balancer may not expose it (a workaround for clouds that over-open firewalls). */
const KUBELET_PORT = 10250;

const spec = FieldPath.root("spec");
const isHeadless = (s: Service) => s.spec.clusterIPs?.length === 1 && s.spec.clusterIPs[0] === CLUSTER_IP_NONE;
const needsClusterIP = (s: Service) => s.spec.type !== "ExternalName";
const needsNodePorts = (s: Service) =>
  s.spec.type === "NodePort" || (s.spec.type === "LoadBalancer" && s.spec.allocateLoadBalancerNodePorts !== false);

/** The strategy's normaliseClusterIPs: clusterIPs follow a clusterIP set alone. */
function normalizeClusterIPs(service: Service, old?: Service): void {
  const s = service.spec;
  if (!old) {
    if (s.clusterIP && !s.clusterIPs?.length) s.clusterIPs = [s.clusterIP];
    return;
  }
  // A clusterIP changed or cleared by the user takes clusterIPs with it (a type change to ExternalName).
  if (s.clusterIP !== old.spec.clusterIP && jsonEqual(s.clusterIPs ?? [], old.spec.clusterIPs ?? [])) {
    if (s.clusterIP) s.clusterIPs = [s.clusterIP];
    else delete s.clusterIPs;
  }
}

/** PatchAllocatedValues: what an update leaves out of an already allocated Service is kept. */
function keepAllocated(service: Service, old: Service): void {
  const s = service.spec;
  if (needsClusterIP(old) && needsClusterIP(service)) {
    if (!s.clusterIP && old.spec.clusterIP) s.clusterIP = old.spec.clusterIP;
    if (!s.clusterIPs?.length && old.spec.clusterIPs?.length) s.clusterIPs = [...old.spec.clusterIPs];
    if (!s.ipFamilies?.length && old.spec.ipFamilies?.length) s.ipFamilies = [...old.spec.ipFamilies];
    if (!s.ipFamilyPolicy && old.spec.ipFamilyPolicy) s.ipFamilyPolicy = old.spec.ipFamilyPolicy;
  }
  if (needsNodePorts(old) && needsNodePorts(service)) {
    const oldPorts = old.spec.ports ?? [];
    for (const port of s.ports ?? []) {
      if (port.nodePort) continue;
      const match =
        oldPorts.find((o) => o.port === port.port && o.protocol === port.protocol) ?? oldPorts.find((o) => o.name && o.name === port.name);
      if (match?.nodePort) port.nodePort = match.nodePort;
    }
  }
  // dropTypeDependentFields: fields the old type needed and the new one does not, when left as they were.
  if (!needsClusterIP(service) && needsClusterIP(old)) {
    if (s.clusterIP === old.spec.clusterIP) delete s.clusterIP;
    if (jsonEqual(s.clusterIPs ?? null, old.spec.clusterIPs ?? null)) delete s.clusterIPs;
    if (jsonEqual(s.ipFamilies ?? null, old.spec.ipFamilies ?? null)) delete s.ipFamilies;
    if (s.ipFamilyPolicy === old.spec.ipFamilyPolicy) delete s.ipFamilyPolicy;
  }
  if (!needsNodePorts(service) && needsNodePorts(old)) {
    for (const port of s.ports ?? []) {
      const before = (old.spec.ports ?? []).find((o) => o.port === port.port && o.protocol === port.protocol);
      if (before && port.nodePort === before.nodePort) delete port.nodePort;
    }
  }
}

/**
 * initIPFamilyFields for a single-stack IPv4 cluster: a headless Service without a selector is
 * RequireDualStack, every other one SingleStack; the families default to the cluster's one.
 */
function defaultIPFamilies(service: Service): void {
  const s = service.spec;
  if (!needsClusterIP(service)) return;
  if (!s.ipFamilyPolicy)
    s.ipFamilyPolicy = isHeadless(service) && !Object.keys(s.selector ?? {}).length ? "RequireDualStack" : "SingleStack";
  if (!s.ipFamilies?.length) s.ipFamilies = ["IPv4"];
}

function validatePort(port: ServicePort, requireName: boolean, names: Set<string>, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && !port.name) errs.push(fieldError.required(at.child("name")));
  else if (port.name) {
    errs.push(...dnsLabel(port.name, at.child("name")));
    if (names.has(port.name)) errs.push(fieldError.duplicate(at.child("name"), port.name));
    names.add(port.name);
  }
  for (const msg of isValidPortNum(port.port)) errs.push(fieldError.invalid(at.child("port"), port.port, msg));
  if (!port.protocol) errs.push(fieldError.required(at.child("protocol")));
  else if (!PROTOCOLS.includes(port.protocol)) errs.push(fieldError.notSupported(at.child("protocol"), port.protocol, PROTOCOLS));
  const target = port.targetPort ?? 0;
  const targetMsgs = typeof target === "number" ? isValidPortNum(target) : isValidPortName(target);
  for (const msg of targetMsgs) errs.push(fieldError.invalid(at.child("targetPort"), target, msg));
  if (port.appProtocol !== undefined)
    for (const msg of isQualifiedName(port.appProtocol)) errs.push(fieldError.invalid(at.child("appProtocol"), port.appProtocol, msg));
  return errs;
}

/** ValidateNonSpecialIP: addresses a Service or an endpoint may not use. */
export function validateNonSpecialIP(ip: string, at: FieldPath | string): FieldError[] {
  const n = ipv4ToNumber(ip);
  const lower = ip.toLowerCase();
  if (n === undefined && isIP(ip) !== 6) return [fieldError.invalid(at, ip, "must be a valid IP address")];
  const errs: FieldError[] = [];
  if (n === 0 || lower === "::") errs.push(fieldError.invalid(at, ip, `may not be unspecified (${ip})`));
  if ((n !== undefined && n >>> 24 === 127) || lower === "::1")
    errs.push(fieldError.invalid(at, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"));
  if ((n !== undefined && n >>> 16 === (169 << 8) + 254) || /^fe[89ab]/.test(lower))
    errs.push(fieldError.invalid(at, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"));
  if ((n !== undefined && n >>> 8 === 224 << 16) || lower.startsWith("ff02:"))
    errs.push(fieldError.invalid(at, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"));
  return errs;
}

/** ValidateServiceClusterIPsRelatedFields. */
function validateClusterIPs(service: Service): FieldError[] {
  if (service.spec.type === "ExternalName") return [];
  const s = service.spec;
  const errs: FieldError[] = [];
  const clusterIPs = s.clusterIPs ?? [];
  const at = spec.child("clusterIPs");
  if (s.clusterIP) {
    if (clusterIPs.length === 0) errs.push(fieldError.required(at));
    else if (clusterIPs[0] !== s.clusterIP) errs.push(fieldError.invalid(at, clusterIPs, "first value must match `clusterIP`"));
  } else if (clusterIPs.length) errs.push(fieldError.invalid(at, clusterIPs, "must be empty when `clusterIP` is not specified"));
  const seen = new Set<string>();
  (s.ipFamilies ?? []).forEach((family, i) => {
    if (!IP_FAMILIES.includes(family)) errs.push(fieldError.notSupported(spec.child("ipFamilies").index(i), family, IP_FAMILIES));
    if (seen.has(family)) errs.push(fieldError.duplicate(spec.child("ipFamilies").index(i), family));
    seen.add(family);
  });
  if (s.ipFamilyPolicy !== undefined && !IP_FAMILY_POLICIES.includes(s.ipFamilyPolicy))
    errs.push(fieldError.notSupported(spec.child("ipFamilyPolicy"), s.ipFamilyPolicy, IP_FAMILY_POLICIES));
  let invalidIPs = false;
  clusterIPs.forEach((ip, i) => {
    if (i === 0 && ip === CLUSTER_IP_NONE) {
      if (clusterIPs.length > 1) {
        invalidIPs = true;
        errs.push(fieldError.invalid(at, clusterIPs, "'None' must be the first and only value"));
      }
      return;
    }
    const bad = validIP(ip, at.index(i));
    if (bad.length) invalidIPs = true;
    errs.push(...bad);
  });
  if (clusterIPs.length > 2) errs.push(fieldError.invalid(at, clusterIPs, "may only hold up to 2 values"));
  if (invalidIPs) return errs;
  if (clusterIPs.length > 1 && isIP(clusterIPs[0]!) === isIP(clusterIPs[1]!))
    errs.push(fieldError.invalid(at, clusterIPs, "may specify no more than one IP for each IP family"));
  if (!isHeadless(service)) {
    clusterIPs.forEach((ip, i) => {
      const family = s.ipFamilies?.[i];
      if (family === "IPv4" && isIP(ip) === 6)
        errs.push(fieldError.invalid(at.index(i), ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (family === "IPv6" && isIP(ip) !== 6)
        errs.push(fieldError.invalid(at.index(i), ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return errs;
}

/** The ServicePort Go prints in a duplicate's message: only protocol and port are set. */
const goServicePortKey = (port: ServicePort) =>
  `core.ServicePort{Name:"", Protocol:"${port.protocol ?? ""}", AppProtocol:(*string)(nil), Port:${port.port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`;

/** ValidateService (ObjectMeta is the store's). */
export function validateService(service: Service): FieldError[] {
  const s = service.spec;
  const errs: FieldError[] = [];
  const ports = s.ports ?? [];
  const portsAt = spec.child("ports");
  if (ports.length === 0 && !isHeadless(service) && s.type !== "ExternalName") errs.push(fieldError.required(portsAt));
  switch (s.type) {
    case "LoadBalancer":
      ports.forEach((port, i) => {
        if (port.port === KUBELET_PORT)
          errs.push(
            fieldError.invalid(portsAt.index(i), port.port, `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`),
          );
      });
      if (isHeadless(service))
        errs.push(
          fieldError.invalid(spec.child("clusterIPs").index(0), CLUSTER_IP_NONE, "may not be set to 'None' for LoadBalancer services"),
        );
      break;
    case "NodePort":
      if (isHeadless(service))
        errs.push(fieldError.invalid(spec.child("clusterIPs").index(0), CLUSTER_IP_NONE, "may not be set to 'None' for NodePort services"));
      break;
    case "ExternalName": {
      if (s.clusterIPs?.length) errs.push(fieldError.forbidden(spec.child("clusterIPs"), "may not be set for ExternalName services"));
      if (s.ipFamilies?.length) errs.push(fieldError.forbidden(spec.child("ipFamilies"), "may not be set for ExternalName services"));
      if (s.ipFamilyPolicy !== undefined)
        errs.push(fieldError.forbidden(spec.child("ipFamilyPolicy"), "may not be set for ExternalName services"));
      // A trailing dot marks the name fully qualified.
      const cname = (s.externalName ?? "").replace(/\.$/, "");
      if (cname) for (const msg of isDNS1123Subdomain(cname)) errs.push(fieldError.invalid(spec.child("externalName"), cname, msg));
      else errs.push(fieldError.required(spec.child("externalName")));
      break;
    }
  }
  const names = new Set<string>();
  ports.forEach((port, i) => errs.push(...validatePort(port, ports.length > 1, names, portsAt.index(i))));
  if (s.selector) errs.push(...validateLabels(s.selector, spec.child("selector")));
  if (!s.sessionAffinity) errs.push(fieldError.required(spec.child("sessionAffinity")));
  else if (!["ClientIP", "None"].includes(s.sessionAffinity))
    errs.push(fieldError.notSupported(spec.child("sessionAffinity"), s.sessionAffinity, ["ClientIP", "None"]));
  const affinityAt = spec.child("sessionAffinityConfig");
  if (s.sessionAffinity === "ClientIP") {
    const timeout = s.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    const when = "when session affinity type is ClientIP";
    if (!s.sessionAffinityConfig) errs.push(fieldError.required(affinityAt, when));
    else if (!s.sessionAffinityConfig.clientIP) errs.push(fieldError.required(affinityAt.child("clientIP"), when));
    else if (timeout === undefined) errs.push(fieldError.required(affinityAt.child("clientIP", "timeoutSeconds"), when));
    else if (timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS)
      errs.push(
        fieldError.invalid(
          affinityAt.child("clientIP", "timeoutSeconds"),
          timeout,
          `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`,
        ),
      );
  } else if (s.sessionAffinity === "None" && s.sessionAffinityConfig) {
    errs.push(fieldError.forbidden(affinityAt, "must not be set when session affinity is None"));
  }
  errs.push(...validateClusterIPs(service));
  (s.externalIPs ?? []).forEach((ip, i) => {
    const bad = validIP(ip, spec.child("externalIPs").index(i));
    errs.push(...(bad.length ? bad : validateNonSpecialIP(ip, spec.child("externalIPs").index(i))));
  });
  if (!s.type) errs.push(fieldError.required(spec.child("type")));
  else if (!SERVICE_TYPES.includes(s.type)) errs.push(fieldError.notSupported(spec.child("type"), s.type, SERVICE_TYPES));
  if (s.type === "ClusterIP") {
    ports.forEach((port, i) => {
      if (port.nodePort) errs.push(fieldError.forbidden(portsAt.index(i).child("nodePort"), "may not be used when `type` is 'ClusterIP'"));
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((port, i) => {
    if (!port.nodePort) return;
    const key = `${port.protocol}/${port.nodePort}`;
    if (nodePorts.has(key)) errs.push(fieldError.duplicate(portsAt.index(i).child("nodePort"), port.nodePort));
    nodePorts.add(key);
  });
  const portKeys = new Set<string>();
  ports.forEach((port, i) => {
    const key = `${port.protocol}/${port.port}`;
    // Go prints the struct with %#v: the text is the detail, with no quoted value before it.
    if (portKeys.has(key)) errs.push({ ...fieldError.duplicate(portsAt.index(i), omitValue), detail: goServicePortKey(port) });
    portKeys.add(key);
  });
  if (s.loadBalancerSourceRanges?.length && s.type !== "LoadBalancer")
    errs.push(fieldError.forbidden(spec.child("LoadBalancerSourceRanges"), "may only be used when `type` is 'LoadBalancer'"));
  // validateServiceExternalTrafficPolicy and validateServiceInternalTrafficFieldsValue.
  const external = s.type === "NodePort" || s.type === "LoadBalancer";
  if (external) {
    if (!s.externalTrafficPolicy) errs.push(fieldError.required(spec.child("externalTrafficPolicy")));
    else if (!TRAFFIC_POLICIES.includes(s.externalTrafficPolicy))
      errs.push(fieldError.notSupported(spec.child("externalTrafficPolicy"), s.externalTrafficPolicy, TRAFFIC_POLICIES));
  } else if (s.externalTrafficPolicy) {
    errs.push(
      fieldError.invalid(
        spec.child("externalTrafficPolicy"),
        s.externalTrafficPolicy,
        "may only be set for externally-accessible services",
      ),
    );
  }
  if (s.type !== "ExternalName") {
    if (!s.internalTrafficPolicy) errs.push(fieldError.required(spec.child("internalTrafficPolicy")));
    else if (!TRAFFIC_POLICIES.includes(s.internalTrafficPolicy))
      errs.push(fieldError.notSupported(spec.child("internalTrafficPolicy"), s.internalTrafficPolicy, TRAFFIC_POLICIES));
  }
  if (s.type === "LoadBalancer") {
    if (s.allocateLoadBalancerNodePorts === undefined) errs.push(fieldError.required(spec.child("allocateLoadBalancerNodePorts")));
    if (s.loadBalancerClass !== undefined)
      for (const msg of isQualifiedName(s.loadBalancerClass))
        errs.push(fieldError.invalid(spec.child("loadBalancerClass"), s.loadBalancerClass, msg));
  } else {
    if (s.allocateLoadBalancerNodePorts !== undefined)
      errs.push(fieldError.forbidden(spec.child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"));
    if (s.loadBalancerClass !== undefined)
      errs.push(fieldError.forbidden(spec.child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"));
  }
  return errs;
}

/** validateUpgradeDowngradeClusterIPs, for the single-stack case: a primary clusterIP never changes. */
function validateClusterIPUpdate(service: Service, old: Service): FieldError[] {
  if (service.spec.type === "ExternalName" || old.spec.type === "ExternalName") return [];
  if (isHeadless(service) && isHeadless(old)) return [];
  const now = service.spec.clusterIPs ?? [];
  const before = old.spec.clusterIPs ?? [];
  const at = spec.child("clusterIPs");
  const errs: FieldError[] = [];
  if (before.length === now.length) {
    before.forEach((ip, i) => {
      if (ip !== now[i]) errs.push(fieldError.invalid(at.index(i), now, "may not change once set"));
    });
  } else if (before.length > now.length) {
    if (now.length === 0) errs.push(fieldError.invalid(at.index(0), now, "primary clusterIP can not be unset"));
    else if (now[0] !== before[0]) errs.push(fieldError.invalid(at.index(0), now, "may not change once set"));
  } else if (before.length > 0 && now[0] !== before[0]) {
    errs.push(fieldError.invalid(at.index(0), now, "may not change once set"));
  }
  if (
    old.spec.type === "LoadBalancer" &&
    service.spec.type === "LoadBalancer" &&
    service.spec.loadBalancerClass !== old.spec.loadBalancerClass
  )
    errs.push(fieldError.invalid(spec.child("loadBalancerClass"), service.spec.loadBalancerClass ?? null, "may not change once set"));
  return errs;
}

/**
 * Allocation (storage/alloc.go), after validation: a clusterIP from the range (or the one asked for, if
 * free and in range) and a node port for each port of a NodePort or LoadBalancer Service. What it takes
 * is recorded in storage at once (service-allocator.ts) and given back by `revert` if the write fails.
 */
async function allocate(service: Service, old: Service | undefined, allocators: ServiceAllocators): Promise<FieldError[]> {
  const s = service.spec;
  const errs: FieldError[] = [];
  // initIPFamilyFields on a single-stack IPv4 cluster.
  if (needsClusterIP(service)) {
    (s.ipFamilies ?? []).forEach((family, i) => {
      if (family !== "IPv4") errs.push(fieldError.invalid(spec.child("ipFamilies").index(i), family, "not configured on this cluster"));
    });
    const headlessWithoutSelector = isHeadless(service) && !Object.keys(s.selector ?? {}).length;
    if (s.ipFamilyPolicy === "RequireDualStack" && !headlessWithoutSelector)
      errs.push(
        fieldError.invalid(spec.child("ipFamilyPolicy"), s.ipFamilyPolicy, "this cluster is not configured for dual-stack services"),
      );
    if (errs.length) return errs;
  }
  const { clusterIPs, nodePorts } = allocators;
  if (needsClusterIP(service) && !isHeadless(service) && !(old && needsClusterIP(old) && old.spec.clusterIP)) {
    const requested = s.clusterIPs?.[0];
    const fail = (why: string) =>
      errs.push(fieldError.invalid(spec.child("clusterIPs"), s.clusterIPs ?? [], `failed to allocate IP ${requested}: ${why}`));
    if (requested) {
      const n = ipv4ToNumber(requested);
      if (n === undefined || !clusterIPs.inRange(n))
        fail(`the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${allocators.range.cidr}`);
      else if ((await allocators.take(clusterIPs, n, service)) === undefined) fail("provided IP is already allocated");
    } else {
      const n = await allocators.take(clusterIPs, undefined, service);
      if (n === undefined) throw errors.internal("failed to allocate a serviceIP: range is full");
      s.clusterIP = numberToIpv4(n);
      s.clusterIPs = [s.clusterIP];
    }
  }
  if (needsNodePorts(service)) {
    const oldPorts = new Set(old && needsNodePorts(old) ? (old.spec.ports ?? []).map((p) => p.nodePort) : []);
    const ports = s.ports ?? [];
    for (const [i, port] of ports.entries()) {
      if (port.nodePort && oldPorts.has(port.nodePort)) continue;
      if (port.nodePort) {
        const at = spec.child("ports").index(i).child("nodePort");
        if (!nodePorts.inRange(port.nodePort))
          errs.push(
            fieldError.invalid(
              at,
              port.nodePort,
              `provided port is not in the valid range. The range of valid ports is ${nodePorts.first}-${nodePorts.last}`,
            ),
          );
        else if ((await allocators.take(nodePorts, port.nodePort, service)) === undefined)
          errs.push(fieldError.invalid(at, port.nodePort, "provided port is already allocated"));
        continue;
      }
      // Ports that differ only in protocol share one node port, as Kubernetes allocates them.
      const sibling = ports.find((p) => p !== port && p.port === port.port && p.nodePort);
      const n = sibling?.nodePort ?? (await allocators.take(nodePorts, undefined, service));
      if (n === undefined) throw errors.internal("failed to allocate a nodePort: range is full");
      port.nodePort = n;
    }
  }
  return errs;
}

/** ValidateLoadBalancerStatus, on /status. */
function validateLoadBalancerStatus(service: Service): FieldError[] {
  const errs: FieldError[] = [];
  (service.status.loadBalancer?.ingress ?? []).forEach((ingress, i) => {
    const at = FieldPath.root("status", "loadBalancer", "ingress").index(i);
    if (ingress.ip) errs.push(...validIP(ingress.ip, at.child("ip")));
    if (ingress.ipMode !== undefined) {
      if (!ingress.ip) errs.push(fieldError.forbidden(at.child("ipMode"), "may not be specified when `ip` is not"));
      else if (!["Proxy", "VIP"].includes(ingress.ipMode))
        errs.push(fieldError.notSupported(at.child("ipMode"), ingress.ipMode, ["Proxy", "VIP"]));
    }
    if (ingress.hostname) {
      for (const msg of isDNS1123Subdomain(ingress.hostname)) errs.push(fieldError.invalid(at.child("hostname"), ingress.hostname, msg));
      if (isIP(ingress.hostname))
        errs.push(fieldError.invalid(at.child("hostname"), ingress.hostname, "must be a DNS name, not an IP address"));
    }
  });
  return errs;
}

/** `80/TCP`, `80:30080/TCP`, joined with commas; `<none>` without ports (printers.go makePortString). */
function portsColumn(service: Service): string {
  const ports = service.spec.ports ?? [];
  if (!ports.length) return "<none>";
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(",");
}

/** getServiceExternalIP (printers.go). */
function externalIPColumn(service: Service): string {
  const s = service.spec;
  const external = (s.externalIPs ?? []).join(",");
  switch (s.type) {
    case "ClusterIP":
    case "NodePort":
      return external || "<none>";
    case "LoadBalancer": {
      const ingress = (service.status.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || "").filter(Boolean);
      const all = [...ingress, ...(s.externalIPs ?? [])];
      return all.length ? all.join(",") : "<pending>";
    }
    case "ExternalName":
      return s.externalName ?? "";
    default:
      return "<unknown>";
  }
}

const asService = (o: unknown) => o as Service;

export const serviceColumns: PrinterColumn[] = [
  column("Type", "string", (o) => asService(o).spec.type ?? ""),
  column("Cluster-IP", "string", (o) => asService(o).spec.clusterIP || "<none>"),
  column("External-IP", "string", (o) => externalIPColumn(asService(o))),
  column("Port(s)", "string", (o) => portsColumn(asService(o))),
  AGE,
  column("Selector", "string", (o) => formatLabels(asService(o).spec.selector), 1),
];

function serviceStrategy(allocators: ServiceAllocators | undefined): Strategy<Service> {
  return {
    defaults: defaultService,
    prepareForCreate: (service) => {
      normalizeClusterIPs(service);
      defaultIPFamilies(service);
    },
    prepareForUpdate: (service, old) => {
      normalizeClusterIPs(service, old);
      keepAllocated(service, old);
      defaultIPFamilies(service);
    },
    validateName: (name, prefix) => nameIsDNS1035Label(name, prefix),
    validate: validateService,
    validateUpdate: (service, old) => [...validateClusterIPUpdate(service, old), ...validateService(service)],
    admit: (service, old) => {
      if (!allocators) throw errors.internal("Services are not written without allocators");
      return allocate(service, old, allocators);
    },
    revertAdmit: async (service) => allocators?.revert(service),
  };
}

/**
 * The Service kind, allocating from `allocators` (the apiserver's, in its storage); without them (a
 * registry used only to list kinds) Services are described but not written.
 */
export const services = (allocators?: ServiceAllocators): KindDefinition => {
  const { strategy, status: statusOnly } = statusSubresource(serviceStrategy(allocators), () => ({ loadBalancer: {} }));
  const status: SubresourceStrategy<Service> = { ...statusOnly, validateUpdate: (service) => validateLoadBalancerStatus(service) };
  return defineKind({
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    shortNames: ["svc"],
    categories: ["all"],
    namespaced: true,
    schema: ServiceSchema,
    strategy,
    subresources: { status },
    // As Kubernetes' service storage: a delete answers with the Service.
    deleteReturnsObject: true,
    printerColumns: serviceColumns,
  });
};
