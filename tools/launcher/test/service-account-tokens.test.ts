// `kubectl create token` and a call made with that token, with the real kubectl. The kubernetes
// profile, since kubectl hard-codes the authentication.k8s.io group.
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

describe("service account tokens with kubectl", () => {
  it("kubectl create token, then calls with that token", async () => {
    expect((await cp.kubectl("create", "serviceaccount", "robot")).stdout.trim()).toBe("serviceaccount/robot created");
    const created = await cp.kubectl("create", "token", "robot");
    expect(created.stderr).toBe("");
    const token = created.stdout.trim();
    expect(token.split(".")).toHaveLength(3);

    const as = (...args: string[]) => cp.kubectl("--kubeconfig", anonymousConfig, `--token=${token}`, ...args);
    const me = await as("auth", "whoami", "-o", "json");
    expect(me.stderr).toBe("");
    const info = (JSON.parse(me.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    expect(info.username).toBe("system:serviceaccount:default:robot");
    expect(info.groups).toEqual(["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]);
    // The account may read service accounts once a RoleBinding lets it.
    expect((await cp.kubectl("create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=default:robot")).code).toBe(0);
    expect((await as("get", "serviceaccount", "robot", "-o", "name")).stdout.trim()).toBe("serviceaccount/robot");

    // Deleting the account ends the token.
    await cp.kubectl("delete", "serviceaccount", "robot");
    const after = await as("get", "serviceaccounts");
    expect(after.code).not.toBe(0);
    expect(after.stderr).toMatch(/Unauthorized/);
  });

  it("kubectl create token with a duration, an audience and a bound secret", async () => {
    await cp.kubectl("create", "serviceaccount", "bound");
    await cp.kubectl("create", "secret", "generic", "anchor", "--from-literal=k=v");
    const out = await cp.kubectl(
      "create",
      "token",
      "bound",
      "--duration=2h",
      "--audience=vault",
      "--bound-object-kind=Secret",
      "--bound-object-name=anchor",
    );
    expect(out.stderr).toBe("");
    const claims = JSON.parse(Buffer.from(out.stdout.trim().split(".")[1]!, "base64url").toString()) as Record<string, any>;
    expect(claims.aud).toEqual(["vault"]);
    expect(claims.exp - claims.iat).toBe(7200);
    expect(claims.iss).toBe("https://kubernetes.default.svc.cluster.local");
    expect(claims["kubernetes.io"].secret.name).toBe("anchor");

    const short = await cp.kubectl("create", "token", "bound", "--duration=1m");
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
  });
});
