// The informer's local cache: objects by key (`namespace/name`) plus secondary indexes kept in step
// with every write (client-go's threadSafeStore + Indexers).
import { type KubeObject, keyOf } from "../types.js";

/** Maps an object to the index values it is found under (e.g. its namespace, its owner's uid). */
export type IndexFunc<T> = (obj: T) => string[];

interface Index<T> {
  fn: IndexFunc<T>;
  byValue: Map<string, Set<string>>;
}

export class Cache<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexes = new Map<string, Index<T>>();

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** Stores the object under its key; returns what was there. */
  set(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    this.index(key, obj);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /** Adds an index over the objects already cached and every later write. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name)) throw new Error(`index "${name}" already exists`);
    const index: Index<T> = { fn, byValue: new Map() };
    this.indexes.set(name, index);
    for (const [key, obj] of this.items) add(index, key, obj);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index "${name}"`);
    const keys = index.byValue.get(value);
    return keys ? [...keys].map((k) => this.items.get(k)!) : [];
  }

  /** The values an index currently holds (e.g. every namespace seen). */
  indexValues(name: string): string[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index "${name}"`);
    return [...index.byValue.keys()];
  }

  private index(key: string, obj: T): void {
    for (const index of this.indexes.values()) add(index, key, obj);
  }

  private unindex(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      for (const value of index.fn(obj)) {
        const set = index.byValue.get(value);
        set?.delete(key);
        if (set?.size === 0) index.byValue.delete(value);
      }
    }
  }
}

function add<T>(index: Index<T>, key: string, obj: T): void {
  for (const value of index.fn(obj)) {
    let set = index.byValue.get(value);
    if (!set) index.byValue.set(value, (set = new Set()));
    set.add(key);
  }
}

/** The index most controllers want: objects by namespace ("" for cluster-scoped ones). */
export const namespaceIndex = <T extends KubeObject>(obj: T): string[] => [obj.metadata?.namespace ?? ""];
