// A mixed workload, so that a regression in any path shows: 70 % gets, 20 % updates (merge patches of a
// label) and 10 % lists with a label selector (about 1 % of the namespace's objects each), from 64
// clients, over objects of their own namespace.
import type { Pool } from "undici";
import { type LoadResult, createNamespace, runLoad } from "./load.js";

export const MIXED_OBJECTS = 2_000;
const SHARDS = 100;

export interface MixedResult extends LoadResult {
  /** Latency percentiles per kind of request. */
  byOp: Record<"get" | "update" | "list", { p50: number; p99: number }>;
}

/** Creates the namespace's objects (labelled `shard=<i mod 100>`). */
export async function prepareMixed(p: Pool, namespace: string): Promise<void> {
  await createNamespace(p, namespace);
  await runLoad(
    MIXED_OBJECTS,
    32,
    async (i) => {
      const r = await p.request({
        path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: `m-${i}`, labels: { shard: String(i % SHARDS) } },
        }),
      });
      await r.body.dump();
      return r.statusCode;
    },
    201,
  );
}

export async function mixedWorkload(p: Pool, namespace: string, total: number, clients = 64): Promise<MixedResult> {
  const latencies = { get: [] as number[], update: [] as number[], list: [] as number[] };
  const base = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  const result = await runLoad(
    total,
    clients,
    async (i) => {
      // A fixed pattern of ten: seven gets, two updates, one list.
      const slot = i % 10;
      const op = slot < 7 ? "get" : slot < 9 ? "update" : "list";
      const name = `m-${(i * 7919) % MIXED_OBJECTS}`;
      const t0 = performance.now();
      const r =
        op === "get"
          ? await p.request({ path: `${base}/${name}`, method: "GET" })
          : op === "update"
            ? await p.request({
                path: `${base}/${name}`,
                method: "PATCH",
                headers: { "content-type": "application/merge-patch+json" },
                body: JSON.stringify({ metadata: { labels: { touched: String(i) } } }),
              })
            : await p.request({ path: `${base}?labelSelector=shard%3D${i % SHARDS}`, method: "GET" });
      await r.body.dump();
      latencies[op].push(performance.now() - t0);
      return r.statusCode;
    },
    200,
  );
  const pct = (xs: number[], q: number) =>
    xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((q / 100) * xs.length))] ?? Number.NaN;
  const summary = (xs: number[]) => ({ p50: pct(xs, 50), p99: pct(xs, 99) });
  return { ...result, byOp: { get: summary(latencies.get), update: summary(latencies.update), list: summary(latencies.list) } };
}

/** Each kind of request of the mix alone, at 64 clients: where the mix's time goes. */
export async function mixedByKind(p: Pool, namespace: string, total: number, clients = 64): Promise<Record<string, LoadResult>> {
  const base = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  const send = async (path: string, init: { method: string; headers?: Record<string, string>; body?: string }) => {
    const r = await p.request({ path, ...init });
    await r.body.dump();
    return r.statusCode;
  };
  const name = (i: number) => `m-${(i * 7919) % MIXED_OBJECTS}`;
  return {
    get: await runLoad(total, clients, (i) => send(`${base}/${name(i)}`, { method: "GET" }), 200),
    update: await runLoad(
      total,
      clients,
      (i) =>
        send(`${base}/${name(i)}`, {
          method: "PATCH",
          headers: { "content-type": "application/merge-patch+json" },
          body: JSON.stringify({ metadata: { labels: { touched: String(i) } } }),
        }),
      200,
    ),
    list: await runLoad(Math.ceil(total / 6), clients, (i) => send(`${base}?labelSelector=shard%3D${i % SHARDS}`, { method: "GET" }), 200),
  };
}
