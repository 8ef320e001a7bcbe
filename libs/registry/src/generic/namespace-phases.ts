// The phase of every namespace, kept from commits, so that a create checks its namespace (exists, not
// Terminating) without a database read and a parse on every request.
import { type Storage, StorageInformer } from "@orch/storage";

type Namespace = { metadata: { name: string }; status?: { phase?: string } };

export class NamespacePhases {
  private readonly phases = new Map<string, string>();

  private constructor(private readonly informer: StorageInformer<Namespace>) {
    const set = (ns: Namespace) => this.phases.set(ns.metadata.name, ns.status?.phase ?? "Active");
    informer.addEventHandler({
      onAdd: set,
      onUpdate: (_old, ns) => set(ns),
      onDelete: (ns) => this.phases.delete(ns.metadata.name),
    });
  }

  static async create(storage: Storage): Promise<NamespacePhases> {
    const index = new NamespacePhases(new StorageInformer(storage, { resources: ["core/namespaces"] }));
    await index.informer.waitForSync();
    return index;
  }

  /** `undefined` when the namespace does not exist. */
  phase(name: string): string | undefined {
    return this.phases.get(name);
  }

  close(): void {
    this.informer.stop();
  }
}
