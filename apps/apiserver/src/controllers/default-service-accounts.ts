// Kubernetes' serviceaccounts-controller (kube-controller-manager): every namespace that is not being
// deleted has a ServiceAccount named `default` — created with the namespace, and again if it is deleted —
// so that `kubectl create token default` and pods without a serviceAccountName work in any namespace.
import type { ObjectHeader } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { StatusError } from "@orch/machinery";
import type { RequestContext, ResourceStore } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

const DEFAULT = "default";

export class DefaultServiceAccounts {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;

  constructor(
    storage: Storage,
    private readonly namespaces: ResourceStore,
    private readonly serviceAccounts: ResourceStore,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    this.informer = new StorageInformer(storage, { resources: ["core/namespaces", "core/serviceaccounts"], log });
    this.controller = runController({
      name: "default-service-accounts",
      reconciler: (namespace) => this.reconcile(namespace),
      // Keyed by namespace: a namespace itself, or the `default` ServiceAccount in it.
      sources: [
        {
          informer: this.informer,
          toKeys: (obj) =>
            obj.kind === "Namespace" ? [obj.metadata.name ?? ""] : obj.metadata.name === DEFAULT ? [obj.metadata.namespace ?? ""] : [],
        },
      ],
      log,
    });
  }

  private async reconcile(namespace: string): Promise<void> {
    const ns = await this.namespaces.find("", namespace);
    if (!ns || ns.metadata.deletionTimestamp) return;
    if (await this.serviceAccounts.find(namespace, DEFAULT)) return;
    try {
      await this.serviceAccounts.create(
        namespace,
        { value: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: DEFAULT, namespace } } },
        this.ctx(),
        {},
      );
    } catch (e) {
      // Created meanwhile, or the namespace began terminating (403): either way nothing to do.
      if (e instanceof StatusError && (e.code === 409 || e.code === 403 || e.code === 404)) return;
      throw e;
    }
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
