// Issue 14's proof, through the real kubectl against `npm start` with two simulated nodes (the orchlet)
// and the scheduler, nobody marking anything by hand: a Deployment of low-priority pods fills the nodes
// and becomes Available; a pod with preemptionPolicy Never waits; a high-priority pod preempts exactly
// one low-priority pod and runs; scaling the Deployment down makes room and the waiting pod runs too.
import { writeFile } from "node:fs/promises";
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({
    ORCH_NODES: "2",
    ORCH_NODE_CPU: "2",
    ORCH_POD_READY_DELAY_MS: "100",
    ORCH_POD_STOP_DELAY_MS: "100",
  });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

const ok = (...args: string[]) => kubectlOk(cp, ...args);

async function apply(name: string, yaml: string): Promise<void> {
  const path = `${cp.dataDir}/${name}.yaml`;
  await writeFile(path, yaml);
  await ok("apply", "-f", path);
}

const priorityClass = (name: string, value: number, policy = "PreemptLowerPriority") =>
  `apiVersion: scheduling.orch.io/v1\nkind: PriorityClass\nmetadata: {name: ${name}}\nvalue: ${value}\npreemptionPolicy: ${policy}\n`;

const pod = (name: string, priorityClassName: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  priorityClassName: ${priorityClassName}
  containers:
  - {name: c, image: nginx:1.27, resources: {requests: {cpu: "1"}}}
`;

/** `name` Running 1/1 on a node, as `kubectl get pod -o wide` prints it; returns the node. */
const runningOn = (name: string) =>
  eventually(
    `${name} Running`,
    async () => {
      const out = await cp.kubectl("get", "pod", name, "-o", "wide", "--no-headers");
      const cells = out.stdout.trim().split(/\s+/);
      return cells[1] === "1/1" && cells[2] === "Running" && cells[6];
    },
    { timeoutMs: 30_000 },
  );

describe("priority and preemption under npm start", () => {
  it("fills two nodes with low-priority pods; Never waits; a high-priority pod preempts one; scaling down lets the waiting pod run", async () => {
    await eventually(
      "two Ready nodes",
      async () => ((await cp.kubectl("get", "nodes", "--no-headers")).stdout.match(/^node-\d\s+Ready\s/gm) ?? []).length === 2,
      { timeoutMs: 30_000 },
    );
    await apply(
      "classes",
      [priorityClass("low", 100), priorityClass("high", 1000), priorityClass("high-never", 1000, "Never")].join("---\n"),
    );
    await apply(
      "low",
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: low}
spec:
  replicas: 4
  selector: {matchLabels: {app: low}}
  template:
    metadata: {labels: {app: low}}
    spec:
      priorityClassName: low
      containers:
      - {name: c, image: nginx:1.27, resources: {requests: {cpu: "1"}}}
`,
    );
    expect(await ok("rollout", "status", "deployment/low", "--timeout=60s")).toContain('deployment "low" successfully rolled out');
    const lowPods = async () => (await ok("get", "pods", "-l", "app=low", "-o", "name")).trim().split("\n").filter(Boolean);
    const before = await lowPods();
    expect(before).toHaveLength(4);

    await apply("patient", pod("patient", "high-never"));
    const waiting = await eventually("patient's FailedScheduling", async () => {
      const out = await ok("describe", "pod", "patient");
      return /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/2 nodes are available: 2 Insufficient cpu\. preemption: not eligible due to preemptionPolicy=Never\.\./.test(
        out,
      );
    });
    expect(waiting).toBe(true);

    await apply("urgent", pod("urgent", "high"));
    const node = await runningOn("urgent");
    // The scheduler's events trail its writes: until the event is stored, kubectl says "No resources found".
    // A send that fails on the way is tried again after a pause of up to 10 s (client-go's), hence 30 s;
    // should it still be missing, the scheduler's log says why.
    const preempted = await eventually(
      "one Preempted event",
      async () => {
        const out = (await cp.kubectl("get", "events", "--field-selector", "reason=Preempted", "--no-headers")).stdout;
        return out.trim() !== "" && out.trim().split("\n");
      },
      { timeoutMs: 30_000 },
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}; the scheduler said:\n${cp.output
          .filter((l) => l.includes("scheduler"))
          .slice(-30)
          .join("\n")}`,
      );
    });
    expect(preempted).toHaveLength(1);
    expect(preempted[0]).toMatch(new RegExp(`Preempted by pod [0-9a-f-]+ on node ${node}$`));
    // The Deployment replaced its victim; the replacement (same priority as the rest) finds no room.
    const after = await lowPods();
    expect(after.filter((p) => before.includes(p))).toHaveLength(3);
    expect((await ok("get", "pod", "patient", "-o", "jsonpath={.spec.nodeName}")).trim()).toBe("");

    await ok("scale", "deployment/low", "--replicas=2");
    await runningOn("patient");
  }, 90_000);
});
