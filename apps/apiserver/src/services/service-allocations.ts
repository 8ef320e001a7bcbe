// Keeps the Service kind's allocators (cluster IPs, node ports) in step with the stored Services: a
// StorageInformer delivers every commit of a Service synchronously, so a value is known taken the moment
// the Service holding it is stored, and its record is freed as soon as a delete (or an update that drops
// it) commits, on every replica. What the allocators do with storage: libs/registry's service-allocator.ts.
//
// The repair pass (the leader's, at start and every REPAIR_INTERVAL_MS) is Kubernetes' RepairIPAddress for
// both ranges: it writes the record of every value a stored Service holds that has none — Services
// stored before records existed, so an existing data directory needs no step by hand — and deletes
// records no stored Service holds, once they are older than any request (a create in flight writes its
// records before its Service).
import type { ObjectHeader, Service } from "@orch/api";
import type { Logger } from "@orch/log";
import { type PortRange, type RangeAllocator, ServiceAllocators, heldValues } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

/** Kubernetes' repair interval for service IPs and node ports (--repair-*-interval defaults to 3 min). */
const REPAIR_INTERVAL_MS = 3 * 60 * 1000;

export class ServiceAllocations {
  readonly allocators: ServiceAllocators;
  private readonly informer: StorageInformer<ObjectHeader>;

  private constructor(
    private readonly storage: Storage,
    cidr: string | undefined,
    nodePorts: PortRange | undefined,
    private readonly log: Logger,
  ) {
    this.allocators = new ServiceAllocators(storage, cidr, nodePorts, (e) => log.error("freeing a Service's allocation failed", e));
    this.informer = new StorageInformer(storage, { resources: ["core/services"], log });
    this.informer.addEventHandler({
      onAdd: (service) => this.allocators.observe(service as Service),
      onUpdate: (previous, service) => this.allocators.observe(service as Service, previous() as Service),
      onDelete: (service) => this.allocators.forget(service),
    });
  }

  /** Resolves once every stored Service's values are known. */
  static async start(
    storage: Storage,
    cidr: string | undefined,
    nodePorts: PortRange | undefined,
    log: Logger,
  ): Promise<ServiceAllocations> {
    const allocations = new ServiceAllocations(storage, cidr, nodePorts, log);
    await allocations.informer.waitForSync();
    return allocations;
  }

  /** Repairs now and every REPAIR_INTERVAL_MS; records younger than `graceMs` are left alone. */
  repairing(graceMs: number): { stop(): Promise<void> } {
    let pass = Promise.resolve();
    const run = () => {
      pass = pass.then(() => this.repair(graceMs)).catch((e) => this.log.error("repairing Service allocations failed", e));
    };
    run();
    const timer = setInterval(run, REPAIR_INTERVAL_MS);
    timer.unref();
    return {
      stop: async () => {
        clearInterval(timer);
        await pass;
      },
    };
  }

  /** One pass over both ranges. */
  async repair(graceMs: number): Promise<void> {
    const { items } = await this.storage.list({ resource: "core/services" });
    const services = items.map((item) => JSON.parse(item.value) as Service);
    const { clusterIPs, nodePorts } = this.allocators;
    await this.repairRange(clusterIPs, services, (s) => heldValues(s).ips, graceMs);
    await this.repairRange(nodePorts, services, (s) => heldValues(s).ports, graceMs);
  }

  private async repairRange(
    allocator: RangeAllocator,
    services: Service[],
    valuesOf: (service: Service) => number[],
    graceMs: number,
  ): Promise<void> {
    const { records } = allocator;
    const recorded = new Map((await records.list()).map(({ value, record }) => [value, record]));
    const held = new Set<number>();
    for (const service of services) {
      const { namespace = "", name = "", uid = "" } = service.metadata;
      for (const value of valuesOf(service).filter((v) => allocator.inRange(v))) {
        held.add(value);
        const owner = recorded.get(value)?.spec.parentRef.uid;
        if (owner === uid) continue;
        if (owner !== undefined || !(await records.claim(value, { namespace, name, uid })))
          this.log.error(`${records.resource} ${records.format(value)} of Service ${namespace}/${name} is recorded for another Service`);
      }
    }
    for (const [value, record] of recorded) {
      if (held.has(value) || Date.now() - Date.parse(record.metadata.creationTimestamp) < graceMs) continue;
      this.log.info(`${records.resource} ${records.format(value)} is held by no Service: freed`);
      await records.release(value, record.spec.parentRef.uid);
    }
  }

  stop(): void {
    this.informer.stop();
  }
}
