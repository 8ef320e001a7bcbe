import { type KubeObject, type ObjectKey, SqliteStorage, type Storage } from "@orch/storage";
import { type NatsServer, type NatsServerOptions, startNatsServer } from "@orch/testing";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "nats";
import { afterEach, expect } from "vitest";
import { COMMITTED_AT_HEADER, EVENTS_STREAM, type EventEnvelope, REVISION_HEADER, subjectForChange } from "@orch/events";

/** Resources cleaned up after each test, newest first. */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
export const onCleanup = (cleanup: () => Promise<void> | void): void => void cleanups.push(cleanup);

/** A nats-server of its own for this test: each test gets a fresh stream and duplicate window. */
export async function nats(options: NatsServerOptions = {}): Promise<NatsServer> {
  const server = await startNatsServer(options);
  onCleanup(() => server.stop());
  return server;
}

/** A SQLite storage on a real file in a temp directory. */
export function storage(): SqliteStorage {
  const dir = mkdtempSync(join(tmpdir(), "orch-events-"));
  const s = new SqliteStorage({ path: join(dir, "orch.db") });
  onCleanup(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return s;
}

export const object = (name: string, fields: Record<string, unknown> = {}): KubeObject => ({
  metadata: { name },
  ...fields,
});

/** Commits `count` writes spread over resources, namespaces, updates and deletes. */
export async function churn(s: Storage, count: number, offset = 0): Promise<void> {
  const keys: ObjectKey[] = [
    { resource: "core/pods", namespace: "default", name: "web" },
    { resource: "core/pods", namespace: "kube-system", name: "dns" },
    { resource: "apps/deployments", namespace: "default", name: "web" },
    { resource: "core/namespaces", namespace: "", name: "team-a" },
    { resource: "certificates.k8s.io/certificatesigningrequests", namespace: "", name: "node.csr" },
  ];
  for (let i = 0; i < count; i++) {
    const n = offset + i;
    const key = keys[n % keys.length]!;
    const stored = await s.get(key);
    if (!stored) await s.create(key, object(key.name, { n }));
    else if (n % 7 === 0) await s.delete(key, object(key.name, { n }), stored.revision);
    else await s.update(key, object(key.name, { n }), stored.revision);
  }
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the relay has published (and recorded) every committed revision. */
export async function published(s: Storage, timeoutMs?: number): Promise<void> {
  await waitFor("the relay to catch up", async () => (await s.publishedRevision()) === (await s.currentRevision()), timeoutMs);
}

export interface StreamMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  revision: string | undefined;
  committedAt: string | undefined;
  envelope: EventEnvelope;
}

/** Everything in the events stream, as a new ordered consumer delivers it from the start. */
export async function readStream(url: string): Promise<StreamMessage[]> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager();
    const { state } = await jsm.streams.info(EVENTS_STREAM);
    const out: StreamMessage[] = [];
    if (state.messages === 0) return out;
    const consumer = await nc.jetstream().consumers.get(EVENTS_STREAM);
    const messages = await consumer.consume();
    for await (const m of messages) {
      out.push({
        seq: m.seq,
        subject: m.subject,
        msgId: m.headers?.get("Nats-Msg-Id"),
        revision: m.headers?.get(REVISION_HEADER),
        committedAt: m.headers?.get(COMMITTED_AT_HEADER) || undefined,
        envelope: m.json<EventEnvelope>(),
      });
      if (m.seq >= state.last_seq) break;
    }
    await messages.close();
    return out;
  } finally {
    await nc.close();
  }
}

/** The stream must hold every committed revision exactly once, in order, exactly as the log has it. */
export async function expectStreamMatchesLog(url: string, s: Storage): Promise<void> {
  const log = await s.changes(0, 1_000_000);
  const current = await s.currentRevision();
  expect(log.map((c) => c.revision)).toEqual(Array.from({ length: current }, (_, i) => i + 1));
  const stream = await readStream(url);
  const epoch = await s.epoch();
  expect(stream.map((m) => m.envelope.revision)).toEqual(log.map((c) => c.revision));
  stream.forEach((m, i) => {
    const change = log[i]!;
    expect(m.seq).toBe(i + 1);
    expect(m.msgId).toBe(`${epoch}-${change.revision}`);
    expect(m.revision).toBe(String(change.revision));
    expect(m.subject).toBe(subjectForChange(change));
    expect(m.envelope).toEqual({ type: change.type, revision: change.revision, object: JSON.parse(change.value) });
  });
}
