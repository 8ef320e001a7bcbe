// Empties namespaces that are being deleted, then lets them go: the job Kubernetes' namespace
// controller does. A controller on the work queue, one key per namespace: each reconcile looks at
// the namespace as it is now, so a restart or a missed change costs nothing but a look.
import type { ObjectHeader } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { type KindDefinition, type KindRegistry, type RequestContext, type ResourceStore, kindPerStorage } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

/** Contents with finalizers of their own go when those finalizers go: look again this much later. */
const RECHECK_MS = 1000;

export class NamespaceFinalizer {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;

  constructor(
    storage: Storage,
    private readonly registry: KindRegistry,
    private readonly storeFor: (kind: KindDefinition) => ResourceStore,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    this.informer = new StorageInformer(storage, { resources: ["core/namespaces"], log });
    this.controller = runController({
      name: "namespace-finalizer",
      reconciler: (name) => this.reconcile(name),
      sources: [{ informer: this.informer, filter: (event) => event.type !== "delete" && !!event.object.metadata.deletionTimestamp }],
      log,
    });
  }

  private async reconcile(name: string): Promise<{ requeueAfter: number } | undefined> {
    const namespaces = this.storeFor(this.registry.lookup("", "v1", "namespaces")!);
    const current = await namespaces.find("", name);
    if (!current?.metadata.deletionTimestamp) return;
    if (!(await this.emptyNamespace(name))) return { requeueAfter: RECHECK_MS };
    await namespaces.update("", name, "finalize", this.ctx(), {}, (latest) => {
      const obj = latest ?? current;
      const spec = (obj.spec ?? {}) as { finalizers?: string[] };
      return { ...obj, spec: { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== "kubernetes") } };
    });
  }

  /** Deletes everything in the namespace; true once nothing is left. */
  private async emptyNamespace(namespace: string): Promise<boolean> {
    let empty = true;
    // One pass per storage: the other versions of a custom resource show the same objects.
    for (const kind of kindPerStorage(this.registry.all())) {
      if (!kind.namespaced) continue;
      const store = this.storeFor(kind);
      await store.deleteCollection({ namespace }, this.ctx(), {}, false);
      if ((await store.list({ namespace, limit: 1 })).items.length > 0) empty = false;
    }
    return empty;
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
