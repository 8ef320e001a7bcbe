// The real kubectl making typed Secrets: `create secret tls`, `docker-registry` and `generic` as
// Kubernetes takes them, and a Secret missing its type's keys refused in Kubernetes' words.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
  await ok("create", "namespace", "typed");
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

const ok = (...args: string[]) => kubectlOk(cp, ...args);

const stored = async (name: string) => JSON.parse(await ok("-n", "typed", "get", "secret", name, "-o", "json"));
const decoded = (value: string) => Buffer.from(value, "base64").toString("utf8");

describe("kubectl create secret", () => {
  it("tls, from a certificate and its key", async () => {
    const pki = join(cp.dataDir, "pki");
    const cert = `--cert=${join(pki, "admin.crt")}`;
    const key = `--key=${join(pki, "admin.key")}`;
    expect(await ok("-n", "typed", "create", "secret", "tls", "web-tls", cert, key)).toBe("secret/web-tls created\n");
    const secret = await stored("web-tls");
    expect(secret.type).toBe("kubernetes.io/tls");
    expect(Object.keys(secret.data).sort()).toEqual(["tls.crt", "tls.key"]);
    const table = (await ok("-n", "typed", "get", "secret", "web-tls")).split("\n");
    expect(table[1]).toMatch(/^web-tls\s+kubernetes\.io\/tls\s+2\s+\d+s$/);
  });

  it("docker-registry, with its .dockerconfigjson", async () => {
    const args = ["--docker-server=registry.example.com", "--docker-username=u", "--docker-password=p"];
    expect(await ok("-n", "typed", "create", "secret", "docker-registry", "pull", ...args)).toBe("secret/pull created\n");
    const secret = await stored("pull");
    expect(secret.type).toBe("kubernetes.io/dockerconfigjson");
    const config = JSON.parse(decoded(secret.data[".dockerconfigjson"]));
    expect(config.auths["registry.example.com"]).toMatchObject({ username: "u", password: "p" });
  });

  it("generic, Opaque or of a type whose keys it is given", async () => {
    expect(await ok("-n", "typed", "create", "secret", "generic", "plain", "--from-literal=a=b")).toBe("secret/plain created\n");
    expect((await stored("plain")).type).toBe("Opaque");
    const basic = ["--type=kubernetes.io/basic-auth", "--from-literal=username=admin"];
    expect(await ok("-n", "typed", "create", "secret", "generic", "basic", ...basic)).toBe("secret/basic created\n");
    expect((await stored("basic")).type).toBe("kubernetes.io/basic-auth");
  });

  it("generic of a type without its keys is refused with Kubernetes' message", async () => {
    const tls = await cp.kubectl(
      "-n",
      "typed",
      "create",
      "secret",
      "generic",
      "half",
      "--type=kubernetes.io/tls",
      "--from-literal=tls.crt=c",
    );
    expect(tls.code).toBe(1);
    expect(tls.stderr).toBe('error: failed to create secret Secret "half" is invalid: data[tls.key]: Required value\n');
    const ssh = await cp.kubectl("-n", "typed", "create", "secret", "generic", "nokey", "--type=kubernetes.io/ssh-auth");
    expect(ssh.stderr).toBe('error: failed to create secret Secret "nokey" is invalid: data[ssh-privatekey]: Required value\n');
  });
});
