// A ClusterReader over the storage: what strategies and answers read of other objects.
import type { ObjectHeader } from "@orch/api";
import { type Storage, StorageInformer } from "@orch/storage";
import type { ClusterReader } from "./kind.js";

const resource = (group: string, plural: string) => `${group || "core"}/${plural}`;

/**
 * The objects of a few small resources that admission reads on frequent writes (every pod create asks
 * for the default PriorityClass), kept from commits as Kubernetes' admission plugins keep them in
 * listers: no database read and parse per request. Commits reach it before the write that made them is
 * answered, so a request sees every write answered before it.
 */
export class KeptObjects {
  private readonly objects = new Map<string, Map<string, ObjectHeader>>();

  private constructor(
    private readonly informer: StorageInformer<ObjectHeader>,
    resources: readonly string[],
  ) {
    for (const r of resources) this.objects.set(r, new Map());
    const key = (obj: ObjectHeader) => `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    const of = (r: string) => this.objects.get(r)!;
    informer.addEventHandler({
      onAdd: (obj, k) => of(k.resource).set(key(obj), obj),
      onUpdate: (_old, obj, k) => of(k.resource).set(key(obj), obj),
      onDelete: (obj, k) => of(k.resource).delete(key(obj)),
    });
  }

  /** `resources` as storage names them (`<group>/<plural>`, `core/...` for the core group). */
  static async start(storage: Storage, resources: readonly string[]): Promise<KeptObjects> {
    const kept = new KeptObjects(new StorageInformer(storage, { resources }), resources);
    await kept.informer.waitForSync();
    return kept;
  }

  keeps(resource: string): boolean {
    return this.objects.has(resource);
  }

  /** The objects of a kept resource, in the storage's order: by namespace, then name. */
  list(resource: string, namespace?: string): ObjectHeader[] {
    const all = [...(this.objects.get(resource)?.values() ?? [])];
    const found = namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? "") === namespace);
    const order = (o: ObjectHeader) => [o.metadata.namespace ?? "", o.metadata.name ?? ""] as const;
    return found.sort((a, b) => {
      const [an, am] = order(a);
      const [bn, bm] = order(b);
      return an < bn ? -1 : an > bn ? 1 : am < bm ? -1 : am > bm ? 1 : 0;
    });
  }

  get(resource: string, namespace: string, name: string): ObjectHeader | undefined {
    return this.objects.get(resource)?.get(`${namespace}/${name}`);
  }

  close(): void {
    this.informer.stop();
  }
}

/** Objects from `kept` are shared with other readers and must not be changed. */
export function storageClusterReader(storage: Storage, kept?: KeptObjects): ClusterReader {
  return {
    list: async (group, plural, namespace) => {
      const r = resource(group, plural);
      if (kept?.keeps(r)) return kept.list(r, namespace);
      return (await storage.list({ resource: r, namespace })).items.map((o) => JSON.parse(o.value) as ObjectHeader);
    },
    get: async (group, plural, namespace, name) => {
      const r = resource(group, plural);
      if (kept?.keeps(r)) return kept.get(r, namespace, name);
      const stored = await storage.get({ resource: r, namespace, name });
      return stored ? (JSON.parse(stored.value) as ObjectHeader) : undefined;
    },
  };
}
