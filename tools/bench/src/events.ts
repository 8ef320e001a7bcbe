// The event stream on NATS: how soon a core NATS subscriber sees a create, and how many events/s the
// outbox relay publishes. The apiserver and nats-server are real processes.
import { connect } from "nats";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Pool } from "undici";
import { createNamespace, percentile } from "./load.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const serviceAccount = (name: string) => JSON.stringify({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name } });

async function create(p: Pool, namespace: string, name: string): Promise<number> {
  const res = await p.request({
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: serviceAccount(name),
  });
  await res.body.dump();
  return res.statusCode;
}

export interface NatsLatency {
  p50: number;
  p99: number;
  /** From the commit (the relay's `Orch-Committed-At` header) to the subscriber. */
  commitP50: number;
  commitP99: number;
  /** Creates actually sent per second (the target is `rate`). */
  sentPerSecond: number;
  events: number;
  errors: number;
}

// A subscriber on a thread of its own: in the load generator's thread its callbacks would wait behind
// the thousand requests a second being sent, and that wait is not the apiserver's.
const SUBSCRIBER = `
const { parentPort, workerData } = require("node:worker_threads");
const { connect } = require(workerData.nats);
(async () => {
  const nc = await connect({ servers: workerData.url });
  const latencies = [];
  nc.subscribe(workerData.subject, {
    callback: (err, msg) => {
      if (err) return;
      const committedAt = Number(msg.headers && msg.headers.get("Orch-Committed-At"));
      if (committedAt > 0 && msg.json().type === "ADDED") latencies.push(performance.timeOrigin + performance.now() - committedAt);
    },
  });
  await nc.flush();
  parentPort.postMessage("ready");
  parentPort.once("message", async () => {
    await nc.drain();
    parentPort.postMessage(latencies);
  });
})();
`;

/** Starts the commit-time subscriber; `stop` returns the commit → delivery latencies of ADDED events. */
async function commitLatencySubscriber(url: string, subject: string): Promise<{ stop(): Promise<number[]> }> {
  const worker = new Worker(SUBSCRIBER, { eval: true, workerData: { url, subject, nats: createRequire(import.meta.url).resolve("nats") } });
  await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    stop: async () => {
      const result = new Promise<number[]>((resolve) => worker.once("message", resolve));
      worker.postMessage("stop");
      const latencies = await result;
      await worker.terminate();
      return latencies;
    },
  };
}

/**
 * Creates at a steady `rate` per second for `seconds` (open loop: each is sent at its time, whatever the
 * previous ones are doing), with two core NATS subscriptions on the namespace's subject: one here, timing
 * each event from sending its create (so including the HTTP request), and one on its own thread, timing it
 * from the commit (the relay's `Orch-Committed-At` header).
 */
export async function natsLatency(p: Pool, natsUrl: string, rate: number, seconds: number): Promise<NatsLatency> {
  const namespace = "nats-latency";
  await createNamespace(p, namespace);
  const nc = await connect({ servers: natsUrl });
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  const total = Math.round(rate * seconds);
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  const fromCommit = await commitLatencySubscriber(natsUrl, `orch.events.core.serviceaccounts.${namespace}.*`);
  const sub = nc.subscribe(`orch.events.core.serviceaccounts.${namespace}.*`, {
    callback: (err, msg) => {
      if (err) return;
      const now = performance.now();
      const event = msg.json<{ type: string; object: { metadata: { name: string } } }>();
      const t0 = sent.get(event.object.metadata.name);
      if (event.type === "ADDED" && t0 !== undefined) latencies.push(now - t0);
      if (latencies.length === total) resolveDone();
    },
  });
  await nc.flush();

  let errors = 0;
  const requests: Promise<void>[] = [];
  const start = performance.now();
  let i = 0;
  while (i < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
    for (; i < due; i++) {
      const name = `n-${i}`;
      sent.set(name, performance.now());
      requests.push(
        create(p, namespace, name).then(
          (status) => void (status === 201 || errors++),
          () => void errors++,
        ),
      );
    }
    await sleep(1);
  }
  const sentSeconds = (performance.now() - start) / 1000;
  await Promise.all(requests);
  await Promise.race([done, sleep(10_000)]);
  sub.unsubscribe();
  await nc.close();
  latencies.sort((a, b) => a - b);
  const commit = (await fromCommit.stop()).sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    commitP50: percentile(commit, 50),
    commitP99: percentile(commit, 99),
    sentPerSecond: total / sentSeconds,
    events: latencies.length,
    errors,
  };
}

export interface EventRate {
  /** Events/s at a core NATS subscriber during a burst of creates from `concurrency` clients. */
  burst: number;
  creates: number;
  /** Events/s the relay publishes a backlog into JetStream (written while NATS was down). */
  backlog: number;
  backlogEvents: number;
}

async function streamLastSeq(natsUrl: string): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  try {
    return (await (await nc.jetstreamManager()).streams.info("ORCH_EVENTS")).state.last_seq;
  } finally {
    await nc.close();
  }
}

/** Runs `count` creates from `concurrency` closed-loop clients. */
async function burst(p: Pool, namespace: string, prefix: string, count: number, concurrency: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        await create(p, namespace, `${prefix}-${i}`);
      }
    }),
  );
}

export async function eventRate(
  p: Pool,
  nats: { url: string; stop(): Promise<void>; restart(): Promise<void> },
  count: number,
  concurrency: number,
): Promise<EventRate> {
  const namespace = "nats-rate";
  await createNamespace(p, namespace);

  // Sustained during a burst: the subscriber's rate from the first event to the last.
  const nc = await connect({ servers: nats.url });
  let first = 0;
  let last = 0;
  let received = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  const sub = nc.subscribe(`orch.events.core.serviceaccounts.${namespace}.*`, {
    callback: () => {
      const now = performance.now();
      if (received === 0) first = now;
      last = now;
      if (++received === count) resolveDone();
    },
  });
  await nc.flush();
  const t0 = performance.now();
  await burst(p, namespace, "r", count, concurrency);
  const creates = count / ((performance.now() - t0) / 1000);
  await Promise.race([done, sleep(20_000)]);
  sub.unsubscribe();
  await nc.close();
  const burstRate = received > 1 ? (received - 1) / ((last - first) / 1000) : NaN;

  // The relay alone: a backlog written while NATS is down, published when it is back. Timed from the
  // first backlog event in the stream to the last, so NATS's start and the reconnect do not count.
  const before = await streamLastSeq(nats.url);
  await nats.stop();
  await burst(p, namespace, "b", count, concurrency);
  await nats.restart();
  const target = before + count;
  const js = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
  const jsm = await js.jetstreamManager();
  const lastSeq = async (): Promise<number> => (await jsm.streams.info("ORCH_EVENTS")).state.last_seq;
  const deadline = performance.now() + 60_000;
  let seq = await lastSeq();
  while (seq <= before && performance.now() < deadline) seq = await lastSeq();
  const firstSeq = seq;
  const firstAt = performance.now();
  while (seq < target && performance.now() < deadline) seq = await lastSeq();
  const seconds = (performance.now() - firstAt) / 1000;
  await js.close();
  return { burst: burstRate, creates, backlog: (seq - firstSeq) / seconds, backlogEvents: seq - before };
}
