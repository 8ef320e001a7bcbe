// Deletes what nothing owns any more, as Kubernetes' garbage collector does with ownerReferences:
// - an object whose owners are all gone is deleted (background propagation);
// - an owner deleted with the `orphan` finalizer first loses its dependents' references to it;
// - an owner deleted with `foregroundDeletion` waits until its dependents are gone.
// A graph (owner uid → dependents) follows every commit through a storage informer; each change
// queues the uids it concerns, and a worker settles each by reading the current object, so a repeated
// look is harmless.
import type { ObjectHeader } from "@orch/api";
import { errors } from "@orch/machinery";
import {
  FOREGROUND_FINALIZER,
  type KindDefinition,
  type KindRegistry,
  ORPHAN_FINALIZER,
  type RequestContext,
  type ResourceStore,
  kindPerStorage,
  storageResource,
} from "@orch/registry";
import { type Controller, WorkQueue, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { lostRace } from "./write-races.js";
import { type Storage, StorageInformer } from "@orch/storage";

interface Entry {
  resource: string;
  namespace: string;
  name: string;
  owners: readonly string[];
}

interface OwnerReference {
  uid: string;
  blockOwnerDeletion?: boolean;
}

/** Most objects have no owner: their entries share this list. */
const NO_OWNERS: readonly string[] = [];

const ownerUids = (obj: ObjectHeader): readonly string[] =>
  obj.metadata.ownerReferences?.length ? (obj.metadata.ownerReferences as OwnerReference[]).map((r) => r.uid) : NO_OWNERS;

const RETRY_MS = 1000;

export class GarbageCollector {
  /** Every live object by uid, with the owners it names. */
  private readonly objects = new Map<string, Entry>();
  /** Each storage resource's name once, not once per entry (every stored row brings its own copy). */
  private readonly resources = new Map<string, string>();
  /** Owner uid → uids of the objects that name it. */
  private readonly dependents = new Map<string, Set<string>>();
  /** Uids to look at; the graph's handlers add them, workers settle them once the graph is complete. */
  private readonly queue = new WorkQueue<string>({ name: "garbage-collector" });
  private readonly informer: StorageInformer<ObjectHeader>;
  private controller: Controller | undefined;
  private stopped = false;

  constructor(
    storage: Storage,
    private readonly registry: KindRegistry,
    private readonly storeFor: (kind: KindDefinition) => ResourceStore,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    // Every kind's objects: those served at start are listed; custom kinds served later are followed
    // from their first commit.
    this.informer = new StorageInformer(storage, {
      resources: () => [...new Set(registry.all().map(storageResource))],
      follows: () => true,
      log,
    });
    this.informer.addEventHandler({
      onAdd: (obj, key) => this.index(obj, key),
      onUpdate: (_old, obj, key) => this.index(obj, key),
      onDelete: (obj) => this.forgetDeleted(obj),
    });
    // The apiserver does not wait for the first list; the workers do: an owner not yet listed is not gone.
    this.informer.waitForSync().then(
      () => {
        if (this.stopped) return;
        this.controller = runController({
          name: "garbage-collector",
          queue: this.queue,
          reconciler: (uid) => this.reconcile(uid),
          sources: [],
          log,
        });
      },
      (e) => log.error("garbage collector could not list the objects", e),
    );
  }

  private index(obj: ObjectHeader, key: { resource: string; namespace: string; name: string }): void {
    const uid = obj.metadata.uid!;
    this.forget(uid);
    const owners = ownerUids(obj);
    let resource = this.resources.get(key.resource);
    if (resource === undefined) this.resources.set(key.resource, (resource = key.resource));
    this.objects.set(uid, { resource, namespace: key.namespace, name: key.name, owners });
    for (const owner of owners) {
      let set = this.dependents.get(owner);
      if (!set) this.dependents.set(owner, (set = new Set()));
      set.add(uid);
    }
    const finalizers = obj.metadata.finalizers ?? [];
    if (obj.metadata.deletionTimestamp && (finalizers.includes(ORPHAN_FINALIZER) || finalizers.includes(FOREGROUND_FINALIZER))) {
      this.queue.add(uid);
    }
    // While the first list runs, an owner may simply not be listed yet: the worker decides later.
    if (owners.some((o) => !this.objects.has(o))) this.queue.add(uid);
  }

  private forget(uid: string): void {
    for (const owner of this.objects.get(uid)?.owners ?? []) this.dependents.get(owner)?.delete(uid);
    this.objects.delete(uid);
  }

  private forgetDeleted(obj: ObjectHeader): void {
    const uid = obj.metadata.uid!;
    this.forget(uid);
    // Its dependents may now have no owner left; a foreground owner may have lost its last dependent.
    for (const dependent of this.dependents.get(uid) ?? []) this.queue.add(dependent);
    for (const owner of ownerUids(obj)) this.queue.add(owner);
    this.dependents.delete(uid);
  }

  private async reconcile(uid: string): Promise<{ requeueAfter: number } | undefined> {
    const entry = this.objects.get(uid);
    const store = entry && this.storeOf(entry.resource);
    if (!entry || !store) return;
    const obj = await store.find(entry.namespace, entry.name);
    if (!obj || obj.metadata.uid !== uid) return;
    try {
      if (await this.settle(obj, entry, store)) return { requeueAfter: RETRY_MS };
    } catch (e) {
      // Someone else changed it meanwhile: look again.
      if (!lostRace(e)) throw e;
      return { requeueAfter: RETRY_MS };
    }
  }

  /** Brings one object to where its owners and finalizers say it should be; true to look again later. */
  private async settle(obj: ObjectHeader, entry: Entry, store: ResourceStore): Promise<boolean> {
    const uid = obj.metadata.uid!;
    const finalizers = obj.metadata.finalizers ?? [];
    const deleting = obj.metadata.deletionTimestamp !== undefined;
    if (deleting && finalizers.includes(ORPHAN_FINALIZER)) {
      for (const dependent of [...(this.dependents.get(uid) ?? [])]) {
        await this.edit(dependent, (o) => {
          const refs = (o.metadata.ownerReferences ?? []) as OwnerReference[];
          const kept = refs.filter((r) => r.uid !== uid);
          if (kept.length > 0) o.metadata.ownerReferences = kept as typeof o.metadata.ownerReferences;
          else delete o.metadata.ownerReferences;
        });
      }
      await this.dropFinalizer(store, entry, ORPHAN_FINALIZER);
      return false;
    }
    if (deleting && finalizers.includes(FOREGROUND_FINALIZER)) {
      const remaining = [...(this.dependents.get(uid) ?? [])];
      for (const dependent of remaining) await this.deleteObject(dependent);
      if (remaining.length > 0) return true;
      await this.dropFinalizer(store, entry, FOREGROUND_FINALIZER);
      return false;
    }
    // A dependent: collected once none of its owners exists.
    if (entry.owners.length > 0 && entry.owners.every((o) => !this.objects.has(o))) {
      await this.deleteObject(uid);
    }
    return false;
  }

  private storeOf(resource: string): ResourceStore | undefined {
    const kind = kindPerStorage(this.registry.all()).find((k) => storageResource(k) === resource);
    return kind && this.storeFor(kind);
  }

  private async deleteObject(uid: string): Promise<void> {
    const entry = this.objects.get(uid);
    const store = entry && this.storeOf(entry.resource);
    if (!entry || !store) return;
    await store
      .delete(entry.namespace, entry.name, this.ctx(), { propagationPolicy: "Background", preconditions: { uid } }, false)
      .catch((e) => {
        if (!lostRace(e)) throw e;
      });
  }

  private async edit(uid: string, change: (obj: ObjectHeader) => void): Promise<void> {
    const entry = this.objects.get(uid);
    const store = entry && this.storeOf(entry.resource);
    if (!entry || !store) return;
    await store.update(entry.namespace, entry.name, undefined, this.ctx(), {}, (current) => {
      if (!current || current.metadata.uid !== uid) throw errors.notFound({ group: "", resource: entry.resource }, entry.name);
      change(current);
      return current;
    });
  }

  private async dropFinalizer(store: ResourceStore, entry: Entry, finalizer: string): Promise<void> {
    await store.update(entry.namespace, entry.name, undefined, this.ctx(), {}, (current) => {
      if (!current) throw errors.notFound({ group: "", resource: entry.resource }, entry.name);
      current.metadata.finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      return current;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.shutDown();
    await this.controller?.stop();
    this.informer.stop();
  }
}
