// Records what an informer's handlers see, to compare with what was written.
import { expect } from "vitest";
import { type ApiClient, Informer, type InformerOptions, type KubeObject, keyOf, revisionOf } from "../src/index.js";
import type { Cluster } from "./helpers.js";

export type Mode = "nats" | "http";

export interface Call {
  op: "add" | "update" | "delete";
  key: string;
  revision: number;
  /** For updates: the revision of the object replaced. */
  from?: number;
}

export class Recorder<T extends KubeObject> {
  readonly calls: Call[] = [];
  /** When set, handlers wait for it (a slow consumer). */
  gate: Promise<void> | undefined;

  handlers() {
    return {
      onAdd: async (obj: T) => {
        this.calls.push({ op: "add", key: keyOf(obj), revision: revisionOf(obj) });
        await this.gate;
      },
      onUpdate: async (old: T, obj: T) => {
        this.calls.push({ op: "update", key: keyOf(obj), revision: revisionOf(obj), from: revisionOf(old) });
        await this.gate;
      },
      onDelete: async (obj: T) => {
        this.calls.push({ op: "delete", key: keyOf(obj), revision: revisionOf(obj) });
        await this.gate;
      },
    };
  }

  /** The revisions handlers heard about, events only (the list's adds excluded by revision). */
  eventRevisions(after: number): number[] {
    return this.calls.filter((c) => c.revision > after).map((c) => c.revision);
  }
}

export function informer<T extends KubeObject>(
  cluster: Cluster,
  mode: Mode,
  options: Omit<InformerOptions, "nats"> & { nats?: InformerOptions["nats"] },
  client: ApiClient = cluster.client,
): { informer: Informer<T>; recorder: Recorder<T>; errors: unknown[] } {
  const errors: unknown[] = [];
  const inf = new Informer<T>(client, {
    onError: (e) => errors.push(e),
    ...options,
    nats: mode === "nats" ? { servers: cluster.nats.url, fetchExpiresMs: 1000, ...options.nats } : undefined,
  });
  const recorder = new Recorder<T>();
  inf.addEventHandler(recorder.handlers());
  return { informer: inf, recorder, errors };
}

/** The informer's cache holds exactly the server's objects, at the server's revisions. */
export async function expectCacheMatchesServer<T extends KubeObject>(inf: Informer<T>, listed: () => Promise<T[]>): Promise<void> {
  const want = new Map((await listed()).map((o) => [keyOf(o), revisionOf(o)]));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const have = new Map(inf.list().map((o) => [keyOf(o), revisionOf(o)]));
    if (equalMaps(have, want)) return;
    if (Date.now() > deadline) {
      expect(Object.fromEntries(have)).toEqual(Object.fromEntries(want));
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function equalMaps(a: Map<string, number>, b: Map<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
