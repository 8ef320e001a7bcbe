// The list and memory figures: a list of many objects timed from the client, and the apiserver's resident
// memory holding many stored objects, after loading them and again after a restart and a list. Part of
// `npm run bench`; `npm run bench -- --memory` measures only these (docs/benchmarks.md).
import { readFileSync } from "node:fs";
import type { Pool } from "undici";
import { type LoadResult, createNamespace, percentile } from "./load.js";

export interface ListFigures {
  /** Milliseconds from sending each list until its whole body arrived, fastest first. */
  times: number[];
  bytes: number;
}

export interface MemoryFigures {
  list: ListFigures;
  listed: number;
  /** ServiceAccounts created by the bench, and stored in all (each namespace's `default` included) when the RSS was read. */
  created: number;
  stored: number;
  /** The creates into `bulk`: what keeping the memory down costs the writes shows here. */
  bulkCreates: LoadResult | undefined;
  rssLoaded: number;
  rssRestarted: number;
}

/** The resident memory of a process, in MiB. */
export const rssMiB = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
};

/** What `kubectl get` asks for: a Table, each row with the object's metadata. */
export const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/**
 * Lists the ServiceAccounts of `namespace` 7 times, checking each answer holds `expected` items; with
 * `pageSize`, each list is the chain of pages a chunked client (kubectl: 500) asks for, timed whole;
 * with `accept`, in that format (a Table's rows are counted as its items).
 */
export async function timeLists(p: Pool, namespace: string, expected: number, pageSize?: number, accept?: string): Promise<ListFigures> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const bodies: string[] = [];
    let token = "";
    do {
      const query = pageSize ? `?limit=${pageSize}${token ? `&continue=${encodeURIComponent(token)}` : ""}` : "";
      const r = await p.request({
        path: `/api/v1/namespaces/${namespace}/serviceaccounts${query}`,
        method: "GET",
        ...(accept ? { headers: { accept } } : {}),
      });
      const body: string = await r.body.text();
      bodies.push(body);
      token = pageSize ? ((JSON.parse(body) as { metadata: { continue?: string } }).metadata.continue ?? "") : "";
    } while (token);
    times.push(performance.now() - t0);
    bytes = bodies.reduce((n, b) => n + b.length, 0);
    const count = bodies.reduce((n, b) => {
      const list = JSON.parse(b) as { items?: unknown[]; rows?: unknown[] };
      return n + (list.items ?? list.rows ?? []).length;
    }, 0);
    if (count !== expected) throw new Error("list returned the wrong count");
  }
  return { times: times.sort((a, b) => a - b), bytes };
}

interface RunningApiserver {
  child: { pid?: number | undefined };
  stop(): Promise<void>;
}

/** The RSS of an apiserver started again on the same data: after its start and one list of every ServiceAccount. */
export async function rssAfterRestart<A extends RunningApiserver>(start: () => Promise<A>, pool: (api: A) => Pool): Promise<number> {
  const restarted = await start();
  const p = pool(restarted);
  const all = await p.request({ path: "/api/v1/serviceaccounts?limit=500", method: "GET" });
  await all.body.dump();
  const rss = rssMiB(restarted.child.pid!);
  await p.close();
  await restarted.stop();
  return rss;
}

/** The ServiceAccounts stored, from a one-item page's remainingItemCount. */
async function countServiceAccounts(p: Pool): Promise<number> {
  const r = await p.request({ path: "/api/v1/serviceaccounts?limit=1", method: "GET" });
  const list = (await r.body.json()) as { items: unknown[]; metadata: { remainingItemCount?: number } };
  return list.items.length + (list.metadata.remainingItemCount ?? 0);
}

/**
 * `--memory`: `listed` ServiceAccounts in namespace `listed`, timed lists of them, then ServiceAccounts in
 * `bulk` until `stored` exist, the RSS, a restart and the RSS again.
 */
export async function memoryFigures(options: {
  api: RunningApiserver;
  p: Pool;
  create: (namespace: string, prefix: string, count: number) => Promise<LoadResult>;
  restart: () => Promise<number>;
  listed: number;
  stored: number;
}): Promise<MemoryFigures> {
  const { api, p, create, listed, stored } = options;
  await createNamespace(p, "listed");
  await create("listed", "l", listed);
  // The objects created, and the namespace's default ServiceAccount.
  const list = await timeLists(p, "listed", listed + 1);
  await createNamespace(p, "bulk");
  const bulk = Math.max(0, stored - (await countServiceAccounts(p)));
  const bulkCreates = bulk > 0 ? await create("bulk", "b", bulk) : undefined;
  const count = await countServiceAccounts(p);
  const rssLoaded = rssMiB(api.child.pid!);
  await p.close();
  await api.stop();
  return { list, listed, created: listed + bulk, stored: count, bulkCreates, rssLoaded, rssRestarted: await options.restart() };
}

export const listMedian = (l: ListFigures): number => percentile(l.times, 50);
