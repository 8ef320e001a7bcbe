// The event bus of `npm start` against real processes: the launcher's nats-server takes only clients
// with a certificate from the cluster CA, each may read the events of what RBAC lets it watch (and
// loses them when RBAC takes them back), only the apiserver publishes, and a Secret's data never travels.
import { natsConnectOptions } from "@orch/bus-access";
import { createCA, createCertificateRequest, issueCertificate } from "@orch/pki";
import { type NatsServer, eventually, startNatsServer } from "@orch/testing";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AckPolicy, type ConnectionOptions, DeliverPolicy, type NatsConnection, connect, nuid } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, busAs, startControlPlane } from "./control-plane.js";

const STREAM = "ORCH_EVENTS";
let cp: ControlPlane;
const connections: NatsConnection[] = [];

afterAll(async () => {
  for (const nc of connections) await nc.close().catch(() => undefined);
});

async function open(options: ConnectionOptions): Promise<NatsConnection> {
  const nc = await connect({ ...options, timeout: 3_000, maxReconnectAttempts: 0 });
  connections.push(nc);
  return nc;
}

/** Creates a consumer of `filter` as `nc` would to read those events; rejects when refused. */
async function consume(nc: NatsConnection, filter: string, start: "all" | "new" = "all") {
  const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 2_000 });
  const name = nuid.next();
  await jsm.consumers.add(STREAM, {
    name,
    filter_subject: filter,
    deliver_policy: start === "all" ? DeliverPolicy.All : DeliverPolicy.New,
    ack_policy: AckPolicy.None,
    mem_storage: true,
  });
  return { name, consumer: await nc.jetstream({ timeout: 2_000 }).consumers.get(STREAM, name) };
}

/** A client certificate for `commonName` from `ca` (the cluster's unless given), as files. */
async function certificateFor(commonName: string, ca?: { certPem: string; keyPem: string }) {
  const signer = ca ?? {
    certPem: readFileSync(join(cp.dataDir, "pki", "ca.crt"), "utf8"),
    keyPem: readFileSync(join(cp.dataDir, "pki", "ca.key"), "utf8"),
  };
  const { certPem, keyPem } = await issueCertificate({
    ca: signer,
    subject: { commonName },
    usages: ["digital signature", "key encipherment", "client auth"],
    validitySeconds: 3600,
  });
  const certFile = join(cp.dataDir, `${commonName}-test.crt`);
  const keyFile = join(cp.dataDir, `${commonName}-test.key`);
  writeFileSync(certFile, certPem);
  writeFileSync(keyFile, keyPem!);
  return { certFile, keyFile };
}

const apply = async (manifest: unknown) => {
  const file = join(cp.dataDir, `manifest-${nuid.next()}.json`);
  writeFileSync(file, JSON.stringify(manifest));
  const result = await cp.kubectl("apply", "-f", file);
  expect(result.stderr).toBe("");
};

