// Many HTTP watchers on one resource while it is written: the apiserver reads each revision once and
// fans it out, so delivery latency should stay flat as watchers are added.
import { type TLSSocket, connect, createSecureContext } from "node:tls";
import type { Pool } from "undici";
import { type Tls, percentile } from "./load.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WatcherFanout {
  watchers: number;
  events: number;
  /** Creates per second. */
  rate: number;
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
export async function watcherFanout(
  origin: string,
  tls: Tls,
  p: Pool,
  watchers: number,
  events: number,
  rate: number,
  namespace: string,
): Promise<WatcherFanout> {
  const ns = await p.request({
    path: "/api/v1/namespaces",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  });
  await ns.body.dump();

  // Raw TLS sockets with one shared secure context: an HTTP client per watcher would make this process,
  // not the apiserver, the bottleneck at 100,000 deliveries/s.
  const url = new URL(origin);
  const secureContext = createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key });
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let deliveries = 0;
  const expected = watchers * events;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  const MARK = '"name":"f-';

  const opened = await Promise.all(
    Array.from(
      { length: watchers },
      () =>
        new Promise<TLSSocket>((resolve, reject) => {
          const socket = connect({ host: url.hostname, port: Number(url.port), secureContext, servername: "localhost" }, () => {
            socket.write(
              `GET /api/v1/namespaces/${namespace}/serviceaccounts?watch=true HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n\r\n`,
            );
            resolve(socket);
          });
          socket.once("error", reject);
          socket.setEncoding("latin1");
          // Each event names its object once; a name split across reads completes with the next one.
          let tail = "";
          socket.on("data", (chunk: string) => {
            const now = performance.now();
            const text = tail + chunk;
            let at = 0;
            for (;;) {
              const start = text.indexOf(MARK, at);
              if (start < 0) {
                tail = text.slice(Math.max(at, text.length - MARK.length));
                break;
              }
              const end = text.indexOf('"', start + MARK.length);
              if (end < 0) {
                tail = text.slice(start);
                break;
              }
              at = end;
              const t0 = sent.get(text.slice(start + MARK.length - 2, end));
              if (t0 === undefined) continue;
              latencies.push(now - t0);
              if (++deliveries === expected) resolveDone();
            }
          });
        }),
    ),
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
  for (const socket of opened) socket.destroy();
  latencies.sort((a, b) => a - b);
  return { watchers, events, rate, deliveries, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}
