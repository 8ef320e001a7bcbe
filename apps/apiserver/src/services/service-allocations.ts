// Keeps the Service kind's allocators (cluster IPs, node ports) equal to what the stored Services hold:
// a StorageInformer delivers every commit of a Service synchronously, so a value is taken the moment
// the Service holding it is stored and free the moment its delete commits, and a restart rebuilds the
// whole set from storage before the first request is served.
import type { ObjectHeader, Service } from "@orch/api";
import type { Logger } from "@orch/log";
import { ServiceAllocators } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

export class ServiceAllocations {
  readonly allocators: ServiceAllocators;
  private readonly informer: StorageInformer<ObjectHeader>;

  private constructor(storage: Storage, cidr: string | undefined, log: Logger) {
    this.allocators = new ServiceAllocators(cidr);
    this.informer = new StorageInformer(storage, { resources: ["core/services"], log });
    this.informer.addEventHandler({
      onAdd: (service) => this.allocators.observe(service as Service),
      onUpdate: (_old, service) => this.allocators.observe(service as Service),
      onDelete: (service) => this.allocators.forget(service),
    });
  }

  /** Resolves once every stored Service's values are known. */
  static async start(storage: Storage, cidr: string | undefined, log: Logger): Promise<ServiceAllocations> {
    const allocations = new ServiceAllocations(storage, cidr, log);
    await allocations.informer.waitForSync();
    return allocations;
  }

  stop(): void {
    this.informer.stop();
  }
}
