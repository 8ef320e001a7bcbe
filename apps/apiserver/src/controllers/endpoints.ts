// The endpoints and endpointslice controllers of Kubernetes (pkg/controller/endpoint, endpointslice) in
// one level-triggered loop: for every Service with a selector, Endpoints named like the Service and one
// EndpointSlice per set of resolved ports, listing the selected pods that have an IP — ready ones as
// `addresses`, the others as `notReadyAddresses` (in a slice: `conditions.ready`). Each key is a Service;
// every reconcile reads the Service, its pods and what exists now, and writes only the difference.
// The slices name the Service as their controlling owner, so the garbage collector removes them with it;
// Endpoints carry no owner in Kubernetes, so this loop deletes the ones it wrote when the Service is gone.
import type { EndpointSlice, EndpointSubset, Endpoints, NamingProfile, ObjectHeader, Pod, Service, ServicePort } from "@orch/api";
import { type Controller, WorkQueue, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { StatusError, jsonEqual } from "@orch/machinery";
import type { RequestContext, ResourceStore } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

export interface EndpointsStores {
  services: ResourceStore;
  pods: ResourceStore;
  endpoints: ResourceStore;
  endpointSlices: ResourceStore;
}

/** The label and annotation names of Kubernetes' controllers, under the profile's domains. */
export function endpointNames(profile: NamingProfile) {
  const domain = profile.wellKnownDomain;
  return {
    serviceName: `${domain}/service-name`,
    managedBy: `endpointslice.${domain}/managed-by`,
    controllerName: `endpointslice-controller.${profile.apiDomain}`,
    headless: `service.${domain}/headless`,
    lastChangeTriggerTime: `endpoints.${domain}/last-change-trigger-time`,
  };
}

const isPodReady = (pod: Pod) => (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
const podIP = (pod: Pod) => pod.status?.podIP || pod.status?.podIPs?.[0]?.ip || "";
const hasSelector = (service: Service) => Object.keys(service.spec.selector ?? {}).length > 0;
const isHeadless = (service: Service) => service.spec.clusterIP === "None";
const selects = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** ShouldPodBeInEndpoints: not finished for good (by its restart policy), and with an IP. */
function shouldBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (!podIP(pod)) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  const phase = pod.status?.phase;
  const restart = pod.spec?.restartPolicy;
  if (restart === "Never") return phase !== "Failed" && phase !== "Succeeded";
  if (restart === "OnFailure") return phase !== "Succeeded";
  return true;
}

/** FindPort: a numeric targetPort as it is, a named one from the container port of that name and protocol. */
function findPort(pod: Pod, port: ServicePort): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === "number") return target;
  for (const container of pod.spec?.containers ?? []) {
    const found = (container.ports ?? []).find((p) => p.name === target && (p.protocol ?? "TCP") === port.protocol);
    if (found) return found.containerPort;
  }
  return undefined;
}

interface ResolvedPort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

/** The service's ports as this pod serves them; a port the pod does not have is left out, as Kubernetes does. */
function podPorts(pod: Pod, service: Service): ResolvedPort[] {
  const ports: ResolvedPort[] = [];
  for (const servicePort of service.spec.ports ?? []) {
    const port = findPort(pod, servicePort);
    if (port === undefined) continue;
    ports.push({
      name: servicePort.name ?? "",
      port,
      protocol: servicePort.protocol ?? "TCP",
      ...(servicePort.appProtocol ? { appProtocol: servicePort.appProtocol } : {}),
    });
  }
  return ports;
}

const targetRef = (pod: Pod) => ({ kind: "Pod", namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid });
const byIP = <T extends { ip: string }>(a: T, b: T) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0);
const portsKey = (ports: ResolvedPort[]) =>
  JSON.stringify([...ports].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.port - b.port)));

