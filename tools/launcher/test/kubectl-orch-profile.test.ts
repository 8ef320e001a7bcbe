// The real kubectl against the default orch profile, for the commands that hard-code Kubernetes' names:
// `auth whoami` and `auth can-i` (their reviews are served under authorization.k8s.io and
// authentication.k8s.io too), `create token`, and `rollout history` / `rollout undo` (the revision
// annotation kubectl reads).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane();
});
afterAll(async () => {
  await cp?.stop();
});

/** Waits until web's replica sets carry exactly these revisions in kubectl's annotation. */
async function replicaSetRevisions(expected: string[]): Promise<void> {
  let seen = "";
  for (let attempt = 0; attempt < 100; attempt++) {
    const out = await cp.kubectl(
      "get",
      "rs",
      "-l",
      "app=web",
      "-o",
      `jsonpath={.items[*].metadata.annotations.deployment\\.kubernetes\\.io/revision}`,
    );
    seen = out.stdout.split(" ").filter(Boolean).sort().join(" ");
    if (seen === expected.join(" ")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`replica set revisions: ${seen}, expected ${expected.join(" ")}`);
}

describe("kubectl's hard-coded names under the orch profile", () => {
  it("kubectl auth whoami", async () => {
    const me = await cp.kubectl("auth", "whoami", "-o", "json");
    expect(me.stderr).toBe("");
    expect(JSON.parse(me.stdout)).toMatchObject({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.k8s.io/v1",
      status: { userInfo: { username: "orch-admin", groups: ["system:masters", "system:authenticated"] } },
    });
    const as = await cp.kubectl("auth", "whoami", "--as=jane", "-o", "jsonpath={.status.userInfo.username}");
    expect(as.stdout).toBe("jane");
  });

  it("kubectl auth can-i, for the admin, an impersonated user, and --list", async () => {
    expect((await cp.kubectl("auth", "can-i", "create", "deployments")).stdout.trim()).toBe("yes");
    const jane = await cp.kubectl("auth", "can-i", "create", "deployments", "--as=jane");
    expect([jane.code, jane.stdout.trim()]).toEqual([1, "no"]);
    const list = await cp.kubectl("auth", "can-i", "--list", "--as=jane");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^selfsubjectaccessreviews\.authorization\.orch\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
  });

  it("kubectl create token", async () => {
    expect((await cp.kubectl("create", "serviceaccount", "builder")).code).toBe(0);
    const token = await cp.kubectl("create", "token", "builder");
    expect(token.stderr).toBe("");
    expect(token.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it("kubectl rollout history and rollout undo", async () => {
    expect((await cp.kubectl("create", "deployment", "web", "--image=nginx:1.27")).code).toBe(0);
    await replicaSetRevisions(["1"]);
    expect((await cp.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")).code).toBe(0);
    await replicaSetRevisions(["1", "2"]);
    const history = await cp.kubectl("rollout", "history", "deployment/web");
    expect(history.stderr).toBe("");
    expect(
      history.stdout
        .split("\n")
        .filter((l) => /^\d/.test(l))
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(["1", "2"]);
    const revision1 = await cp.kubectl("rollout", "history", "deployment/web", "--revision=1");
    expect(revision1.stdout).toContain("nginx:1.27");

    const undo = await cp.kubectl("rollout", "undo", "deployment/web");
    expect([undo.code, undo.stdout.trim()]).toEqual([0, "deployment.apps/web rolled back"]);
    const image = await cp.kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}");
    expect(image.stdout).toBe("nginx:1.27");
    // The replica set of revision 1 serves again, as revision 3.
    await replicaSetRevisions(["2", "3"]);
  });

  it("discovery does not list the Kubernetes-named review groups", async () => {
    const out = await cp.kubectl("api-resources", "--no-headers");
    expect(out.stdout).not.toContain("k8s.io");
    expect(out.stdout).toMatch(/^selfsubjectreviews\s.*authentication\.orch\.io\/v1\s/m);
  });
});
