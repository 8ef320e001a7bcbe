// `kubectl create token` and a call made with that token, with the real kubectl. The kubernetes
// profile, since kubectl hard-codes the authentication.k8s.io group.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane, tokenOnlyKubeconfig } from "./control-plane.js";

const root = resolve(import.meta.dirname, "..", "..", "..");
const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString()).kid as string;

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

  it("fills a token Secret applied with kubectl, as in Kubernetes' docs, and kubectl authenticates with its token", async () => {
    await cp.kubectl("create", "serviceaccount", "deployer");
    const manifest = join(cp.dataDir, "token-secret.yaml");
    await writeFile(
      manifest,
      [
        "apiVersion: v1",
        "kind: Secret",
        "type: kubernetes.io/service-account-token",
        "metadata:",
        "  name: deployer-token",
        "  annotations:",
        "    kubernetes.io/service-account.name: deployer",
        "",
      ].join("\n"),
    );
    expect((await cp.kubectl("apply", "-f", manifest)).stdout.trim()).toBe("secret/deployer-token created");
    let token = "";
    for (let i = 0; i < 100 && !token; i++) {
      token = Buffer.from(
        (await cp.kubectl("get", "secret", "deployer-token", "-o", "jsonpath={.data.token}")).stdout,
        "base64",
      ).toString();
      if (!token) await new Promise((r) => setTimeout(r, 100));
    }
    const me = await cp.kubectl(
      "--kubeconfig",
      anonymousConfig,
      `--token=${token}`,
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.username}",
    );
    expect(me.stdout).toBe("system:serviceaccount:default:deployer");
    // kubectl describe shows the token's parts, as for a Kubernetes cluster.
    const described = (await cp.kubectl("describe", "secret", "deployer-token")).stdout;
    expect(described).toMatch(/Type:\s+kubernetes\.io\/service-account-token/);
    expect(described).toMatch(/ca\.crt:\s+\d+ bytes/);
    expect(described).toMatch(/namespace:\s+7 bytes/);
  });
});

describe("service account key rotation", () => {
  it("npm run rotate-sa-key's command adds a signing key; after a restart new tokens use it and old ones keep working", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "orch-rotate-"));
    try {
      const first = await startControlPlane({ ORCH_PROFILE: "kubernetes" }, { dataDir });
      await first.kubectl("create", "serviceaccount", "robot");
      const before = (await first.kubectl("create", "token", "robot")).stdout.trim();
      await first.stop();

      // What `npm run rotate-sa-key` runs once it has built.
      const rotated = await promisify(execFile)(
        process.execPath,
        [join(root, "apps", "apiserver", "dist", "main.mjs"), "rotate-service-account-key"],
        {
          env: { ...process.env, ORCH_DATA_DIR: dataDir },
        },
      );
      expect(rotated.stdout).toMatch(/^new service account signing key: /);

      const second = await startControlPlane({ ORCH_PROFILE: "kubernetes" }, { dataDir });
      try {
        const after = (await second.kubectl("create", "token", "robot")).stdout.trim();
        expect(kidOf(after)).not.toBe(kidOf(before));
        const config = await tokenOnlyKubeconfig(second);
        for (const token of [before, after]) {
          const me = await second.kubectl(
            "--kubeconfig",
            config,
            `--token=${token}`,
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
          );
          expect(me.stdout).toBe("system:serviceaccount:default:robot");
        }
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