/** The Endpoints' subsets: addresses grouped by the ports they serve (RepackSubsets), sorted. */
export function desiredSubsets(service: Service, pods: Pod[]): EndpointSubset[] {
  const tolerateUnready = service.spec.publishNotReadyAddresses === true;
  const groups = new Map<
    string,
    { ports: ResolvedPort[]; ready: EndpointSubset["addresses"] & {}; notReady: EndpointSubset["addresses"] & {} }
  >();
  for (const pod of pods) {
    if (!shouldBeInEndpoints(pod, tolerateUnready)) continue;
    const ports = podPorts(pod, service);
    // A pod that serves none of the ports is no endpoint, unless the headless Service has none.
    if (ports.length === 0 && !(isHeadless(service) && !(service.spec.ports ?? []).length)) continue;
    const address = {
      ip: podIP(pod),
      ...(pod.spec?.hostname && pod.spec.subdomain === service.metadata.name ? { hostname: pod.spec.hostname } : {}),
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: targetRef(pod),
    };
    const key = portsKey(ports);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ports: [...ports].sort((a, b) => a.port - b.port), ready: [], notReady: [] }));
    if (tolerateUnready || isPodReady(pod)) group.ready.push(address);
    else group.notReady.push(address);
  }
  return [...groups.keys()].sort().map((key) => {
    const group = groups.get(key)!;
    return {
      ...(group.ready.length ? { addresses: group.ready.sort(byIP) } : {}),
      ...(group.notReady.length ? { notReadyAddresses: group.notReady.sort(byIP) } : {}),
      ...(group.ports.length ? { ports: group.ports } : {}),
    };
  });
}

/** The slices' contents: one per set of resolved ports (a placeholder without endpoints when no pod serves). */
export function desiredSlices(service: Service, pods: Pod[]): Pick<EndpointSlice, "endpoints" | "ports">[] {
  const groups = new Map<string, { ports: ResolvedPort[]; endpoints: NonNullable<EndpointSlice["endpoints"]> }>();
  for (const pod of pods) {
    if (!shouldBeInEndpoints(pod, true)) continue;
    const ports = podPorts(pod, service);
    const ready = isPodReady(pod);
    const terminating = !!pod.metadata.deletionTimestamp;
    const key = portsKey(ports);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ports: [...ports].sort((a, b) => a.port - b.port), endpoints: [] }));
    group.endpoints.push({
      addresses: [podIP(pod)],
      conditions: { ready: (ready && !terminating) || service.spec.publishNotReadyAddresses === true, serving: ready, terminating },
      ...(pod.spec?.hostname && pod.spec.subdomain === service.metadata.name ? { hostname: pod.spec.hostname } : {}),
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: targetRef(pod),
    });
  }
  if (groups.size === 0) return [{ endpoints: [] }];
  return [...groups.keys()].sort().map((key) => {
    const group = groups.get(key)!;
    group.endpoints.sort((a, b) => (a.addresses[0]! < b.addresses[0]! ? -1 : a.addresses[0]! > b.addresses[0]! ? 1 : 0));
    return { endpoints: group.endpoints, ports: group.ports };
  });
}

const items = <T>(list: { items: { value: string }[] }): T[] => list.items.map((item) => JSON.parse(item.value) as T);
/**
 * What a newer event settles: the object (or its namespace) is gone, or changed since it was read; and a
 * namespace being terminated takes no new objects, as Kubernetes' controllers accept.
 */
const ignoreGone = (e: unknown) => {
  if (!(e instanceof StatusError)) throw e;
  const terminating = e.code === 403 && e.status.details?.causes?.some((c) => c.reason === "NamespaceTerminating");
  if (!(e.code === 404 || e.code === 409 || terminating)) throw e;
};

export class EndpointsController {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;
  /** namespace → Service name → selector, of the Services with one: which Services a pod's change concerns. */
  private readonly selectors = new Map<string, Map<string, Record<string, string>>>();
  private readonly names: ReturnType<typeof endpointNames>;

