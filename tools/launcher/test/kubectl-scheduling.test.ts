// The real kubectl with `npm start`'s scheduler: nodes registered and cordoned with kubectl, a
// Deployment's pods bound to the node with room (`kubectl get pods -o wide`), `kubectl describe pod`
// showing the scheduler's events, and pod priority refused at admission as Kubernetes words it.
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@orch/testing";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  // No node agent: the test registers the nodes and marks them Ready, as an agent would.
  cp = await startControlPlane({ ORCH_CONTROLLERS: "deployment-controller,scheduler" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

const ok = (...args: string[]) => kubectlOk(cp, ...args);

async function apply(name: string, yaml: string): Promise<string> {
  const path = `${cp.dataDir}/${name}.yaml`;
  await writeFile(path, yaml);
  return ok("apply", "-f", path);
}

const nodeYaml = (name: string, cpu: string) => `apiVersion: v1
kind: Node
metadata: {name: ${name}}
status:
  capacity: {cpu: "${cpu}", memory: 8Gi, pods: "110"}
`;

describe("kubectl with the scheduler", () => {
  it("registers and cordons nodes: kubectl get nodes prints STATUS from Ready and SchedulingDisabled", async () => {
    await apply("node-a", nodeYaml("node-a", "4"));
    await apply("node-b", nodeYaml("node-b", "4"));
    for (const n of ["node-a", "node-b"]) {
      await ok(
        "patch",
        "node",
        n,
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready"}]}}',
      );
    }
    expect(await ok("cordon", "node-b")).toBe("node/node-b cordoned\n");
    const table = (await ok("get", "nodes")).trim().split("\n");
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    expect(table[1]).toMatch(/^node-a\s+Ready\s+<none>\s+\d+s\s*$/);
    expect(table[2]).toMatch(/^node-b\s+Ready,SchedulingDisabled\s+<none>\s+\d+s\s*$/);
  });

  it("binds a Deployment's pods to the schedulable node; describe shows Scheduled", async () => {
    await ok("create", "deployment", "web", "--image=nginx", "--replicas=3");
    const rows = await eventually("three pods bound", async () => {
      // Until the ReplicaSet's first pod is stored, kubectl says "No resources found" (on stderr).
      const out = (await cp.kubectl("get", "pods", "-l", "app=web", "-o", "wide", "--no-headers")).stdout;
      const found = out.trim().split("\n").filter(Boolean);
      return found.length === 3 && found.every((row) => row.split(/\s+/)[6] === "node-a") && found;
    });
    const pod = rows[0]!.split(/\s+/)[0]!;
    const scheduled = new RegExp(`Normal\\s+Scheduled\\s+.*\\s+default-scheduler\\s+Successfully assigned default/${pod} to node-a`);
    const described = await eventually("the Scheduled event in describe", async () => {
      const out = await ok("describe", "pod", pod);
      return scheduled.test(out) && out;
    });
    expect(described).toMatch(/^Node:\s+node-a\/?/m);
  });

  it("a pod too big for any node is Pending with FailedScheduling; an unknown priority class is refused", async () => {
    await apply(
      "big",
      `apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: "16"}}}
`,
    );
    const message =
      "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..";
    const described = await eventually("FailedScheduling in describe", async () => {
      const out = await ok("describe", "pod", "big");
      return /Warning\s+FailedScheduling\s+.*\s+default-scheduler\s+0\/2 nodes are available/.test(out) && out;
    });
    expect(described).toContain(message);
    expect(await ok("get", "pod", "big", "-o", "jsonpath={.status.conditions[0].reason} {.status.phase}")).toBe("Unschedulable Pending");
    const path = `${cp.dataDir}/lost.yaml`;
    await writeFile(
      path,
      "apiVersion: v1\nkind: Pod\nmetadata: {name: lost}\nspec:\n  priorityClassName: nope\n  containers: [{name: c, image: nginx}]\n",
    );
    const refused = await cp.kubectl("apply", "-f", path);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('pods "lost" is forbidden: no PriorityClass with name nope was found');
  });
});
