import { DiscardPolicy, type NatsConnection, StorageType, connect, headers } from "nats";
import { describe, expect, it } from "vitest";
import { AckedPublisher, type OutgoingMessage, PublishError } from "../src/acked-publisher.js";
import { nats, onCleanup } from "./helpers.js";

async function connection(): Promise<NatsConnection> {
  const server = await nats();
  const nc = await connect({ servers: server.url });
  onCleanup(() => nc.close());
  return nc;
}

const message = (subject: string, data: string, msgId: string): OutgoingMessage => ({ subject, data, msgId, headers: headers() });

async function storedData(nc: NatsConnection, stream: string): Promise<string[]> {
  const jsm = await nc.jetstreamManager();
  const { state } = await jsm.streams.info(stream);
  const out: string[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    out.push((await jsm.streams.getMessage(stream, { seq })).string());
  }
  return out;
}

describe("AckedPublisher", () => {
  it("resolves once the stream stored every message, in the order given, a duplicate id counting as stored once", async () => {
    const nc = await connection();
    await (await nc.jetstreamManager()).streams.add({ name: "S", subjects: ["s.>"], storage: StorageType.Memory });
    const publisher = new AckedPublisher(nc);
    onCleanup(() => publisher.close());
    await publisher.publish(
      Array.from({ length: 300 }, (_, i) => message(`s.${i % 7}`, `m${i}`, `id-${i}`)),
      5_000,
    );
    // The same ids again: acknowledged (duplicates), not stored twice.
    await publisher.publish([message("s.0", "again", "id-0"), message("s.1", "m300", "id-300")], 5_000);
    expect(await storedData(nc, "S")).toEqual([...Array.from({ length: 300 }, (_, i) => `m${i}`), "m300"]);
  });

  it("rejects when no stream stores the subject", async () => {
    const nc = await connection();
    const publisher = new AckedPublisher(nc);
    onCleanup(() => publisher.close());
    const failed = await publisher.publish([message("nobody.listens", "x", "id-1")], 5_000).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PublishError);
    expect((failed as PublishError).code).toBe(503);
  });

  it("rejects with the stream's reason when the stream refuses a message, and publishes again once there is room", async () => {
    const nc = await connection();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: "FULL", subjects: ["full.>"], storage: StorageType.Memory, max_msgs: 2, discard: DiscardPolicy.New });
    const publisher = new AckedPublisher(nc);
    onCleanup(() => publisher.close());
    const failed = await publisher
      .publish([message("full.a", "1", "1"), message("full.a", "2", "2"), message("full.a", "3", "3")], 5_000)
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PublishError);
    expect((failed as PublishError).message).toMatch(/maximum messages exceeded/);
    await jsm.streams.purge("FULL");
    await publisher.publish([message("full.a", "4", "4")], 5_000);
    expect(await storedData(nc, "FULL")).toEqual(["4"]);
  });

  it("rejects when the acks do not come in time", async () => {
    const nc = await connection();
    // Something answers on the subject, but never with an ack: the publish must not wait forever.
    const silent = nc.subscribe("silent.>", { callback: () => undefined });
    onCleanup(() => silent.unsubscribe());
    const publisher = new AckedPublisher(nc);
    onCleanup(() => publisher.close());
    const failed = await publisher.publish([message("silent.a", "x", "1")], 200).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PublishError);
    expect((failed as PublishError).message).toMatch(/no ack within 200 ms/);
  });
});
