// Reading a kubeconfig: current context, inline and file credentials, tokens, and clear failures.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadKubeconfig, parseKubeconfig } from "../src/index.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const dir = mkdtempSync(join(tmpdir(), "orch-kubeconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster:
    server: https://one.example:6443
    certificate-authority-data: ${b64("CA ONE")}
- name: two
  cluster:
    server: https://two.example:6443
    certificate-authority: ca.pem
    tls-server-name: api.two
users:
- name: cert-user
  user:
    client-certificate-data: ${b64("CERT")}
    client-key-data: ${b64("KEY")}
- name: file-user
  user:
    client-certificate: certs/user.crt
    client-key: ${join(dir, "certs", "user.key")}
- name: token-user
  user:
    token: s3cret
contexts:
- name: a
  context: { cluster: one, user: cert-user, namespace: team-a }
- name: b
  context: { cluster: two, user: file-user }
- name: t
  context: { cluster: one, user: token-user }
current-context: a
`;

describe("kubeconfig", () => {
  it("resolves the current context with inline credentials", () => {
    expect(parseKubeconfig(twoContexts)).toEqual({
      server: "https://one.example:6443",
      ca: "CA ONE",
      cert: "CERT",
      key: "KEY",
      namespace: "team-a",
    });
  });

  it("reads file references relative to the kubeconfig, and tokens", () => {
    mkdirSync(join(dir, "certs"), { recursive: true });
    writeFileSync(join(dir, "ca.pem"), "CA TWO");
    writeFileSync(join(dir, "certs", "user.crt"), "FILE CERT");
    writeFileSync(join(dir, "certs", "user.key"), "FILE KEY");
    expect(parseKubeconfig(twoContexts.replace("current-context: a", "current-context: b"), dir)).toEqual({
      server: "https://two.example:6443",
      ca: "CA TWO",
      tlsServerName: "api.two",
      cert: "FILE CERT",
      key: "FILE KEY",
    });
    expect(parseKubeconfig(twoContexts.replace("current-context: a", "current-context: t"))).toMatchObject({ token: "s3cret" });
  });

  it("loads from a path, else from $KUBECONFIG", () => {
    const path = join(dir, "config");
    writeFileSync(path, twoContexts);
    expect(loadKubeconfig(path).server).toBe("https://one.example:6443");
    expect(loadKubeconfig(undefined, { KUBECONFIG: `${join(dir, "missing")}:${path}` }).server).toBe("https://one.example:6443");
    expect(() => loadKubeconfig(join(dir, "missing"))).toThrow(/cannot read kubeconfig/);
  });

  it("says what is missing", () => {
    expect(() => parseKubeconfig("apiVersion: v1\n")).toThrow(/no current-context/);
    expect(() => parseKubeconfig(twoContexts.replace("current-context: a", "current-context: zzz"))).toThrow(/context "zzz" not found/);
    expect(() => parseKubeconfig(twoContexts.replace("user: cert-user", "user: nobody"))).toThrow(/user "nobody" not found/);
  });
});
