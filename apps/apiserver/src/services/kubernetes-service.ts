// The `kubernetes` Service in `default`, as Kubernetes' control plane controller keeps it: the first
// address of the service range, port 443 (`https`) to the apiserver's port; and its Endpoints and
// EndpointSlice naming the apiserver's address (the endpoint reconciler's), which no selector maintains.
// Written through the stores at every start, and corrected when the apiserver's port or address changed.
import type { EndpointSlice, Endpoints, NamingProfile, ObjectHeader, Service } from "@orch/api";
import type { Logger } from "@orch/log";
import { StatusError, jsonEqual } from "@orch/machinery";
import type { RequestContext, ResourceStore } from "@orch/registry";
import { networkInterfaces } from "node:os";
import { isIP } from "node:net";

export const KUBERNETES_SERVICE = "kubernetes";
const NAMESPACE = "default";

/**
 * The address clients reach the apiserver at (Kubernetes' --advertise-address): the bind address when
 * it is a routable IPv4 address, else the host's first non-loopback IPv4 interface, as Kubernetes
 * picks one. Undefined when the host has none: Endpoints may not name a loopback address.
 */
export function advertiseAddress(bind: string): string | undefined {
  if (isIP(bind) === 4 && bind !== "0.0.0.0" && !bind.startsWith("127.")) return bind;
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === "IPv4" && !a.internal && !a.address.startsWith("169.254."));
    if (found) return found.address;
  }
  return undefined;
}

interface Stores {
  services: ResourceStore;
  endpoints: ResourceStore;
  endpointSlices: ResourceStore;
}

/** Creates `desired`, or updates the stored object when `differs` says it must change; a racing writer wins. */
async function ensure(
  store: ResourceStore,
  desired: ObjectHeader,
  ctx: RequestContext,
  differs: (current: ObjectHeader) => boolean,
  apply: (current: ObjectHeader) => ObjectHeader,
): Promise<void> {
  const name = desired.metadata.name!;
  const current = await store.find(NAMESPACE, name);
  try {
    if (!current) await store.create(NAMESPACE, { value: desired }, ctx, { fieldManager: "kube-apiserver" });
    else if (differs(current))
      await store.update(NAMESPACE, name, undefined, ctx, { fieldManager: "kube-apiserver" }, (c) => apply(c ?? current));
  } catch (e) {
    if (!(e instanceof StatusError && (e.code === 409 || e.code === 404))) throw e;
  }
}

export async function ensureKubernetesService(
  stores: Stores,
  profile: NamingProfile,
  clusterIP: string,
  port: number,
  address: string | undefined,
  ctx: RequestContext,
  log: Logger,
): Promise<void> {
  const ports = [{ name: "https", protocol: "TCP", port: 443, targetPort: port }];
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: KUBERNETES_SERVICE, namespace: NAMESPACE, labels: { component: "apiserver", provider: "kubernetes" } },
    spec: { type: "ClusterIP", clusterIP, ports, sessionAffinity: "None" },
  };
  await ensure(
    stores.services,
    service,
    ctx,
    (c) => !jsonEqual((c as Service).spec.ports, ports) || (c as Service).spec.type !== "ClusterIP",
    (c) => ({ ...c, spec: { ...(c as Service).spec, type: "ClusterIP", ports } }),
  );
  if (!address) {
    log.warn("no routable address for the apiserver: the kubernetes Service has no endpoints");
    return;
  }
  const endpointPorts = [{ name: "https", port, protocol: "TCP" }];
  const subsets = [{ addresses: [{ ip: address }], ports: endpointPorts }];
  // The endpoint reconciler's label: EndpointSlice mirroring leaves these Endpoints alone.
  const skipMirror = { [`endpointslice.${profile.wellKnownDomain}/skip-mirror`]: "true" };
  await ensure(
    stores.endpoints,
    { apiVersion: "v1", kind: "Endpoints", metadata: { name: KUBERNETES_SERVICE, namespace: NAMESPACE, labels: skipMirror }, subsets },
    ctx,
    (c) => !jsonEqual((c as Endpoints).subsets, subsets),
    (c) => ({ ...c, subsets }),
  );
  const sliceEndpoints = [{ addresses: [address], conditions: { ready: true } }];
  await ensure(
    stores.endpointSlices,
    {
      apiVersion: `${profile.group("discovery")}/v1`,
      kind: "EndpointSlice",
      metadata: {
        name: KUBERNETES_SERVICE,
        namespace: NAMESPACE,
        labels: { [`${profile.wellKnownDomain}/service-name`]: KUBERNETES_SERVICE },
      },
      addressType: "IPv4",
      endpoints: sliceEndpoints,
      ports: endpointPorts,
    },
    ctx,
    (c) => !jsonEqual((c as EndpointSlice).endpoints, sliceEndpoints) || !jsonEqual((c as EndpointSlice).ports, endpointPorts),
    (c) => ({ ...c, endpoints: sliceEndpoints, ports: endpointPorts }),
  );
}
