// Each node's identity, as kubelet's TLS bootstrap gets it: with the bootstrap credential (which may only
// ask for node client certificates), a CertificateSigningRequest for `system:node:<name>` in group
// `system:nodes` to the node agent client signer, which the csr-approver approves and the csr-signer
// signs; the key never leaves this machine. The issued certificate is kept (`<node>-client.{key,crt}`)
// and reused while it is valid; one near its end is renewed with the node's own identity. The node
// then asks, as itself, for a serving certificate (orchlet-serving signer), which nothing approves
// automatically: in Kubernetes a cluster administrator (or an approver they install) does.
import { type CertificateSigningRequest, type NamingProfile, csrResource } from "@orch/api";
import { ApiClient, type Kubeconfig, isNotFound } from "@orch/client";
import type { Logger } from "@orch/log";
import { createCertificateRequest, parseCertificate } from "@orch/pki";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface NodeCredential {
  certPem: string;
  keyPem: string;
}

const POLL_MS = 100;
/** Kubelet rotates when 70–90 % of the lifetime has passed; a start past 80 % asks for a new one. */
const RENEW_FRACTION = 0.8;

async function readPair(dir: string, base: string): Promise<NodeCredential | undefined> {
  const cert = join(dir, `${base}.crt`);
  const key = join(dir, `${base}.key`);
  if (!existsSync(cert) || !existsSync(key)) return undefined;
  return { certPem: await readFile(cert, "utf8"), keyPem: await readFile(key, "utf8") };
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

/** Still valid, and not yet in the last fifth of its lifetime. */
function fresh(credential: NodeCredential | undefined, now = Date.now()): boolean {
  if (!credential) return false;
  try {
    const cert = parseCertificate(credential.certPem);
    const from = cert.notBefore.getTime();
    const to = cert.notAfter.getTime();
    return now < from + (to - from) * RENEW_FRACTION;
  } catch {
    return false;
  }
}

export interface IdentityOptions {
  profile: NamingProfile;
  certDir: string;
  log: Logger;
  signal?: AbortSignal;
}

/** Creates a CSR and waits until it is issued; throws when it is denied or failed. */
async function requestCertificate(
  client: ApiClient,
  profile: NamingProfile,
  body: { name: string; signerName: string; request: string; usages: string[] },
  signal: AbortSignal | undefined,
  wait: boolean,
): Promise<string | undefined> {
  const ref = csrResource(profile);
  let csr: CertificateSigningRequest;
  try {
    csr = await client.get<CertificateSigningRequest>(ref, body.name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    csr = await client.create<CertificateSigningRequest>(ref, {
      apiVersion: `${profile.group("certificates")}/v1`,
      kind: "CertificateSigningRequest",
      metadata: { name: body.name },
      spec: { request: Buffer.from(body.request).toString("base64"), signerName: body.signerName, usages: body.usages },
    } as CertificateSigningRequest);
  }
  for (;;) {
    const refused = csr.status?.conditions?.find((c) => (c.type === "Denied" || c.type === "Failed") && c.status === "True");
    if (refused)
      throw new Error(`certificate request ${body.name} ${refused.type.toLowerCase()}: ${refused.message ?? refused.reason ?? ""}`);
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, "base64").toString("utf8");
    if (!wait || signal?.aborted) return undefined;
    await new Promise((r) => setTimeout(r, POLL_MS));
    csr = await client.get<CertificateSigningRequest>(ref, body.name);
  }
}

/** A CSR's name is derived from its public key: a restart finds the request it made before instead of making another. */
const csrName = (prefix: string, node: string, csrPem: string) =>
  `${prefix}-${node}-${createHash("sha256").update(csrPem).digest("hex").slice(0, 10)}`;

/**
 * The node's client certificate: the kept one while fresh, else a new one through a CSR made with
 * the node's current certificate (renewal) or, without one, the bootstrap credential.
 */
export interface Bootstrap {
  config: Kubeconfig;
  /** The client with the bootstrap credential, made when first needed. */
  client(): ApiClient;
}

export async function nodeClientCredential(node: string, bootstrap: Bootstrap, options: IdentityOptions): Promise<NodeCredential> {
  const { profile, certDir, log } = options;
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  const base = `${node}-client`;
  const kept = await readPair(certDir, base);
  if (fresh(kept)) return kept!;

  const { keyPem, csrPem } = await pendingRequest(certDir, base, {
    commonName: `${profile.nodes.userPrefix}${node}`,
    organizations: [profile.nodes.group],
  });
  const current = kept && isValid(kept) ? kept : undefined;
  log.info(`${node}: asking for a client certificate (${current ? "renewal as the node" : "bootstrap"})`);
  const renewing = current ? new ApiClient(nodeKubeconfig(bootstrap.config, current), { userAgent: "orchlet" }) : undefined;
  try {
    const certPem = await requestCertificate(
      renewing ?? bootstrap.client(),
      profile,
      {
        name: csrName("node-csr", node, csrPem),
        signerName: profile.signers.apiserverClientNodeAgent,
        request: csrPem,
        usages: ["digital signature", "client auth"],
      },
      options.signal,
      true,
    );
    if (!certPem) throw new Error(`${node}: stopped while waiting for its client certificate`);
    await keepIssued(certDir, base, keyPem, certPem);
    return { certPem, keyPem };
  } finally {
    renewing?.close();
  }
}

function isValid(credential: NodeCredential, now = Date.now()): boolean {
  try {
    const cert = parseCertificate(credential.certPem);
    return now >= cert.notBefore.getTime() && now < cert.notAfter.getTime();
  } catch {
    return false;
  }
}

/**
 * Asks once (as the node) for a serving certificate for the node's name and address, and keeps it
 * when issued. Returns whether the node has one now; the request stays pending until approved.
 */
export async function nodeServingCredential(node: string, address: string, client: ApiClient, options: IdentityOptions): Promise<boolean> {
  const { profile, certDir } = options;
  const base = `${node}-serving`;
  if (fresh(await readPair(certDir, base))) return true;
  const { keyPem, csrPem } = await pendingRequest(certDir, base, {
    commonName: `${profile.nodes.userPrefix}${node}`,
    organizations: [profile.nodes.group],
    dnsNames: [node],
    ipAddresses: [address],
  });
  const certPem = await requestCertificate(
    client,
    profile,
    {
      name: csrName("csr-serving", node, csrPem),
      signerName: profile.signers.nodeAgentServing,
      request: csrPem,
      usages: ["digital signature", "server auth"],
    },
    options.signal,
    false,
  );
  if (!certPem) return false;
  await keepIssued(certDir, base, keyPem, certPem);
  return true;
}

/** The node's kubeconfig: the bootstrap one's server and CA, the node's own certificate. */
export const nodeKubeconfig = (bootstrap: Kubeconfig, credential: NodeCredential): Kubeconfig => ({
  server: bootstrap.server,
  ...(bootstrap.ca ? { ca: bootstrap.ca } : {}),
  ...(bootstrap.tlsServerName ? { tlsServerName: bootstrap.tlsServerName } : {}),
  cert: credential.certPem,
  key: credential.keyPem,
});

/**
 * The key and certificate request for `base`: made and kept on disk before they are sent, so that a
 * request made before a crash is found again (and its CSR reused) instead of asked for twice.
 */
async function pendingRequest(
  certDir: string,
  base: string,
  subject: Parameters<typeof createCertificateRequest>[0],
): Promise<{ keyPem: string; csrPem: string }> {
  const pendingKey = join(certDir, `${base}.pending.key`);
  const pendingCsr = join(certDir, `${base}.pending.csr`);
  if (existsSync(pendingKey) && existsSync(pendingCsr)) {
    return { keyPem: await readFile(pendingKey, "utf8"), csrPem: await readFile(pendingCsr, "utf8") };
  }
  const { keyPem, csrPem } = await createCertificateRequest(subject);
  await writeAtomically(pendingKey, keyPem);
  await writeAtomically(pendingCsr, csrPem);
  return { keyPem, csrPem };
}

/** The issued pair replaces the pending request. */
async function keepIssued(certDir: string, base: string, keyPem: string, certPem: string): Promise<void> {
  await writeAtomically(join(certDir, `${base}.key`), keyPem);
  await writeAtomically(join(certDir, `${base}.crt`), certPem);
  await Promise.all([rm(join(certDir, `${base}.pending.key`), { force: true }), rm(join(certDir, `${base}.pending.csr`), { force: true })]);
}
