// A closed-loop load generator: N concurrent clients over HTTPS keep-alive, each sending its next
// request when the previous one answers. Latency is measured per request.
import { Pool } from "undici";

export interface Tls {
  ca: string;
  cert: string;
  key: string;
}

export function pool(origin: string, tls: Tls, connections: number): Pool {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    connect: { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: true },
  });
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

export const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Runs `total` requests from `concurrency` loops; `request(i)` must resolve to the HTTP status. */
export async function runLoad(
  total: number,
  concurrency: number,
  request: (i: number) => Promise<number>,
  expectStatus: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t0 = performance.now();
        const status = await request(i);
        latencies.push(performance.now() - t0);
        if (status !== expectStatus) errors++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { requests: total, seconds, perSecond: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

/**
 * Creates a namespace and waits until it is settled: the apiserver gives every namespace its `default`
 * ServiceAccount, a write that would otherwise land among what is being measured.
 */
export async function createNamespace(p: Pool, name: string): Promise<void> {
  const res = await p.request({
    path: "/api/v1/namespaces",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } }),
  });
  await res.body.dump();
  for (;;) {
    const sa = await p.request({ path: `/api/v1/namespaces/${name}/serviceaccounts/default`, method: "GET" });
    await sa.body.dump();
    if (sa.statusCode === 200) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A load's figure measured in turn with others: its median round, and every round's rate in order. */
export interface InTurnResult extends LoadResult {
  rounds: number[];
}

/**
 * Loads compared with each other, measured in turn: `rounds` rounds, each load once per round
 * (`run(round)`), the order reversed every other round (A B, B A, …), so that a spike, a slowdown or
 * a warming of a shared machine hits every load alike. Each load's figure is its median round, with the
 * errors of all rounds; `ratioInTurn` compares two round by round.
 */
export async function inTurn<K extends string>(
  loads: Record<K, (round: number) => Promise<LoadResult>>,
  rounds = 3,
): Promise<Record<K, InTurnResult>> {
  const names = Object.keys(loads) as K[];
  const results = new Map<K, LoadResult[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) results.get(name)!.push(await loads[name](round));
  }
  const figures = {} as Record<K, InTurnResult>;
  for (const name of names) {
    const all = results.get(name)!;
    const median = [...all].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(all.length / 2)]!;
    figures[name] = { ...median, errors: all.reduce((sum, r) => sum + r.errors, 0), rounds: all.map((r) => r.perSecond) };
  }
  return figures;
}

/**
 * How `a` compares with `b` (1 = as fast): the median of the two's ratios within each round. The machine's
 * speed drifts over minutes; within one round both loads ran in the same few seconds, so each round's
 * ratio holds less of the drift than the ratio of the two medians.
 */
export function ratioInTurn(a: InTurnResult, b: InTurnResult): number {
  return percentile(
    a.rounds.map((rate, i) => rate / b.rounds[i]!).sort((x, y) => x - y),
    50,
  );
}
