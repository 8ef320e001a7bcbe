// First start: a cluster CA, the apiserver's serving certificate, the admin credential and one client
// certificate per built-in controller app, kept in the data directory so later starts (and clients)
// reuse them.
import { createCA, issueCertificate } from "@orch/pki";
import { X509Certificate } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface ClusterPki {
  caPem: string;
  caKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

/** The admin credential's subject: a member of system:masters. */
export const ADMIN_IDENTITY = { commonName: "orch-admin", organizations: ["system:masters"] };

const TEN_YEARS = 10 * 365 * 24 * 3600;
const ONE_YEAR = 365 * 24 * 3600;

async function ensurePair(
  dir: string,
  name: string,
  make: () => Promise<{ certPem: string; keyPem?: string }>,
  /** Whether an existing certificate still serves; when not, a new pair replaces it. */
  fits: (certPem: string) => boolean = () => true,
): Promise<{ certPem: string; keyPem: string }> {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  if (existsSync(certPath) && existsSync(keyPath)) {
    const existing = { certPem: await readFile(certPath, "utf8"), keyPem: await readFile(keyPath, "utf8") };
    if (fits(existing.certPem)) return existing;
  }
  const { certPem, keyPem } = await make();
  await writeFile(keyPath, keyPem!, { mode: 0o600 });
  await writeFile(certPath, certPem);
  return { certPem, keyPem: keyPem! };
}

function splitHosts(hostnames: string[]): { ips: string[]; dns: string[] } {
  const ips = hostnames.filter((h) => /^[\d.]+$|:/.test(h));
  return { ips, dns: hostnames.filter((h) => !ips.includes(h)) };
}

export async function ensurePki(dataDir: string, hostnames: string[]): Promise<ClusterPki> {
  const dir = join(dataDir, "pki");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ca = await ensurePair(dir, "ca", () => createCA({ commonName: "orch-ca", validityDays: TEN_YEARS / 86400 }));
  const caKey = { certPem: ca.certPem, keyPem: ca.keyPem };
  const { ips, dns } = splitHosts(hostnames);
  // Re-issued when a host clients use is missing from it: a load balancer's address (ORCH_EXTERNAL_URL)
  // added to an existing data directory must be in the certificate the replicas behind it serve.
  // The CA's certificates side by side: each waits on its key generation and its files, not on the CPU.
  const [server, admin] = await Promise.all([
    ensurePair(
      dir,
      "apiserver",
      () =>
        issueCertificate({
          ca: caKey,
          subject: { commonName: "orch-apiserver" },
          dnsNames: dns,
          ipAddresses: ips,
          usages: ["digital signature", "key encipherment", "server auth"],
          validitySeconds: ONE_YEAR,
        }),
      (certPem) => {
        const cert = new X509Certificate(certPem);
        return ips.every((ip) => cert.checkIP(ip) !== undefined) && dns.every((name) => cert.checkHost(name) !== undefined);
      },
    ),
    ensurePair(dir, "admin", () =>
      issueCertificate({
        ca: caKey,
        subject: ADMIN_IDENTITY,
        usages: ["digital signature", "key encipherment", "client auth"],
        validitySeconds: ONE_YEAR,
      }),
    ),
  ]);
  return {
    caPem: ca.certPem,
    caKeyPem: ca.keyPem,
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
    adminCertPem: admin.certPem,
    adminKeyPem: admin.keyPem,
  };
}

/** The common name of the apiserver's own identity on the event bus (the only publisher). */
export const EVENT_RELAY_USER = "system:orch:event-relay";

/**
 * The event bus's certificates, from the cluster CA: the NATS server's serving certificate
 * (`pki/nats-server.*`, for the hosts the apiserver serves), the routes' between the servers of a
 * cluster (`pki/nats-route.*`), and the relay's client certificate
 * (`pki/event-relay.*`), which the NATS server maps to the publishing user.
 */
export async function ensureBusCredentials(dataDir: string, pki: ClusterPki, hostnames: string[]): Promise<void> {
  const dir = join(dataDir, "pki");
  const ca = { certPem: pki.caPem, keyPem: pki.caKeyPem };
  const { ips, dns } = splitHosts(hostnames);
  await Promise.all([
    ensurePair(dir, "nats-server", () =>
      issueCertificate({
        ca,
        subject: { commonName: "orch-nats" },
        dnsNames: dns,
        ipAddresses: ips,
        usages: ["digital signature", "key encipherment", "server auth"],
        validitySeconds: ONE_YEAR,
      }),
    ),
    // A cluster's servers connect to one another with mutual TLS: this certificate serves and is presented.
    ensurePair(dir, "nats-route", () =>
      issueCertificate({
        ca,
        subject: { commonName: "orch-nats-route" },
        dnsNames: dns,
        ipAddresses: ips,
        usages: ["digital signature", "key encipherment", "server auth", "client auth"],
        validitySeconds: ONE_YEAR,
      }),
    ),
    ensurePair(dir, "event-relay", () =>
      issueCertificate({
        ca,
        subject: { commonName: EVENT_RELAY_USER },
        usages: ["digital signature", "key encipherment", "client auth"],
        validitySeconds: ONE_YEAR,
      }),
    ),
  ]);
}

/** A client credential: certificate and key, PEM. */
export interface ClientCredential {
  certPem: string;
  keyPem: string;
}

/**
 * A client certificate per controller app, CN `userOf(app)` and no organization: each app is its own
 * user, bound by the bootstrap policy to a role with exactly what it needs (not system:masters).
 */
export async function ensureControllerCredentials(
  dataDir: string,
  pki: ClusterPki,
  apps: readonly string[],
  userOf: (app: string) => string,
): Promise<Map<string, ClientCredential>> {
  const dir = join(dataDir, "pki", "controllers");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ca = { certPem: pki.caPem, keyPem: pki.caKeyPem };
  const pairs = await Promise.all(
    apps.map((app) =>
      ensurePair(dir, app, () =>
        issueCertificate({
          ca,
          subject: { commonName: userOf(app) },
          usages: ["digital signature", "key encipherment", "client auth"],
          validitySeconds: ONE_YEAR,
        }),
      ),
    ),
  );
  return new Map(apps.map((app, i) => [app, pairs[i]!]));
}

/** The orchlet's bootstrap identity (Kubernetes' bootstrap token user): it may only ask for node client certificates. */
export const ORCHLET_BOOTSTRAP_IDENTITY = { commonName: "system:bootstrap:orchlet", organizations: ["system:bootstrappers"] };

/**
 * The node agents' bootstrap credential (`pki/controllers/orchlet-bootstrap.*`): what Kubernetes calls
 * the bootstrap kubeconfig. It authenticates a member of `system:bootstrappers`, whom RBAC allows only to
 * create certificate requests and ask for node client certificates.
 */
export async function ensureOrchletBootstrapCredential(dataDir: string, pki: ClusterPki): Promise<ClientCredential> {
  const dir = join(dataDir, "pki", "controllers");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return ensurePair(dir, "orchlet-bootstrap", () =>
    issueCertificate({
      ca: { certPem: pki.caPem, keyPem: pki.caKeyPem },
      subject: ORCHLET_BOOTSTRAP_IDENTITY,
      usages: ["digital signature", "key encipherment", "client auth"],
      validitySeconds: ONE_YEAR,
    }),
  );
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** A kubeconfig for `server`: the cluster CA and a client credential (the admin's by default). */
export function kubeconfig(
  server: string,
  pki: ClusterPki,
  user = "orch-admin",
  credential: ClientCredential = { certPem: pki.adminCertPem, keyPem: pki.adminKeyPem },
): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: orch
  cluster:
    server: ${server}
    certificate-authority-data: ${b64(pki.caPem)}
users:
- name: ${user}
  user:
    client-certificate-data: ${b64(credential.certPem)}
    client-key-data: ${b64(credential.keyPem)}
contexts:
- name: orch
  context:
    cluster: orch
    user: ${user}
    namespace: default
current-context: orch
`;
}