describe("the launcher's NATS", () => {
  beforeAll(async () => {
    cp = await startControlPlane();
  }, 30_000);
  afterAll(() => cp?.stop());

  it("refuses connections without a certificate, and with a certificate the cluster CA did not sign", async () => {
    const caFile = join(cp.dataDir, "pki", "ca.crt");
    await expect(connect({ servers: cp.natsUrl!.replace("tls://", "nats://"), timeout: 1_500, maxReconnectAttempts: 0 })).rejects.toThrow();
    await expect(connect({ servers: cp.natsUrl!, tls: { caFile }, timeout: 1_500, maxReconnectAttempts: 0 })).rejects.toThrow();
    const stranger = await certificateFor("stranger", await createCA({ commonName: "not-the-cluster-ca", validityDays: 1 }));
    await expect(connect({ ...busAs(cp, stranger), timeout: 1_500, maxReconnectAttempts: 0 })).rejects.toThrow();
    // A certificate from the cluster CA whose user RBAC lets watch nothing has no account on the bus.
    await expect(open(busAs(cp, await certificateFor("nobody")))).rejects.toThrow(/Authorization Violation/i);
  });

  it("lets a controller read the events of what it watches, and neither Secrets' events nor publishing", async () => {
    const signer = await open(busAs(cp, "controllers/csr-signer"));
    // The csr-signer watches certificate signing requests: their consumer is allowed.
    await consume(signer, "orch.events.certificates%2Eorch%2Eio.certificatesigningrequests.>");
    await expect(consume(signer, "orch.events.core.secrets.>")).rejects.toThrow(/Permissions Violation/);
    await expect(consume(signer, "orch.events.>")).rejects.toThrow(/Permissions Violation/);
    // An unfiltered consumer, or reading stored messages directly, is not for readers at all.
    const jsm = await signer.jetstreamManager({ checkAPI: false, timeout: 2_000 });
    await expect(jsm.consumers.add(STREAM, { ack_policy: AckPolicy.None, filter_subject: "orch.events.core.secrets.>" })).rejects.toThrow(
      /Permissions Violation/,
    );
    await expect(jsm.streams.getMessage(STREAM, { seq: 1 })).rejects.toThrow(/Permissions Violation/);

    const subscription = signer.subscribe("orch.events.core.secrets.>");
    await expect(
      (async () => {
        for await (const _ of subscription) return "a message";
      })(),
    ).rejects.toThrow(/Permissions Violation/);

    await expect(signer.jetstream({ timeout: 2_000 }).publish("orch.events.core.serviceaccounts.default.forged", "{}")).rejects.toThrow(
      /Permissions Violation|timeout/i,
    );
  });

  it("keeps a forged change off the bus, so no certificate is issued for it", async () => {
    const { csrPem } = await createCertificateRequest({ commonName: "mallory" });
    const csr = {
      apiVersion: "certificates.orch.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "mallory" },
      spec: {
        request: Buffer.from(csrPem).toString("base64"),
        signerName: "orch.io/orch-apiserver-client",
        usages: ["digital signature", "key encipherment", "client auth"],
      },
    };
    await apply(csr);
    const subject = "orch.events.certificates%2Eorch%2Eio.certificatesigningrequests._.mallory";
    // The approver may approve through the API (where its RBAC is checked), never by event.
    const approver = await open(busAs(cp, "controllers/csr-approver"));
    const forged = {
      type: "MODIFIED",
      revision: 1e9,
      object: { ...csr, status: { conditions: [{ type: "Approved", status: "True", reason: "Forged", message: "" }] } },
    };
    await expect(approver.jetstream({ timeout: 2_000 }).publish(subject, JSON.stringify(forged))).rejects.toThrow(
      /Permissions Violation|timeout/i,
    );

    // What the stream holds for the request is the apiserver's: its creation, then a marker change.
    await expect((await cp.kubectl("annotate", "csr", "mallory", "marker=1")).stderr).toBe("");
    const relay = await open(busAs(cp, "event-relay"));
    const jsm = await relay.jetstreamManager({ timeout: 2_000 });
    const bodies = await eventually(
      "the marker change on the bus",
      async () => {
        const { consumer } = await consume(relay, subject);
        const seen: string[] = [];
        for (;;) {
          const m = await consumer.next({ expires: 1000 });
          if (!m) break;
          seen.push(m.string());
        }
        return seen.some((b) => b.includes('"marker":"1"')) && seen;
      },
      { timeoutMs: 10_000 },
    );
    expect(bodies.every((b) => !b.includes("Forged"))).toBe(true);
    expect(await jsm.streams.info(STREAM)).toBeTruthy();
    const current = JSON.parse((await cp.kubectl("get", "csr", "mallory", "-o", "json")).stdout);
    expect(current.status?.certificate).toBeUndefined();
    expect(current.status?.conditions ?? []).toEqual([]);
  });

  it("never carries a Secret's data", async () => {
    const admin = await open(busAs(cp, "admin"));
    const { consumer } = await consume(admin, "orch.events.core.secrets.default.*", "new");
    const value = `sesame-${nuid.next()}`;
    await apply({ apiVersion: "v1", kind: "Secret", metadata: { name: "door" }, stringData: { password: value } });
    const m = await consumer.next({ expires: 10_000 });
    expect(m?.subject).toBe("orch.events.core.secrets.default.door");
    const text = m!.string();
    expect(text).not.toContain(value);
    expect(text).not.toContain(Buffer.from(value).toString("base64"));
    expect(JSON.parse(text)).toMatchObject({ type: "ADDED", truncated: true, object: { kind: "Secret", metadata: { name: "door" } } });
  });

  it("follows RBAC: a binding gives a user its events, and taking it away takes them back", async () => {
    const alice = busAs(cp, await certificateFor("alice"));
    await expect(open(alice)).rejects.toThrow(/Authorization Violation/i);
    const rbac = "rbac.authorization.orch.io/v1";
    await apply({
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: "serviceaccount-watcher" },
      rules: [{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get", "list", "watch"] }],
    });
    await apply({
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: { name: "alice-watches-serviceaccounts", namespace: "default" },
      roleRef: { apiGroup: "rbac.authorization.orch.io", kind: "ClusterRole", name: "serviceaccount-watcher" },
      subjects: [{ apiGroup: "rbac.authorization.orch.io", kind: "User", name: "alice" }],
    });
    const nc = await eventually("alice admitted to the bus", () => open(alice).catch(() => undefined), {
      timeoutMs: 10_000,
      intervalMs: 200,
    });
    const { consumer, name } = await consume(nc, "orch.events.core.serviceaccounts.default.*", "new");
    // In the namespace of the binding only.
    await expect(consume(nc, "orch.events.core.serviceaccounts.kube-system.*")).rejects.toThrow(/Permissions Violation/);
    await apply({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "hello" } });
    expect((await consumer.next({ expires: 10_000 }))?.subject).toBe("orch.events.core.serviceaccounts.default.hello");

    expect((await cp.kubectl("delete", "rolebinding", "alice-watches-serviceaccounts")).code).toBe(0);
    // The consumer made under the binding goes, and no new one is allowed.
    const jsm = await (await open(busAs(cp, "event-relay"))).jetstreamManager({ timeout: 2_000 });
    await eventually(
      "alice's consumer removed",
      () =>
        jsm.consumers.info(STREAM, name).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 10_000 },
    );
    await eventually(
      "alice refused",
      () =>
        open(alice).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 10_000 },
    );
  });
});

