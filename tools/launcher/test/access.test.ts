// Identity and access with the real kubectl (kubernetes profile, so kubectl's hard-coded groups
// match): a service account token is denied with Kubernetes' message until a RoleBinding grants it;
// `auth whoami` plain and with --as; `auth can-i` and `auth can-i --list`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane, tokenOnlyKubeconfig } from "./control-plane.js";

let cp: ControlPlane;
/** Knows the cluster but no user, so that `--token` is the only credential. */
let anonymousConfig: string;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
  anonymousConfig = await tokenOnlyKubeconfig(cp);
});
afterAll(async () => {
  await cp?.stop();
});

describe("access with kubectl", () => {
  it("denies a service account with Kubernetes' message until a RoleBinding grants it", async () => {
    expect((await cp.kubectl("create", "serviceaccount", "reader")).code).toBe(0);
    const token = (await cp.kubectl("create", "token", "reader")).stdout.trim();
    const as = (...args: string[]) => cp.kubectl("--kubeconfig", anonymousConfig, `--token=${token}`, ...args);

    const denied = await as("get", "pods");
    expect(denied.code).not.toBe(0);
    expect(denied.stderr.trim()).toBe(
      'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:reader" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    expect((await as("auth", "can-i", "list", "pods")).stdout.trim()).toBe("no");

    const bound = await cp.kubectl("create", "rolebinding", "reader-view", "--clusterrole=view", "--serviceaccount=default:reader");
    expect(bound.stdout.trim()).toBe("rolebinding.rbac.authorization.k8s.io/reader-view created");
    const allowed = await as("get", "pods");
    expect(allowed.code).toBe(0);
    expect(allowed.stderr.trim()).toBe("No resources found in default namespace.");
    expect((await as("auth", "can-i", "list", "pods")).stdout.trim()).toBe("yes");
    expect((await as("auth", "can-i", "delete", "pods")).stdout.trim()).toBe("no");
    expect((await as("auth", "can-i", "list", "pods", "-n", "kube-public")).stdout.trim()).toBe("no");
  });

  it("kubectl auth whoami, plain and with --as and --as-group", async () => {
    const me = await cp.kubectl("auth", "whoami", "-o", "json");
    expect(JSON.parse(me.stdout).status.userInfo).toEqual({ username: "orch-admin", groups: ["system:masters", "system:authenticated"] });
    const as = await cp.kubectl("auth", "whoami", "--as=jane", "--as-group=developers", "-o", "json");
    expect(as.stderr).toBe("");
    expect(JSON.parse(as.stdout).status.userInfo).toEqual({ username: "jane", groups: ["developers", "system:authenticated"] });
    // jane may not act as anyone herself.
    const chained = await cp.kubectl("get", "pods", "--as=jane");
    expect(chained.stderr.trim()).toBe(
      'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });

  it("kubectl auth can-i for the admin and for an impersonated user, and --list", async () => {
    expect((await cp.kubectl("auth", "can-i", "create", "deployments")).stdout.trim()).toBe("yes");
    expect((await cp.kubectl("auth", "can-i", "create", "deployments", "--as=jane")).stdout.trim()).toBe("no");
    expect((await cp.kubectl("create", "rolebinding", "jane-edit", "--clusterrole=edit", "--user=jane")).code).toBe(0);
    expect((await cp.kubectl("auth", "can-i", "create", "deployments", "--as=jane")).stdout.trim()).toBe("yes");
    expect((await cp.kubectl("auth", "can-i", "get", "/version", "--as=jane")).stdout.trim()).toBe("yes");

    const list = await cp.kubectl("auth", "can-i", "--list", "--as=jane");
    expect(list.code).toBe(0);
    const lines = list.stdout.split("\n");
    expect(lines[0]).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/);
    expect(lines).toContainEqual(expect.stringMatching(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^deployments\.apps\s+\[\]\s+\[\]\s+\[create update patch delete deletecollection get list watch\]$/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^\s+\[\/version\]\s+\[\]\s+\[get\]$/));
  });
});
