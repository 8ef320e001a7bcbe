// Many HTTP watchers on one resource while it is written: the apiserver reads each revision once and
// fans it out, so delivery latency should stay flat as watchers are added.
import { Agent, type Pool, request } from "undici";
import { type Tls, percentile } from "./load.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WatcherFanout {
  watchers: number;
  events: number;
  /** Deliveries seen over all watchers; `watchers × events` when nothing was lost. */
  deliveries: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * Opens `watchers` watches on one namespace's service accounts, then creates `events` of them at `rate`
 * per second (open loop). The latency of a delivery is from sending the create to a watcher reading its
 * ADDED event, over every watcher and event; it includes the HTTP request and this client's own parsing.
 */
export async function watcherFanout(origin: string, tls: Tls, p: Pool, watchers: number, events: number, rate: number): Promise<WatcherFanout> {
  const namespace = "fanout";
  const ns = await p.request({
    path: "/api/v1/namespaces",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  });
  await ns.body.dump();

  const agent = new Agent({ connect: { ...tls }, connections: null });
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let deliveries = 0;
  const expected = watchers * events;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  const NAME = /"name":"(f-\d+)"/;

  const opened = await Promise.all(
    Array.from({ length: watchers }, async () => {
      const res = await request(`${origin}/api/v1/namespaces/${namespace}/serviceaccounts?watch=true&allowWatchBookmarks=false`, {
        dispatcher: agent,
      });
      let buffer = "";
      res.body.on("data", (chunk: Buffer) => {
        const now = performance.now();
        buffer += chunk.toString();
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          // Cheap extraction: a thousand JSON.parse calls per event would measure this client, not the server.
          const t0 = line.startsWith('{"type":"ADDED"') ? sent.get(NAME.exec(line)?.[1] ?? "") : undefined;
          if (t0 === undefined) continue;
          latencies.push(now - t0);
          if (++deliveries === expected) resolveDone();
        }
      });
      res.body.on("error", () => undefined);
      return res;
    }),
  );
  await sleep(500);

  let errors = 0;
  const requests: Promise<void>[] = [];
  const start = performance.now();
  let i = 0;
  while (i < events) {
    const due = Math.min(events, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
    for (; i < due; i++) {
      const name = `f-${i}`;
      sent.set(name, performance.now());
      requests.push(
        p
          .request({
            path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name } }),
          })
          .then(
            async (r) => {
              await r.body.dump();
              if (r.statusCode !== 201) errors++;
            },
            () => void errors++,
          ),
      );
    }
    await sleep(2);
  }
  await Promise.all(requests);
  await Promise.race([done, sleep(30_000)]);
  for (const res of opened) res.body.destroy();
  await agent.close().catch(() => undefined);
  latencies.sort((a, b) => a - b);
  return { watchers, events, deliveries, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}