describe("an external NATS (ORCH_NATS_URL) with credentials given by file", () => {
  let external: NatsServer;
  let control: ControlPlane;
  let files: { caFile: string; certFile: string; keyFile: string };
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "orch-external-nats-"));
    const ca = await createCA({ commonName: "external-nats-ca", validityDays: 1 });
    const issue = async (name: string, options: { commonName: string; server?: boolean }) => {
      const { certPem, keyPem } = await issueCertificate({
        ca,
        subject: { commonName: options.commonName },
        // nats.js checks a loopback server's certificate for the name localhost.
        ...(options.server ? { ipAddresses: ["127.0.0.1"], dnsNames: ["localhost"] } : {}),
        usages: ["digital signature", "key encipherment", options.server ? "server auth" : "client auth"],
        validitySeconds: 3600,
      });
      writeFileSync(join(dir, `${name}.crt`), certPem);
      writeFileSync(join(dir, `${name}.key`), keyPem!);
      return { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
    };
    writeFileSync(join(dir, "ca.crt"), ca.certPem);
    const server = await issue("server", { commonName: "nats", server: true });
    files = { caFile: join(dir, "ca.crt"), ...(await issue("orch", { commonName: "orch-control-plane" })) };
    external = await startNatsServer({
      config: [
        `tls { cert_file: ${JSON.stringify(server.certFile)}, key_file: ${JSON.stringify(server.keyFile)}, ca_file: ${JSON.stringify(files.caFile)}, verify_and_map: true }`,
        'authorization { users = [ { user: "CN=orch-control-plane", permissions: { publish: ">", subscribe: ">" } } ] }',
      ].join("\n"),
    });
    control = await startControlPlane({
      ORCH_NATS_URL: external.url,
      ORCH_NATS_CA_FILE: files.caFile,
      ORCH_NATS_CERT_FILE: files.certFile,
      ORCH_NATS_KEY_FILE: files.keyFile,
    });
  }, 30_000);
  afterAll(async () => {
    await control?.stop();
    await external?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("publishes there and the controllers follow it, with the certificate the files name", async () => {
    expect(control.natsUrl).toBeUndefined(); // the launcher started no nats-server of its own
    await expect(
      connect({ servers: external.url, tls: { caFile: files.caFile }, timeout: 1_500, maxReconnectAttempts: 0 }),
    ).rejects.toThrow();

    expect((await control.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")).code).toBe(0);
    // The deployment controller gets the Deployment from the external NATS and makes its ReplicaSet.
    await eventually(
      "the ReplicaSet of the Deployment",
      async () => (await control.kubectl("get", "replicasets", "-o", "name")).stdout.includes("replicaset.apps/web-"),
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    const nc = await open(natsConnectOptions({ servers: external.url, ...files }, "orch-test"));
    const jsm = await nc.jetstreamManager({ timeout: 2_000 });
    const message = await jsm.streams.getMessage(STREAM, { last_by_subj: "orch.events.apps.deployments.default.web" });
    expect(message.json<{ object: { metadata: { name: string } } }>().object.metadata.name).toBe("web");
  });
});
