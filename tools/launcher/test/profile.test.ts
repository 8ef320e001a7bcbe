// ORCH_PROFILE=kubernetes serves the same API under Kubernetes' own group names, so unmodified
// Kubernetes manifests work.
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
});
afterAll(async () => {
  await cp?.stop();
});

describe("the kubernetes naming profile", () => {
  it("serves Kubernetes' group names", async () => {
    const out = await cp.kubectl("api-resources", "--no-headers");
    for (const [resource, group] of <const>[
      ["certificatesigningrequests", "certificates.k8s.io/v1"],
      ["clustertrustbundles", "certificates.k8s.io/v1beta1"],
      ["deviceclasses", "resource.k8s.io/v1"],
      ["priorityclasses", "scheduling.k8s.io/v1"],
      ["customresourcedefinitions", "apiextensions.k8s.io/v1"],
    ]) {
      expect(out.stdout).toMatch(new RegExp(`^${resource}\\s.*\\s${group.replace(/\./g, "\\.")}\\s`, "m"));
    }
    expect(out.stdout).not.toContain("orch.io");
  });

  it("accepts a Kubernetes manifest unchanged", async () => {
    const path = `${cp.dataDir}/pc.yaml`;
    await writeFile(
      path,
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\nvalue: 1000\ndescription: important\n",
    );
    expect((await cp.kubectl("create", "-f", path)).stdout.trim()).toBe("priorityclass.scheduling.k8s.io/high created");
    const got = await cp.kubectl("get", "priorityclass", "high", "-o", "jsonpath={.apiVersion} {.value} {.preemptionPolicy}");
    expect(got.stdout).toBe("scheduling.k8s.io/v1 1000 PreemptLowerPriority");
  });

  it("answers kubectl auth whoami", async () => {
    const out = await cp.kubectl("auth", "whoami", "-o", "json");
    expect(out.stderr).toBe("");
    const review = JSON.parse(out.stdout) as { kind: string; status: { userInfo: { username: string; groups: string[] } } };
    expect(review.kind).toBe("SelfSubjectReview");
    expect(review.status.userInfo.username).toBe("orch-admin");
    expect(review.status.userInfo.groups).toEqual(["system:masters", "system:authenticated"]);
  });
});
