import { execFile } from "node:child_process";
import { request } from "node:https";
import { createServer } from "node:https";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCA, createCertificateRequest, issueCertificate, parseCertificateRequest } from "../src/index.js";
import type { CertificateAndKey } from "../src/index.js";
import { scratchDir } from "./helpers.js";

const run = promisify(execFile);
const s = scratchDir();

interface Seen {
  authorized: boolean;
  error: string | null;
  cn?: unknown;
  o?: unknown;
}

let ca: CertificateAndKey;
let server: Server;
let port: number;

beforeAll(async () => {
  ca = await createCA({ commonName: "orch-test-ca" });
  const serving = await issueCertificate({
    ca,
    subject: { commonName: "kube-apiserver" },
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usages: ["digital signature", "key encipherment", "server auth"],
    validitySeconds: 3600,
  });
  // Accept every client at the TLS layer and report what the handshake concluded, as the apiserver will.
  server = createServer(
    { key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const seen: Seen = {
        authorized: socket.authorized,
        error: socket.authorizationError?.toString() ?? null,
        cn: peer.subject?.CN,
        o: peer.subject?.O,
      };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(seen));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function get(client?: { certPem: string; keyPem: string }): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/", ca: ca.certPem, cert: client?.certPem, key: client?.keyPem, agent: false },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve(JSON.parse(body) as Seen));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function clientCert(issuer: CertificateAndKey, usages: Parameters<typeof issueCertificate>[0]["usages"]) {
  const { certPem, keyPem } = await issueCertificate({
    ca: issuer,
    subject: { commonName: "jane", organizations: ["system:masters", "devs"] },
    usages,
    validitySeconds: 600,
  });
  return { certPem, keyPem: keyPem ?? "" };
}

describe("certificates in real TLS", () => {
  it("node:https verifies the server (IP SAN) and authorizes our client certificate", async () => {
    const seen = await get(await clientCert(ca, ["digital signature", "key encipherment", "client auth"]));
    expect(seen).toEqual({ authorized: true, error: null, cn: "jane", o: ["system:masters", "devs"] });
  });

  it("does not authorize a client certificate from another CA, or one without client auth", async () => {
    const other = await createCA({ commonName: "orch-test-ca" }); // same name, different key
    const foreign = await get(await clientCert(other, ["digital signature", "client auth"]));
    expect(foreign.authorized).toBe(false);
    expect(foreign.error).toBeTruthy();
    expect(foreign.cn).toBe("jane");

    const serverOnly = await get(await clientCert(ca, ["digital signature", "server auth"]));
    expect(serverOnly).toMatchObject({ authorized: false, error: "INVALID_PURPOSE" });

    const anonymous = await get();
    expect(anonymous.authorized).toBe(false);
  });

  it("kubectl (client-go) accepts the CA, the PKCS#8 key and a certificate issued from a CSR", async () => {
    const csr = await createCertificateRequest({ commonName: "kubectl-user", organizations: ["system:masters"] });
    const request = parseCertificateRequest(csr.csrPem);
    expect(request.signatureValid).toBe(true);
    const issued = await issueCertificate({
      ca,
      subject: request.subject,
      usages: ["digital signature", "client auth"],
      publicKeyPem: request.publicKeyPem,
      validitySeconds: 600,
    });
    const b64 = (text: string) => Buffer.from(text).toString("base64");
    const kubeconfig = s.file(
      "kubeconfig.json",
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: `https://127.0.0.1:${port}`, "certificate-authority-data": b64(ca.certPem) } }],
        users: [{ name: "u", user: { "client-certificate-data": b64(issued.certPem), "client-key-data": b64(csr.keyPem) } }],
        contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
        "current-context": "ctx",
      }),
    );
    const { stdout } = await run("kubectl", ["--kubeconfig", kubeconfig, "get", "--raw", "/"], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({ authorized: true, error: null, cn: "kubectl-user", o: "system:masters" });
  });
});
