// Slow clients (slowloris) against everyone else: a get's latency from a few ordinary clients, first
// alone, then while hundreds of connections sit with half-sent request headers (each finished its TLS
// handshake, as a real attacker's would; the apiserver closes them after its 32 s header timeout).
import { type TLSSocket, connect } from "node:tls";
import type { Pool } from "undici";
import { type LoadResult, type Tls, runLoad } from "./load.js";

export interface SlowClientLatency {
  slow: number;
  alone: LoadResult;
  besideSlow: LoadResult;
}

async function dribble(origin: URL, tls: Tls): Promise<TLSSocket> {
  const socket = connect({ host: origin.hostname, port: Number(origin.port), ca: tls.ca, cert: tls.cert, key: tls.key });
  socket.on("error", () => undefined).resume();
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", () => resolve());
    socket.once("error", reject);
  });
  socket.write(`GET /api/v1/namespaces HTTP/1.1\r\nHost: ${origin.host}\r\nX-Slow: `);
  return socket;
}

export async function slowClientLatency(
  origin: string,
  tls: Tls,
  p: Pool,
  path: string,
  slowCount: number,
  gets: number,
): Promise<SlowClientLatency> {
  const get = async () => {
    const r = await p.request({ path, method: "GET" });
    await r.body.dump();
    return r.statusCode;
  };
  const clients = 4;
  const alone = await runLoad(gets, clients, get, 200);
  const url = new URL(origin);
  const sockets: TLSSocket[] = [];
  try {
    // In batches, so that the handshakes themselves are not what is measured.
    for (let i = 0; i < slowCount; i += 50) {
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(50, slowCount - i) }, () => dribble(url, tls)))));
    }
    const besideSlow = await runLoad(gets, clients, get, 200);
    return { slow: sockets.filter((s) => !s.destroyed).length, alone, besideSlow };
  } finally {
    for (const s of sockets) s.destroy();
  }
}