  constructor(
    storage: Storage,
    private readonly stores: EndpointsStores,
    profile: NamingProfile,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    this.names = endpointNames(profile);
    const slicesResource = `${profile.group("discovery")}/endpointslices`;
    this.informer = new StorageInformer(storage, { resources: ["core/services", "core/pods", "core/endpoints", slicesResource], log });
    const queue = new WorkQueue<string>({ name: "endpoints" });
    const enqueue = (obj: ObjectHeader, previous?: () => ObjectHeader) => {
      for (const key of this.keysOf(obj, previous)) queue.add(key);
    };
    // Registered before the controller starts the informer, so no change is missed.
    this.informer.addEventHandler({
      onAdd: (obj) => enqueue(obj),
      onUpdate: (previous, obj) => enqueue(obj, previous),
      onDelete: (obj) => enqueue(obj),
    });
    this.controller = runController({
      name: "endpoints",
      queue,
      reconciler: (key) => this.reconcile(key),
      sources: [{ informer: this.informer, toKeys: () => [] }],
      log,
    });
  }

  /** The Services an object's change concerns; Services' own changes also update the selector index. */
  private keysOf(obj: ObjectHeader, previous?: () => ObjectHeader): string[] {
    const namespace = obj.metadata.namespace ?? "";
    const name = obj.metadata.name ?? "";
    switch (obj.kind) {
      case "Service": {
        const selector = (obj as Service).spec?.selector ?? {};
        let inNamespace = this.selectors.get(namespace);
        if (!inNamespace) this.selectors.set(namespace, (inNamespace = new Map()));
        inNamespace.set(name, selector);
        return [`${namespace}/${name}`];
      }
      case "Pod": {
        const selecting = [...(this.selectors.get(namespace) ?? [])].filter(([, selector]) => Object.keys(selector).length > 0);
        // The pod's previous labels are read (parsed) only where a Service could have selected it.
        if (selecting.length === 0) return [];
        const labels = [obj.metadata.labels, previous?.().metadata.labels];
        return selecting
          .filter(([, selector]) => labels.some((l) => l && selects(selector, l)))
          .map(([service]) => `${namespace}/${service}`);
      }
      case "Endpoints":
        return [`${namespace}/${name}`];
      case "EndpointSlice": {
        const service = obj.metadata.labels?.[this.names.serviceName];
        return service ? [`${namespace}/${service}`] : [];
      }
      default:
        return [];
    }
  }

  private async reconcile(key: string): Promise<void> {
    const slash = key.indexOf("/");
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const service = (await this.stores.services.find(namespace, name)) as Service | undefined;
    if (!service) {
      this.selectors.get(namespace)?.delete(name);
      await this.removeFor(namespace, name);
      return;
    }
    // A Service without a selector has Endpoints its user (or the apiserver) writes.
    if (!hasSelector(service) || service.metadata.deletionTimestamp) return;
    const selector = Object.entries(service.spec.selector ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const pods = items<Pod>(await this.stores.pods.list({ namespace, labelSelector: selector }));
    await this.writeEndpoints(service, desiredSubsets(service, pods));
    await this.writeSlices(service, desiredSlices(service, pods));
  }

  /** The Service is gone: the Endpoints this loop wrote go too (its slices go with their owner, or here). */
  private async removeFor(namespace: string, name: string): Promise<void> {
    const existing = (await this.stores.endpoints.find(namespace, name)) as Endpoints | undefined;
    if (existing?.metadata.annotations?.[this.names.lastChangeTriggerTime] !== undefined) {
      await this.stores.endpoints
        .delete(namespace, name, this.ctx(), { preconditions: { uid: existing.metadata.uid } }, false)
        .catch(ignoreGone);
    }
    for (const slice of await this.slicesOf(namespace, name)) {
      await this.stores.endpointSlices
        .delete(namespace, slice.metadata.name!, this.ctx(), { preconditions: { uid: slice.metadata.uid } }, false)
        .catch(ignoreGone);
    }
  }

  private labelsFor(service: Service, extra: Record<string, string>): Record<string, string> {
    const labels: Record<string, string> = { ...service.metadata.labels, ...extra };
    if (isHeadless(service)) labels[this.names.headless] = "";
    else delete labels[this.names.headless];
    return labels;
  }

  private async writeEndpoints(service: Service, subsets: EndpointSubset[]): Promise<void> {
    const namespace = service.metadata.namespace!;
    const name = service.metadata.name!;
    const labels = this.labelsFor(service, {});
    const current = (await this.stores.endpoints.find(namespace, name)) as Endpoints | undefined;
    if (current && jsonEqual(current.subsets ?? [], subsets) && jsonEqual(current.metadata.labels ?? {}, labels)) return;
    const annotations = { ...current?.metadata.annotations, [this.names.lastChangeTriggerTime]: new Date().toISOString() };
    const desired: Endpoints = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { ...current?.metadata, name, namespace, labels, annotations },
      ...(subsets.length ? { subsets } : {}),
    };
    try {
      if (!current) await this.stores.endpoints.create(namespace, { value: desired }, this.ctx(), { fieldManager: "endpoint-controller" });
      // The version read is a precondition: a newer state is reconciled again from its own event.
      else
        await this.stores.endpoints.update(namespace, name, undefined, this.ctx(), { fieldManager: "endpoint-controller" }, () => desired);
    } catch (e) {
      ignoreGone(e);
    }
  }

