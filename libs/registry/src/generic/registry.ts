// The live set of served kinds. Custom resource definitions add and remove kinds while the server
// runs, so lookups go through here and discovery listens for changes.
import type { KindDefinition } from "./kind.js";

const resourceKey = (group: string, version: string, plural: string) => `${group}/${version}/${plural}`;

export class KindRegistry {
  private readonly byResource = new Map<string, KindDefinition>();
  private readonly listeners = new Set<() => void>();
  private grouped: Map<string, Map<string, KindDefinition[]>> | undefined;

  add(kind: KindDefinition): void {
    this.byResource.set(resourceKey(kind.group, kind.version, kind.plural), kind);
    this.changed();
  }

  remove(group: string, version: string, plural: string): void {
    if (this.byResource.delete(resourceKey(group, version, plural))) this.changed();
  }

  lookup(group: string, version: string, plural: string): KindDefinition | undefined {
    return this.byResource.get(resourceKey(group, version, plural));
  }

  /** The kind with this group and kind name, in any served version. */
  findKind(group: string, kind: string): KindDefinition | undefined {
    for (const k of this.byResource.values()) if (k.group === group && k.kind === kind) return k;
    return undefined;
  }

  all(): KindDefinition[] {
    return [...this.byResource.values()];
  }

  /** Group → versions (in registration order) → kinds. Built once per change of the kind set. */
  groups(): Map<string, Map<string, KindDefinition[]>> {
    if (this.grouped) return this.grouped;
    const out = new Map<string, Map<string, KindDefinition[]>>();
    for (const k of this.byResource.values()) {
      let versions = out.get(k.group);
      if (!versions) out.set(k.group, (versions = new Map()));
      let kinds = versions.get(k.version);
      if (!kinds) versions.set(k.version, (kinds = []));
      kinds.push(k);
    }
    this.grouped = out;
    return out;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.grouped = undefined;
    for (const l of this.listeners) l();
  }
}
