// The launcher's JetStream watchdog against a real nats-server: quiet while JetStream answers, and it
// calls for a restart once JetStream stays silent (the server here is stopped with SIGSTOP, which
// silences it as nats-server 2.9's stuck JetStream does after a full disk, without the disk).
import { startNatsServer } from "@orch/testing";
import { afterEach, expect, it } from "vitest";
import { type JetStreamWatchdog, watchJetStream } from "../src/jetstream-watchdog.js";

let watchdog: JetStreamWatchdog | undefined;
afterEach(async () => {
  await watchdog?.stop();
});

it("stays quiet while JetStream answers, and calls for a restart when it stops answering", async () => {
  const nats = await startNatsServer();
  let stuck = 0;
  watchdog = await watchJetStream(nats.url, () => stuck++, { checkEveryMs: 100, answerWithinMs: 200, silences: 3 });
  await new Promise((r) => setTimeout(r, 1_000));
  expect(stuck).toBe(0);

  process.kill(nats.pid!, "SIGSTOP");
  try {
    const deadline = Date.now() + 5_000;
    while (stuck === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(stuck).toBeGreaterThan(0);
  } finally {
    process.kill(nats.pid!, "SIGCONT");
  }
  await nats.stop();
});
