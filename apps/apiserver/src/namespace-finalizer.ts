// Empties namespaces that are being deleted, then lets them go: the job Kubernetes' namespace
// controller does. It is level-triggered: every pass looks at all Terminating namespaces, so a
// restart or a missed change costs nothing but a pass.
import type { ObjectHeader } from "@orch/api";
import type { KindDefinition, KindRegistry, RequestContext, ResourceStore } from "@orch/registry";
import type { Storage } from "@orch/storage";
import { serialTask } from "./serial-task.js";
import type { Logger } from "@orch/log";

const PASS_INTERVAL_MS = 1000;

export class NamespaceFinalizer {
  private timer: NodeJS.Timeout | undefined;
  private readonly kick = serialTask(
    () => this.pass(),
    (e) => this.log.error("namespace cleanup failed", e),
  );
  private readonly unsubscribe: () => void;

  constructor(
    storage: Storage,
    private readonly registry: KindRegistry,
    private readonly storeFor: (kind: KindDefinition) => ResourceStore,
    private readonly ctx: () => RequestContext,
    private readonly log: Logger,
  ) {
    this.unsubscribe = storage.onCommit((change) => {
      if (change.resource === "core/namespaces" && change.type === "MODIFIED") this.kick();
    });
    this.kick();
  }

  private async pass(): Promise<void> {
    const namespaces = this.registry.lookup("", "v1", "namespaces");
    if (!namespaces) return;
    const nsStore = this.storeFor(namespaces);
    const { items } = await nsStore.list({});
    let pending = false;
    for (const item of items) {
      const ns = JSON.parse(item.value) as ObjectHeader;
      if (!ns.metadata.deletionTimestamp) continue;
      const name = ns.metadata.name!;
      if (!(await this.emptyNamespace(name))) {
        pending = true;
        continue;
      }
      await nsStore.update("", name, "finalize", this.ctx(), {}, (current) => {
        const obj = current ?? ns;
        const spec = (obj.spec ?? {}) as { finalizers?: string[] };
        return { ...obj, spec: { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== "kubernetes") } };
      });
    }
    clearTimeout(this.timer);
    // Contents with finalizers of their own go when those finalizers go; look again soon.
    if (pending) this.timer = setTimeout(() => this.kick(), PASS_INTERVAL_MS);
  }

  /** Deletes everything in the namespace; true once nothing is left. */
  private async emptyNamespace(namespace: string): Promise<boolean> {
    let empty = true;
    for (const kind of this.registry.all()) {
      if (!kind.namespaced) continue;
      const store = this.storeFor(kind);
      await store.deleteCollection({ namespace }, this.ctx(), {}, false);
      if ((await store.list({ namespace, limit: 1 })).items.length > 0) empty = false;
    }
    return empty;
  }

  stop(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
  }
}
