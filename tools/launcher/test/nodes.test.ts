// `npm start` comes with simulated nodes: the launcher runs the orchlet and the node-lifecycle-controller
// like every controller, the nodes get their certificates through CSRs, and a pod bound to one runs —
// all seen through the real kubectl, as docs/nodes.md shows.
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_POD_READY_DELAY_MS: "200" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

describe("simulated nodes under npm start", () => {
  it("registers ORCH_NODES (3) nodes, Ready, with their client certificates issued from CSRs", async () => {
    const nodes = await eventually(
      "three Ready nodes",
      async () => {
        const out = await cp.kubectl("get", "nodes", "--no-headers");
        return (out.stdout.match(/^node-\d\s+Ready\s/gm) ?? []).length === 3 && out.stdout;
      },
      { timeoutMs: 30_000 },
    );
    expect(nodes).toMatch(/^node-0\s+Ready\s+<none>\s+\S+\s+v1\.32\.0$/m);
    // The serving certificates are asked for once the nodes run, and wait for an administrator.
    const csrs = await eventually("six certificate requests", async () => {
      const out = await kubectlOk(cp, "get", "csr", "--no-headers");
      return out.trim().split("\n").length === 6 && out;
    });
    expect(csrs.match(/orch\.io\/orch-apiserver-client-orchlet\s+system:bootstrap:orchlet\s+<none>\s+Approved,Issued/g)).toHaveLength(3);
    expect(csrs.match(/orch\.io\/orchlet-serving\s+system:node:node-\d\s+<none>\s+Pending/g)).toHaveLength(3);
    const leases = await kubectlOk(cp, "get", "leases", "-n", "orch-node-lease", "--no-headers");
    expect(leases).toMatch(/^node-2\s+node-2\s/m);
  });

  it("runs a pod created with spec.nodeName: kubectl shows it Running and 1/1 Ready on that node, with the node's events", async () => {
    await kubectlOk(cp, "run", "web", "--image=nginx:1.27", '--overrides={"spec":{"nodeName":"node-1"}}');
    const line = await eventually(
      "web 1/1 Running",
      async () => {
        const out = await cp.kubectl("get", "pod", "web", "-o", "wide", "--no-headers");
        return /^web\s+1\/1\s+Running\s/.test(out.stdout) && out.stdout;
      },
      { timeoutMs: 20_000 },
    );
    expect(line).toMatch(/\s10\.244\.1\.\d+\s+node-1\s/);
    const described = await kubectlOk(cp, "describe", "pod", "web");
    expect(described).toMatch(/Normal\s+Started\s+\S+\s+orchlet\s+Started container web/);
  });
});
