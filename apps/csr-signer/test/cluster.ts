// Process-test harness for the certificate controllers: a real nats-server, a real apiserver process,
// and the apps as real processes (`node apps/<app>/dist/main.mjs`, built by `npm run build`), plus
// the few steps a user of certificate requests takes.
import { type CertificateSigningRequest as Csr, type NamingProfile, namingProfile } from "@orch/api";
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import { type CreateCertificateRequestOptions, createCertificateRequest } from "@orch/pki";
import { type ApiserverProcess, type NatsServer, startApiserverProcess, startNatsServer } from "@orch/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export interface Cluster {
  nats: NatsServer;
  apiserver: ApiserverProcess;
  profile: NamingProfile;
  /** cluster-admin (system:masters), from the kubeconfig the apiserver wrote. */
  admin: ApiClient;
  csrs: ResourceRef;
  /** The cluster CA (the one the signer signs with). */
  caPem: string;
}

/** One cluster per test file; its fields are filled in before the first test. Apps started with `startApp` are stopped after. */
export function useCluster(profileName: "orch" | "kubernetes" = "orch"): Cluster {
  const c = {} as Cluster;
  beforeAll(async () => {
    const profile = namingProfile(profileName);
    const nats = await startNatsServer();
    const apiserver = await startApiserverProcess({ natsUrl: nats.url, env: { ORCH_PROFILE: profileName } });
    Object.assign(c, {
      nats,
      apiserver,
      profile,
      admin: ApiClient.fromKubeconfig(apiserver.kubeconfigPath, { userAgent: "csr-test" }),
      csrs: { group: profile.group("certificates"), version: "v1", plural: "certificatesigningrequests", namespaced: false },
      caPem: readFileSync(join(apiserver.dataDir, "pki", "ca.crt"), "utf8"),
    });
  });
  afterAll(async () => {
    await Promise.all([...running].map((app) => app.stop()));
    c.admin?.close();
    await c.apiserver?.dispose();
    await c.nats?.stop();
  });
  return c;
}

export interface AppProcess {
  readonly process: ChildProcess;
  /** What the app printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash, nothing cleaned up. */
  kill(): Promise<void>;
}

const running = new Set<AppProcess>();

export interface StartAppOptions {
  env?: Record<string, string>;
  /**
   * `own`: the app's own least-privilege credentials, the kubeconfig the apiserver writes for it
   * (`$ORCH_DATA_DIR/controllers/<app>.kubeconfig`, user `system:orch:<app>`). Default: the runtime's
   * default, `$ORCH_DATA_DIR/kubeconfig`.
   */
  identity?: "default" | "own";
}

/** Starts `apps/<name>/dist/main.mjs` with the environment of the contract, against `cluster`. */
export function startApp(name: string, cluster: Cluster, options: StartAppOptions = {}): AppProcess {
  const bundle = join(repoRoot, "apps", name, "dist", "main.mjs");
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first`);
  const own = join(cluster.apiserver.dataDir, "controllers", `${name}.kubeconfig`);
  if (options.identity === "own" && !existsSync(own)) throw new Error(`the apiserver wrote no ${own}`);
  const child = spawn(process.execPath, [bundle], {
    env: {
      ...process.env,
      ORCH_DATA_DIR: cluster.apiserver.dataDir,
      ORCH_NATS_URL: cluster.nats.url,
      ORCH_PROFILE: cluster.profile.name,
      // The app exits when its stdin closes: no orphan outlives a killed test worker.
      ORCH_SUPERVISED: "1",
      ...(options.identity === "own" ? { KUBECONFIG: own } : {}),
      ...options.env,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin?.on("error", () => undefined);
  let log = "";
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => (log = (log + chunk).slice(-20_000)));
  }
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    running.delete(app);
  };
  const app: AppProcess = { process: child, output: () => log, stop: () => end("SIGTERM"), kill: () => end("SIGKILL") };
  running.add(app);
  return app;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Creates a CSR for a fresh key; returns the stored object and the private key. */
export async function createCsr(
  client: ApiClient,
  cluster: Cluster,
  name: string,
  spec: { signerName: string; usages: string[]; expirationSeconds?: number },
  subject: CreateCertificateRequestOptions,
): Promise<{ csr: Csr; keyPem: string }> {
  const { csrPem, keyPem } = await createCertificateRequest(subject);
  // Sent without a status, as a requester does; the stored object has one.
  const csr = await client.create<Csr>(cluster.csrs, {
    apiVersion: `${cluster.profile.group("certificates")}/v1`,
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString("base64"), ...spec },
  } as Csr);
  return { csr, keyPem };
}

/** What `kubectl certificate approve` does: an Approved condition through `/approval`. */
export async function approve(cluster: Cluster, name: string): Promise<Csr> {
  return cluster.admin.updateWithRetry<Csr>(
    cluster.csrs,
    name,
    (csr) => {
      csr.status ??= {};
      (csr.status.conditions ??= []).push({
        type: "Approved",
        status: "True",
        reason: "KubectlApprove",
        message: "This CSR was approved by kubectl certificate approve.",
      });
    },
    { subresource: "approval" },
  );
}

/** The issued certificate (PEM) of `name`, once the signer has written it. */
export async function issuedCertificate(cluster: Cluster, name: string, timeoutMs = 20_000): Promise<string> {
  return waitFor(
    `a certificate for ${name}`,
    async () => {
      const csr = await cluster.admin.get<Csr>(cluster.csrs, name);
      return csr.status?.certificate ? Buffer.from(csr.status.certificate, "base64").toString("utf8") : undefined;
    },
    timeoutMs,
  );
}

interface SelfSubjectReview extends KubeObject {
  status?: { userInfo?: { username?: string; uid?: string; groups?: string[] } };
}

/** Who the apiserver takes the holder of this client certificate for (a SelfSubjectReview over HTTPS). */
export async function whoAmI(cluster: Cluster, certPem: string, keyPem: string): Promise<SelfSubjectReview["status"]> {
  const group = cluster.profile.group("authentication");
  const client = new ApiClient({ server: cluster.apiserver.url, ca: cluster.caPem, cert: certPem, key: keyPem }, { userAgent: "csr-test" });
  try {
    const review = await client.create<SelfSubjectReview>(
      { group, version: "v1", plural: "selfsubjectreviews", namespaced: false },
      { apiVersion: `${group}/v1`, kind: "SelfSubjectReview" },
    );
    return review.status;
  } finally {
    client.close();
  }
}
