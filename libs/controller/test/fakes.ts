// In-memory stand-ins for the pieces of @orch/client the runtime uses, so the runner, status writes
// and leader election are tested without a network (the integration tests use a real apiserver).
import { ApiError, type EventHandlers, type KubeObject, type ResourceRef } from "@orch/client";
import type { InformerLike } from "../src/index.js";

export class FakeInformer<T extends KubeObject = KubeObject> implements InformerLike<T> {
  readonly handlers = new Set<EventHandlers<T>>();
  started = 0;
  private synced = false;
  private readonly waiters: Array<() => void> = [];

  addEventHandler(handlers: EventHandlers<T>): () => void {
    this.handlers.add(handlers);
    return () => void this.handlers.delete(handlers);
  }

  start(): void {
    this.started++;
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  sync(): void {
    this.synced = true;
    for (const w of this.waiters.splice(0)) w();
  }

  add(obj: T): void {
    for (const h of this.handlers) void h.onAdd?.(obj);
  }

  update(old: T, obj: T): void {
    for (const h of this.handlers) void h.onUpdate?.(old, obj);
  }

  delete(obj: T): void {
    for (const h of this.handlers) void h.onDelete?.(obj);
  }
}

export function apiError(code: number, reason: string, message = reason): ApiError {
  return new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", code, reason, message });
}

export interface Obj extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export function obj(name: string, extra: Partial<Obj> & { namespace?: string; generation?: number; rv?: string } = {}): Obj {
  const { namespace = "ns", generation, rv, ...rest } = extra;
  return {
    apiVersion: "v1",
    kind: "Thing",
    metadata: {
      name,
      namespace,
      ...(generation !== undefined ? { generation } : {}),
      ...(rv ? { resourceVersion: rv } : {}),
    } as Obj["metadata"],
    ...rest,
  };
}

/**
 * An object store with the apiserver's optimistic concurrency: a write with a stale resourceVersion is a
 * Conflict, a create of an existing name AlreadyExists. `hooks` inject faults per call.
 */
export class FakeStore {
  readonly objects = new Map<string, KubeObject>();
  private revision = 0;
  readonly calls: string[] = [];
  /** Called before each request; may throw (a failure) or return a promise that never settles (a hang). */
  before: ((method: string) => void | Promise<void>) | undefined;

  private key(ref: ResourceRef, namespace: string | undefined, name: string): string {
    return `${ref.plural}/${namespace ?? ""}/${name}`;
  }

  private stamp<T extends KubeObject>(o: T): T {
    const copy = structuredClone(o);
    copy.metadata = { ...copy.metadata, resourceVersion: String(++this.revision) };
    return copy;
  }

  async get<T extends KubeObject>(ref: ResourceRef, name: string, options: { namespace?: string } = {}): Promise<T> {
    this.calls.push(`get ${name}`);
    await this.before?.("get");
    const found = this.objects.get(this.key(ref, options.namespace, name));
    if (!found) throw apiError(404, "NotFound");
    return structuredClone(found) as T;
  }

  async create<T extends KubeObject>(ref: ResourceRef, o: T, options: { namespace?: string } = {}): Promise<T> {
    this.calls.push(`create ${o.metadata?.name}`);
    await this.before?.("create");
    const key = this.key(ref, options.namespace ?? o.metadata?.namespace, o.metadata!.name!);
    if (this.objects.has(key)) throw apiError(409, "AlreadyExists");
    const stored = this.stamp(o);
    this.objects.set(key, stored);
    return structuredClone(stored);
  }

  async update<T extends KubeObject>(ref: ResourceRef, o: T, options: { namespace?: string } = {}): Promise<T> {
    return this.write(ref, o, options, "update");
  }

  async updateSubresource<T extends KubeObject>(
    ref: ResourceRef,
    o: T,
    subresource: string,
    options: { namespace?: string } = {},
  ): Promise<T> {
    return this.write(ref, o, options, `update/${subresource}`);
  }

  private async write<T extends KubeObject>(ref: ResourceRef, o: T, options: { namespace?: string }, method: string): Promise<T> {
    this.calls.push(`${method} ${o.metadata?.name}`);
    await this.before?.(method);
    const key = this.key(ref, options.namespace ?? o.metadata?.namespace, o.metadata!.name!);
    const current = this.objects.get(key);
    if (!current) throw apiError(404, "NotFound");
    if (o.metadata?.resourceVersion !== current.metadata?.resourceVersion) throw apiError(409, "Conflict", "the object has been modified");
    const stored = this.stamp(o);
    this.objects.set(key, stored);
    return structuredClone(stored);
  }

  /** A write by someone else (bumps the resourceVersion). */
  touch(ref: ResourceRef, namespace: string, name: string, change: (o: any) => void): void {
    const key = this.key(ref, namespace, name);
    const current = structuredClone(this.objects.get(key)!);
    change(current);
    this.objects.set(key, this.stamp(current));
  }

  seed<T extends KubeObject>(ref: ResourceRef, o: T): T {
    const stored = this.stamp(o);
    this.objects.set(this.key(ref, o.metadata?.namespace, o.metadata!.name!), stored);
    return structuredClone(stored);
  }
}
