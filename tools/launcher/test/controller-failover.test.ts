// Controllers in pairs: with ORCH_CONTROLLER_REPLICAS=2 the launcher runs two processes of an app,
// one leads through the app's Lease, and when the leader is SIGKILLed the other takes the Lease once
// it expires (timings from ORCH_LEADER_ELECT_*_SECONDS) and carries on reconciling.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({
    ORCH_CONTROLLERS: "deployment-controller",
    ORCH_CONTROLLER_REPLICAS: "2",
    ORCH_LEADER_ELECT_LEASE_DURATION_SECONDS: "3",
    ORCH_LEADER_ELECT_RENEW_DEADLINE_SECONDS: "2",
    ORCH_LEADER_ELECT_RETRY_PERIOD_SECONDS: "0.5",
  });
}, 30_000);
afterAll(() => cp?.stop());

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${cp.output.join("\n")}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const holder = async () => {
  const out = await cp.kubectl("get", "lease", "deployment-controller", "-n", "default", "-o", "jsonpath={.spec.holderIdentity}");
  return out.stdout.trim() || undefined;
};

/** The leader's identity is host_pid_random (libs/controller defaultIdentity). */
const pidOf = (identity: string) => Number(identity.split("_").at(-2));

const replicaSetOf = (deployment: string) =>
  until(`a ReplicaSet of ${deployment}`, async () => {
    const out = await cp.kubectl("get", "replicasets", "-l", `app=${deployment}`, "-o", "name");
    return out.stdout.trim() || undefined;
  });

it("runs two replicas of a controller; when the leader is killed the other takes over and reconciles", async () => {
  // Both replicas run, each a candidate of its own.
  const identities = await until("both replicas", async () => {
    const started = cp.output.flatMap((l) => /^deployment-controller: starting .*identity (\S+)\)$/.exec(l)?.[1] ?? []);
    return started.length === 2 ? started : undefined;
  });
  const first = await until("a leader", holder);
  expect(identities).toContain(first);
  const firstPid = pidOf(first);

  expect((await cp.kubectl("create", "deployment", "before", "--image=nginx")).code).toBe(0);
  await replicaSetOf("before");

  process.kill(firstPid, "SIGKILL");
  const killedAt = Date.now();
  const second = await until("a new leader", async () => {
    const now = await holder();
    return now && now !== first ? now : undefined;
  });
  console.log(`leadership moved ${Date.now() - killedAt} ms after SIGKILL (lease duration 3 s)`);
  // The new leader is alive: the other replica, or (should it lose the race) the killed one restarted.
  expect(() => process.kill(pidOf(second), 0)).not.toThrow();

  expect((await cp.kubectl("create", "deployment", "after", "--image=nginx")).code).toBe(0);
  await replicaSetOf("after");
}, 60_000);
