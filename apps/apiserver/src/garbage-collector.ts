// Deletes what nothing owns any more, as Kubernetes' garbage collector does with ownerReferences:
// - an object whose owners are all gone is deleted (background propagation);
// - an owner deleted with the `orphan` finalizer first loses its dependents' references to it;
// - an owner deleted with `foregroundDeletion` waits until its dependents are gone.
// An index (owner uid → dependents) follows every commit; each change marks the uids to look at,
// and a pass settles them by reading the current objects, so a repeated or missed look is harmless.
import type { ObjectHeader } from "@orch/api";
import { StatusError, errors } from "@orch/machinery";
import {
  FOREGROUND_FINALIZER,
  type KindDefinition,
  type KindRegistry,
  ORPHAN_FINALIZER,
  type RequestContext,
  type ResourceStore,
  storageResource,
} from "@orch/registry";
import type { Change, Storage } from "@orch/storage";
import { serialTask } from "./serial-task.js";
import type { Logger } from "@orch/log";

interface Entry {
  resource: string;
  namespace: string;
  name: string;
  owners: string[];
}

interface OwnerReference {
  uid: string;
  blockOwnerDeletion?: boolean;
}

const ownerUids = (obj: ObjectHeader): string[] => ((obj.metadata.ownerReferences ?? []) as OwnerReference[]).map((r) => r.uid);

const RETRY_MS = 1000;

export class GarbageCollector {
  /** Every live object by uid, with the owners it names. */
  private readonly objects = new Map<string, Entry>();
  /** Owner uid → uids of the objects that name it. */
  private readonly dependents = new Map<string, Set<string>>();
  /** Uids to look at in the next pass. */
  private readonly dirty = new Set<string>();
  private scanned = false;
  private readonly buffered: Change[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly run = serialTask(
    () => this.pass(),
    (e) => this.log.error("garbage collection failed", e),
  );
  private readonly unsubscribe: () => void;

  constructor(
    private readonly storage: Storage,
    private readonly registry: KindRegistry,
    private readonly storeFor: (kind: KindDefinition) => ResourceStore,
    private readonly ctx: () => RequestContext,
    private readonly log: Logger,
  ) {
    this.unsubscribe = storage.onCommit((change) => {
      if (!this.scanned) this.buffered.push(change);
      else this.observe(change);
      this.kick();
    });
    void this.scan().then(() => this.kick());
  }

  /** The index starts from one read of every object; changes committed meanwhile are applied after. */
  private async scan(): Promise<void> {
    const read = new Map<string, number>();
    for (const resource of new Set(this.registry.all().map(storageResource))) {
      const { items, revision } = await this.storage.list({ resource });
      read.set(resource, revision);
      for (const item of items) this.index(JSON.parse(item.value) as ObjectHeader, item);
    }
    for (const change of this.buffered.splice(0)) {
      if (change.revision > (read.get(change.resource) ?? 0)) this.observe(change);
    }
    this.scanned = true;
    // Owners that vanished while the apiserver was down leave dependents to collect.
    for (const [uid, entry] of this.objects) if (entry.owners.length > 0) this.dirty.add(uid);
  }

  private index(obj: ObjectHeader, key: { resource: string; namespace: string; name: string }): void {
    const uid = obj.metadata.uid!;
    this.forget(uid);
    const owners = ownerUids(obj);
    this.objects.set(uid, { resource: key.resource, namespace: key.namespace, name: key.name, owners });
    for (const owner of owners) {
      let set = this.dependents.get(owner);
      if (!set) this.dependents.set(owner, (set = new Set()));
      set.add(uid);
    }
    const finalizers = obj.metadata.finalizers ?? [];
    if (obj.metadata.deletionTimestamp && (finalizers.includes(ORPHAN_FINALIZER) || finalizers.includes(FOREGROUND_FINALIZER))) {
      this.dirty.add(uid);
    }
    if (owners.some((o) => !this.objects.has(o))) this.dirty.add(uid);
  }

  private forget(uid: string): void {
    for (const owner of this.objects.get(uid)?.owners ?? []) this.dependents.get(owner)?.delete(uid);
    this.objects.delete(uid);
  }

  private observe(change: Change): void {
    const obj = JSON.parse(change.value) as ObjectHeader;
    const uid = obj.metadata.uid!;
    if (change.type === "DELETED") {
      this.forget(uid);
      // Its dependents may now have no owner left; a foreground owner may have lost its last dependent.
      for (const dependent of this.dependents.get(uid) ?? []) this.dirty.add(dependent);
      for (const owner of ownerUids(obj)) this.dirty.add(owner);
      this.dependents.delete(uid);
      return;
    }
    this.index(obj, change);
  }

  private kick(): void {
    if (this.scanned && this.dirty.size > 0) this.run();
  }

  private async pass(): Promise<void> {
    const uids = [...this.dirty];
    this.dirty.clear();
    let later = false;
    for (const uid of uids) {
      const entry = this.objects.get(uid);
      if (!entry) continue;
      const store = this.storeOf(entry.resource);
      if (!store) continue;
      const obj = await store.get(entry.namespace, entry.name).then(
        (s) => JSON.parse(s.value) as ObjectHeader,
        () => undefined,
      );
      if (!obj || obj.metadata.uid !== uid) continue;
      let retry: boolean;
      try {
        retry = await this.settle(obj, entry, store);
      } catch (e) {
        // Someone else changed it meanwhile: look again.
        if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
        retry = true;
      }
      if (retry) {
        this.dirty.add(uid);
        later = true;
      }
    }
    clearTimeout(this.timer);
    if (later) this.timer = setTimeout(() => this.kick(), RETRY_MS);
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
    const kind = this.registry.all().find((k) => storageResource(k) === resource);
    return kind && this.storeFor(kind);
  }

  private async deleteObject(uid: string): Promise<void> {
    const entry = this.objects.get(uid);
    const store = entry && this.storeOf(entry.resource);
    if (!entry || !store) return;
    await store
      .delete(entry.namespace, entry.name, this.ctx(), { propagationPolicy: "Background", preconditions: { uid } }, false)
      .catch((e) => {
        if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
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

  stop(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
  }
}
