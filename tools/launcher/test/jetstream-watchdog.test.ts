// The launcher's JetStream watchdog against a real nats-server: quiet while JetStream answers, and it
// calls for a restart once JetStream stays silent (the server here is stopped with SIGSTOP, which
// silences it as nats-server 2.9's stuck JetStream does after a full disk, without the disk).
import { eventually, startNatsServer } from "@orch/testing";
import { connect } from "nats";
import { afterEach, expect, it } from "vitest";
import { type JetStreamWatchdog, watchJetStream } from "../src/jetstream-watchdog.js";

let watchdog: JetStreamWatchdog | undefined;
afterEach(async () => {
  await watchdog?.stop();
});

it("stays quiet while JetStream answers, and calls for a restart when it stops answering", async () => {
  const nats = await startNatsServer();
  // Every question the watchdog asks JetStream, seen by a listener on the same subject.
  const listener = await connect({ servers: nats.url });
  let asked = 0;
  const questions = listener.subscribe("$JS.API.INFO", { callback: () => void asked++ });
  await listener.flush();
  let stuck = 0;
  watchdog = await watchJetStream(nats.url, () => stuck++, { checkEveryMs: 100, answerWithinMs: 200, silences: 3 });
  // Asked 6 times: the first 4 have been answered or have timed out (a question lasts at most 200 ms,
  // two check periods), more than the 3 silences in a row that would call for a restart.
  await eventually("the watchdog's 6th question", () => asked >= 6, { timeoutMs: 5_000 });
  expect(stuck).toBe(0);
  questions.unsubscribe();
  await listener.close();

  process.kill(nats.pid!, "SIGSTOP");
  try {
    await eventually("the watchdog to call for a restart", () => stuck > 0, { timeoutMs: 5_000 });
    expect(stuck).toBeGreaterThan(0);
  } finally {
    process.kill(nats.pid!, "SIGCONT");
  }
  await nats.stop();
});

it("waits for a server too busy to answer its first connection, instead of failing the launcher's start", async () => {
  const nats = await startNatsServer();
  // Stopped, the server accepts connections (the kernel does) but answers none: each attempt times out.
  process.kill(nats.pid!, "SIGSTOP");
  let resumed = false;
  try {
    const starting = watchJetStream({ servers: nats.url, timeout: 300 }, () => undefined, { checkEveryMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    process.kill(nats.pid!, "SIGCONT");
    resumed = true;
    watchdog = await starting;
  } finally {
    if (!resumed) process.kill(nats.pid!, "SIGCONT");
  }
  const listener = await connect({ servers: nats.url });
  let asked = 0;
  listener.subscribe("$JS.API.INFO", { callback: () => void asked++ });
  await eventually("the watchdog's questions", () => asked >= 2, { timeoutMs: 5_000 });
  await listener.close();
  await watchdog.stop();
  watchdog = undefined;
  await nats.stop();
});
