// Request-header authentication from a trusted front proxy: off unless a proxy CA is configured;
// then a client certificate from that CA (with an allowed common name) makes X-Remote-User,
// X-Remote-Group and X-Remote-Extra-<key> the caller.
import { namingProfile } from "@orch/api";
import { createCA, issueCertificate } from "@orch/pki";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiserverConfig } from "../src/config.js";
import { type RunningApiserver, startApiserver } from "../src/server.js";
import { Client, startTestServer, testLog } from "./harness.js";

const AUTHN = "authentication.orch.io";
const whoami = (client: Client, headers: Record<string, string> = {}) =>
  client.post(`/apis/${AUTHN}/v1/selfsubjectreviews`, { apiVersion: `${AUTHN}/v1`, kind: "SelfSubjectReview" }, { headers });

let dataDir: string;
let server: RunningApiserver;
let clusterCa: string;
const proxyCa = await createCA({ commonName: "front-proxy-ca" });
const issue = async (commonName: string) =>
  (await issueCertificate({
    ca: proxyCa,
    subject: { commonName },
    usages: ["digital signature", "client auth"],
    validitySeconds: 3600,
  })) as {
    certPem: string;
    keyPem: string;
  };

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "orch-requestheader-test-"));
  writeFileSync(join(dataDir, "front-proxy-ca.crt"), proxyCa.certPem);
  const config: ApiserverConfig = {
    dataDir,
    port: 0,
    bind: "127.0.0.1",
    bus: undefined,
    profile: namingProfile("orch"),
    history: { maxRevisions: 100_000, maxAgeMs: 3_600_000, compactEveryMs: 60_000 },
    requestHeader: { clientCaFile: join(dataDir, "front-proxy-ca.crt"), allowedNames: ["front-proxy"] },
  };
  server = await startApiserver(config, testLog);
  clusterCa = readFileSync(join(dataDir, "pki", "ca.crt"), "utf8");
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("request-header authentication", () => {
  it("takes the user, groups and extra (keys lowercased and unescaped) from a trusted proxy's headers", async () => {
    const cert = await issue("front-proxy");
    const proxy = new Client(server.url, { ca: clusterCa, cert: cert.certPem, key: cert.keyPem });
    const r = await whoami(proxy, {
      "X-Remote-User": "frank",
      "X-Remote-Group": "ops",
      "X-Remote-Extra-Scopes": "read",
      "X-Remote-Extra-Example.com%2FTeam": "blue",
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.status.userInfo).toEqual({
      username: "frank",
      groups: ["ops", "system:authenticated"],
      extra: { scopes: ["read"], "example.com/team": ["blue"] },
    });
    // The user is authorized as itself: nobody granted frank anything.
    const pods = await proxy.get("/api/v1/namespaces/default/pods", { headers: { "X-Remote-User": "frank" } });
    expect(pods.body.message).toBe(
      'pods is forbidden: User "frank" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    // Without X-Remote-User the proxy is nobody.
    expect((await whoami(proxy)).status).toBe(401);
    proxy.close();
  });

  it("refuses a proxy certificate with a common name that is not allowed", async () => {
    const cert = await issue("someone-else");
    const proxy = new Client(server.url, { ca: clusterCa, cert: cert.certPem, key: cert.keyPem });
    expect((await whoami(proxy, { "X-Remote-User": "frank" })).status).toBe(401);
    proxy.close();
  });

  it("ignores the headers from a client the proxy CA did not sign", async () => {
    const admin = new Client(server.url, {
      ca: clusterCa,
      cert: readFileSync(join(dataDir, "pki", "admin.crt"), "utf8"),
      key: readFileSync(join(dataDir, "pki", "admin.key"), "utf8"),
    });
    const r = await whoami(admin, { "X-Remote-User": "frank" });
    expect(r.body.status.userInfo.username).toBe("orch-admin");
    admin.close();
  });

  it("is off unless configured", async () => {
    const plain = await startTestServer();
    try {
      const cert = await issue("front-proxy");
      const proxy = new Client(plain.server.url, {
        ca: readFileSync(join(plain.dataDir, "pki", "ca.crt"), "utf8"),
        cert: cert.certPem,
        key: cert.keyPem,
      });
      expect((await whoami(proxy, { "X-Remote-User": "frank" })).status).toBe(401);
      proxy.close();
    } finally {
      await plain.stop();
    }
  });
});
