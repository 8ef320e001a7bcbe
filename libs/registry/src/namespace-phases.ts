// The phase of every namespace, kept from commits, so that a create checks its namespace (exists, not
// Terminating) without a database read and a parse on every request.
import type { Change, Storage } from "@orch/storage";

const NAMESPACES = "core/namespaces";

const phaseOf = (value: string): string => (JSON.parse(value) as { status?: { phase?: string } }).status?.phase ?? "Active";

export class NamespacePhases {
  private readonly phases = new Map<string, string>();
  private readonly unsubscribe: () => void;
  /** While the initial list is read: namespaces committed meanwhile, whose commit is newer than the list. */
  private committedWhileLoading: Set<string> | undefined = new Set();

  private constructor(storage: Storage) {
    this.unsubscribe = storage.onCommit((change: Change) => {
      if (change.resource !== NAMESPACES) return;
      this.committedWhileLoading?.add(change.name);
      if (change.type === "DELETED") this.phases.delete(change.name);
      else this.phases.set(change.name, phaseOf(change.value));
    });
  }

  static async create(storage: Storage): Promise<NamespacePhases> {
    // Listening first: a namespace committed while the list is read keeps what its commit said.
    const index = new NamespacePhases(storage);
    for (const ns of (await storage.list({ resource: NAMESPACES })).items) {
      if (!index.committedWhileLoading!.has(ns.name)) index.phases.set(ns.name, phaseOf(ns.value));
    }
    index.committedWhileLoading = undefined;
    return index;
  }

  /** `undefined` when the namespace does not exist. */
  phase(name: string): string | undefined {
    return this.phases.get(name);
  }

  close(): void {
    this.unsubscribe();
  }
}
