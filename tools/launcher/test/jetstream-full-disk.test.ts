// The control plane through a full disk under its NATS store: nats-server 2.9's JetStream stops
// answering for good when its disk fills (even after space comes back); the launcher's watchdog
// restarts it, the relay publishes what it could not, and an informer following NATS ends up with every
// object, then sees new changes as events again. The store is a small tmpfs mounted for the test, so the
// test needs root (CI runs as root); elsewhere it says why it is skipped.
import { ApiClient, Informer, type KubeObject } from "@orch/client";
import { eventually } from "@orch/testing";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeSync, openSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConnectionOptions, connect } from "nats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ControlPlane, busAs, startControlPlane } from "./control-plane.js";

const dataDir = mkdtempSync(join(tmpdir(), "orch-full-disk-"));
const store = join(dataDir, "nats");
let mounted = false;
try {
  mkdirSync(store);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", store], { stdio: "ignore" });
  mounted = true;
} catch {
  console.warn("jetstream-full-disk: cannot mount a tmpfs here (not root?); the test is skipped");
}

let cp: ControlPlane | undefined;
let informer: Informer<KubeObject> | undefined;
let client: ApiClient | undefined;

beforeAll(async () => {
  if (mounted) cp = await startControlPlane({}, { dataDir });
}, 30_000);
afterAll(async () => {
  await informer?.stop();
  client?.close();
  await cp?.stop();
  if (mounted) execFileSync("umount", ["-l", store]);
  rmSync(dataDir, { recursive: true, force: true });
});

const secrets = { group: "", version: "v1", plural: "secrets", namespaced: true };

const waitFor = (what: string, check: () => boolean, timeoutMs: number) => eventually(what, check, { timeoutMs, intervalMs: 100 });

/** Resolves once JetStream fails to store a message (an error or no answer within a second). */
async function jetStreamRefuses(bus: ConnectionOptions): Promise<void> {
  const nc = await connect(bus);
  try {
    const js = nc.jetstream({ timeout: 1_000 });
    await eventually(
      "JetStream to refuse a message on the full disk",
      () =>
        js.publish("orch.events.full-disk-probe", "probe").then(
          () => false,
          () => true,
        ),
      { timeoutMs: 20_000, intervalMs: 100 },
    );
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** Writes into the store's file system until it is full. */
function fillDisk(): string {
  const filler = join(store, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // ENOSPC: full.
  } finally {
    closeSync(fd);
  }
  return filler;
}

it.skipIf(!mounted)(
  "an informer on NATS gets every object through a full disk under JetStream, and events again after it",
  async () => {
    const control = cp!;
    client = ApiClient.fromKubeconfig(control.kubeconfig);
    expect((await control.kubectl("create", "namespace", "disk")).code).toBe(0);
    informer = new Informer<KubeObject>(client, {
      ref: secrets,
      namespace: "disk",
      nats: { connectOptions: busAs(control, "admin"), fetchExpiresMs: 1000 },
      onError: () => undefined,
    });
    informer.start();
    await informer.waitForSync(20_000);
    const create = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        await client!.create(secrets, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: `s${i}`, namespace: "disk" },
          data: { a: Buffer.alloc(2048, i).toString("base64") },
        });
      }
    };
    await create(0, 20);
    await waitFor("the first 20 objects", () => informer!.list().length === 20, 20_000);

    const filler = fillDisk();
    // The API takes writes while events cannot be stored: the database is elsewhere, the log is the outbox.
    await create(20, 60);
    // The disk stays full until JetStream has met it: a message of the test's own (on a subject no
    // informer follows) is refused or unanswered, as the relay's are.
    await jetStreamRefuses(busAs(control, "event-relay"));
    rmSync(filler);

    await waitFor("every object after the disk had room again", () => informer!.list().length === 60, 90_000);
    const events = informer.stats.events;
    await create(60, 70);
    await waitFor("the objects created afterwards", () => informer!.list().length === 70, 30_000);
    expect(informer.stats.events).toBeGreaterThanOrEqual(events + 10);
    console.log(
      `jetstream-full-disk: ${control.output.filter((l) => /JetStream|\[nats\]/.test(l)).join(" | ") || "JetStream recovered without a restart"}`,
    );
  },
  180_000,
);
