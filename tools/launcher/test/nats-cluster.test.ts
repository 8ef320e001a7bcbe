// A NATS cluster under the control plane: ORCH_NATS_CLUSTER=3 runs three nats-servers whose event
// stream has three replicas. One server is SIGKILLed while objects are written: the controllers carry
// on, and a fresh consumer still reads every revision once, in order.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { natsConnectOptions } from "@orch/bus-access";
import { EVENTS_STREAM } from "@orch/events";
import { AckPolicy, DeliverPolicy, connect } from "nats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_NATS_CLUSTER: "3", ORCH_CONTROLLERS: "deployment-controller" });
}, 60_000);
afterAll(() => cp?.stop());

/**
 * The bus as the launcher reaches it (the relay's identity may read the stream's state), through the
 * first server only: the test's own connection is not what is under test when the second one dies.
 */
const bus = () => {
  const pki = join(cp.dataDir, "pki");
  const first = cp.natsUrl!.split(",")[0]!;
  return {
    ...natsConnectOptions(
      { servers: first, caFile: join(pki, "ca.crt"), certFile: join(pki, "event-relay.crt"), keyFile: join(pki, "event-relay.key") },
      "cluster-test",
    ),
    ignoreClusterUpdates: true,
  };
};

/** A JetStream request, again while the stream's group elects a leader (requests time out meanwhile). */
const retried = <T>(what: string, request: () => Promise<T>) => until(what, () => request().catch(() => undefined));

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${cp.output.slice(-30).join("\n")}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

it("keeps the event stream on three servers and rides through the loss of one", async () => {
  expect(cp.natsUrl?.split(",")).toHaveLength(3);
  const nc = await connect(bus());
  try {
    const jsm = await nc.jetstreamManager();
    const info = await retried("the stream", () => jsm.streams.info(EVENTS_STREAM));
    expect(info.config.num_replicas).toBe(3);
    // A leader and two current replicas, once the stream's group has elected one.
    const placement = await until("the stream's leader", async () => {
      const cluster = (await jsm.streams.info(EVENTS_STREAM).catch(() => undefined))?.cluster;
      return cluster?.leader && cluster.replicas?.length === 2 ? [cluster.leader, ...cluster.replicas.map((r) => r.name)] : undefined;
    });
    expect(placement.sort()).toEqual(["orch-nats-1", "orch-nats-2", "orch-nats-3"]);

    const pid = Number(readFileSync(join(cp.dataDir, "nats-2.pid"), "utf8"));
    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 5; i++) {
      expect((await cp.kubectl("create", "deployment", `during-${i}`, "--image=nginx")).code).toBe(0);
    }
    // The deployment-controller hears of them through the cluster: each gets its ReplicaSet.
    for (let i = 0; i < 5; i++) {
      await until(`the ReplicaSet of during-${i}`, async () => {
        const out = await cp.kubectl("get", "replicasets", "-l", `app=during-${i}`, "-o", "name");
        return out.stdout.trim() || undefined;
      });
    }

    // A fresh consumer from the start: every revision once, in order, none missing since the stream began.
    const { state } = await retried("the stream after the loss", () => jsm.streams.info(EVENTS_STREAM));
    const revisions = await retried("a fresh consumer's messages", async () => {
      const consumer = await jsm.consumers.add(EVENTS_STREAM, { ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
      const messages = await (await nc.jetstream().consumers.get(EVENTS_STREAM, consumer.name)).fetch({
        max_messages: state.messages,
        expires: 5_000,
      });
      const read: number[] = [];
      for await (const m of messages) {
        // The relay publishes each revision under the id `<epoch>-<revision>`.
        read.push(Number(m.headers?.get("Nats-Msg-Id").split("-").at(-1)));
        if (read.length === state.messages) break;
      }
      return read;
    });
    expect(revisions.length).toBe(state.messages);
    for (let i = 1; i < revisions.length; i++) expect(revisions[i]).toBe(revisions[i - 1]! + 1);
  } finally {
    await nc.close();
  }
}, 90_000);
