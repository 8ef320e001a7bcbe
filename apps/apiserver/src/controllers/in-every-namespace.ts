// One object that every namespace has, kept there by a level-triggered controller: Kubernetes'
// serviceaccounts-controller (the `default` ServiceAccount) and root-ca-cert-publisher (the cluster's
// CA in `kube-root-ca.crt`) are both this. A namespace being deleted is left alone; the object is
// created again if it is deleted, and put back as it should be if it drifts.
import type { ObjectHeader } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { StatusError } from "@orch/machinery";
import type { RequestContext, ResourceStore } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

export interface NamespaceObject {
  /** Controller name, for logs. */
  name: string;
  /** The store of the object's kind, and the storage resource it is kept under (`core/serviceaccounts`). */
  store: ResourceStore;
  resource: string;
  objectName: string;
  /** The object as it should be in `namespace`. */
  desired(namespace: string): ObjectHeader;
  /** The stored object with what drifted put back, or undefined when it is as it should be. */
  repair?(current: ObjectHeader): ObjectHeader | undefined;
}

export class InEveryNamespace {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;

  constructor(
    storage: Storage,
    private readonly namespaces: ResourceStore,
    private readonly object: NamespaceObject,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    // Of the object's kind, only the one named as it: the others (100,000 ServiceAccounts) are not parsed.
    this.informer = new StorageInformer(storage, {
      resources: ["core/namespaces", object.resource],
      keep: (key) => key.resource !== object.resource || key.name === object.objectName,
      log,
    });
    this.controller = runController({
      name: object.name,
      reconciler: (namespace) => this.reconcile(namespace),
      // Keyed by namespace: a namespace itself, or the object in it.
      sources: [
        {
          informer: this.informer,
          toKeys: (obj) =>
            obj.kind === "Namespace"
              ? [obj.metadata.name ?? ""]
              : obj.metadata.name === object.objectName
                ? [obj.metadata.namespace ?? ""]
                : [],
        },
      ],
      log,
    });
  }

  private async reconcile(namespace: string): Promise<void> {
    const ns = await this.namespaces.find("", namespace);
    if (!ns || ns.metadata.deletionTimestamp) return;
    const { store, objectName } = this.object;
    const current = await store.find(namespace, objectName);
    try {
      if (!current) {
        await store.create(namespace, { value: this.object.desired(namespace) }, this.ctx(), {});
        return;
      }
      const repaired = this.object.repair?.(current);
      // The resourceVersion it was read at makes a concurrent change a conflict, retried by the queue.
      if (repaired) await store.update(namespace, objectName, undefined, this.ctx(), {}, () => repaired);
    } catch (e) {
      // Created meanwhile, or the namespace began terminating (403) or went away: nothing to do.
      if (e instanceof StatusError && (e.code === 409 || e.code === 403 || e.code === 404) && !current) return;
      throw e;
    }
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