  private async slicesOf(namespace: string, service: string): Promise<EndpointSlice[]> {
    const selector = `${this.names.serviceName}=${service},${this.names.managedBy}=${this.names.controllerName}`;
    return items<EndpointSlice>(await this.stores.endpointSlices.list({ namespace, labelSelector: selector }));
  }

  private async writeSlices(service: Service, desired: Pick<EndpointSlice, "endpoints" | "ports">[]): Promise<void> {
    const namespace = service.metadata.namespace!;
    const name = service.metadata.name!;
    const labels = this.labelsFor(service, { [this.names.serviceName]: name, [this.names.managedBy]: this.names.controllerName });
    const owner = { apiVersion: "v1", kind: "Service", name, uid: service.metadata.uid!, controller: true, blockOwnerDeletion: true };
    const addressType = service.spec.ipFamilies?.[0] === "IPv6" ? "IPv6" : "IPv4";
    const existing = (await this.slicesOf(namespace, name)).sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    const write = { fieldManager: "endpointslice-controller" };
    for (const [i, content] of desired.entries()) {
      const slice: EndpointSlice = {
        apiVersion: `${this.stores.endpointSlices.kind.group}/v1`,
        kind: "EndpointSlice",
        metadata: { generateName: `${name}-`, namespace, labels, ownerReferences: [owner] },
        addressType,
        endpoints: content.endpoints ?? [],
        ...(content.ports ? { ports: content.ports } : {}),
      };
      const current = existing[i];
      try {
        if (!current) {
          await this.stores.endpointSlices.create(namespace, { value: slice }, this.ctx(), write);
          continue;
        }
        const same =
          current.addressType === addressType &&
          jsonEqual(current.endpoints ?? [], slice.endpoints) &&
          jsonEqual(current.ports ?? [], slice.ports ?? []) &&
          jsonEqual(current.metadata.labels ?? {}, labels) &&
          jsonEqual(current.metadata.ownerReferences ?? [], [owner]);
        if (same) continue;
        if (current.addressType !== addressType) {
          // The address type never changes: a slice of the other type is replaced.
          await this.stores.endpointSlices.delete(namespace, current.metadata.name!, this.ctx(), {}, false);
          await this.stores.endpointSlices.create(namespace, { value: slice }, this.ctx(), write);
          continue;
        }
        const updated = { ...slice, metadata: { ...current.metadata, labels, ownerReferences: [owner] } };
        await this.stores.endpointSlices.update(namespace, current.metadata.name!, undefined, this.ctx(), write, () => updated);
      } catch (e) {
        ignoreGone(e);
      }
    }
    for (const extra of existing.slice(desired.length)) {
      await this.stores.endpointSlices
        .delete(namespace, extra.metadata.name!, this.ctx(), { preconditions: { uid: extra.metadata.uid } }, false)
        .catch(ignoreGone);
    }
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
