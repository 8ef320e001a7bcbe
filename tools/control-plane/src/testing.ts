// `@orch/control-plane/testing`: a throw-away control plane per test suite, as envtest gives Go
// developers, started in about a second: the launcher of this package in a fresh data directory on
// free ports, its kubeconfig, CRDs installed and established, and a recorder of every change event.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { issueCertificate } from "@orch/pki";
import { parseAllDocuments } from "yaml";
import { EventRecorder, type RecorderOptions, httpWatchSource, natsSource } from "./events.js";

export { EventRecorder, type RecordedEvent, type RecorderOptions, type Step, type WaitOptions, step } from "./events.js";

const here = dirname(fileURLToPath(import.meta.url));

export interface ControlPlaneOptions {
  /**
   * The naming profile: `kubernetes` (default here: Kubernetes' own group names, so manifests and
   * clients written for Kubernetes work unchanged) or `orch`.
   */
  profile?: "kubernetes" | "orch";
  /**
   * Which controllers run: `"all"` (default), `"none"`, or names (`csr-approver`, `csr-signer`,
   * `crd-controller`, `deployment-controller`, `node-lifecycle-controller`, `scheduler`, `orchlet`: the simulated
   * nodes, which need the two certificate controllers). The crd-controller runs whenever `crds` are
   * given: it is what establishes them.
   */
  controllers?: "all" | "none" | string[];
  /** CRDs to create and wait for (Established): objects, or paths of YAML/JSON files (several documents each). */
  crds?: (string | Record<string, unknown>)[];
  /**
   * The event bus. Default: a nats-server of this control plane's own when one is on the PATH; `false`
   * runs none (controllers and the event recorder then use the HTTP watch).
   */
  nats?: boolean;
  /** More environment for the control plane's processes (ORCH_* settings). */
  env?: Record<string, string>;
  /** How long to wait for it to be ready (default 30 s). */
  startTimeoutMs?: number;
}

/** The admin's credentials for the bus: it reads every event and publishes none. */
export interface BusCredentials {
  servers: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface WebhookCertificate {
  /** PEM: give them to `https.createServer({ cert, key })`. */
  cert: string;
  key: string;
  /** The CA that signed it, base64 of the PEM, as `clientConfig.caBundle` takes it. */
  caBundle: string;
}

export interface ControlPlane {
  /** The admin's kubeconfig (YAML text): give it to your client (`KubeConfig.loadFromString`). */
  kubeconfig: string;
  kubeconfigPath: string;
  /** The apiserver's URL. */
  server: string;
  /** The nats-server's URL, or undefined when there is no bus (see `ControlPlaneOptions.nats`). */
  natsUrl: string | undefined;
  /** How to connect to the bus as the admin, when there is one. */
  nats: BusCredentials | undefined;
  /** The profile's API group of a short name (`apiextensions` → `apiextensions.k8s.io` or `apiextensions.orch.io`). */
  group(name: string): string;
  /** The data directory (removed by `stop`). */
  dataDir: string;
  /** The launcher's process id (its children: the apiserver, NATS, the controllers). */
  pid: number;
  /** What the processes printed so far, for a failing test's message. */
  output: string[];
  /**
   * Records every change event from now on (from NATS; from the HTTP watch of `options.resources`
   * without a bus) until `stop()`; `waitFor` and `waitForSequence` then look at what was recorded.
   */
  recordEvents(options?: RecorderOptions): Promise<EventRecorder>;
  /** Creates `crds` and waits until each is Established. */
  installCrds(crds: (string | Record<string, unknown>)[]): Promise<void>;
  /**
   * A serving certificate for a webhook server of your test (admission or conversion), signed by the
   * cluster's CA for `hosts` (IP addresses or DNS names; default `127.0.0.1` and `localhost`), as
   * envtest's WebhookInstallOptions makes one. Put `caBundle` in the webhook's `clientConfig`.
   */
  webhookCertificate(hosts?: string[]): Promise<WebhookCertificate>;
  /** Stops every process and removes the data directory; nothing is left behind. */
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolvePort(port));
    });
  });

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const profile = options.profile ?? "kubernetes";
  const dataDir = mkdtempSync(join(tmpdir(), "orch-test-"));
  const controllers =
    options.controllers === undefined || options.controllers === "all"
      ? "all"
      : options.controllers === "none"
        ? options.crds?.length
          ? "crd-controller"
          : "none"
        : [...new Set([...options.controllers, ...(options.crds?.length ? ["crd-controller"] : [])])].join(",");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ORCH_DATA_DIR: dataDir,
    ORCH_PORT: String(await freePort()),
    ORCH_PROFILE: profile,
    ORCH_CONTROLLERS: controllers,
    ...(options.nats === false ? { ORCH_NATS: "off" } : {}),
    ...options.env,
  };
  // The user's own settings would send the control plane elsewhere.
  for (const name of ["KUBECONFIG", "ORCH_NATS_URL"]) if (!options.env?.[name]) delete env[name];
  const launcher = spawn(process.execPath, [join(here, "launcher.mjs")], { env, stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolveExit) => launcher.once("exit", (code) => resolveExit(code)));
  try {
    await waitUntilReady(launcher, output, options.startTimeoutMs ?? 30_000);
  } catch (e) {
    await stopLauncher(launcher, exited);
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const kubeconfigPath = join(dataDir, "kubeconfig");
  const kubeconfig = readFileSync(kubeconfigPath, "utf8");
  const server = /server: (\S+)/.exec(kubeconfig)![1]!;
  const natsUrl = /nats-server listening on (\S+)/.exec(output.join("\n"))?.[1];
  const pki = (file: string) => join(dataDir, "pki", file);
  const tls = { ca: readFileSync(pki("ca.crt")), cert: readFileSync(pki("admin.crt")), key: readFileSync(pki("admin.key")) };
  const nats = natsUrl ? { servers: natsUrl, caFile: pki("ca.crt"), certFile: pki("admin.crt"), keyFile: pki("admin.key") } : undefined;
  const group = (name: string) => `${name}.${profile === "kubernetes" ? "k8s.io" : "orch.io"}`;
  const api = (method: string, path: string, body?: unknown) => apiRequest(server, tls, method, path, body);
  const recorders = new Set<EventRecorder>();

  const controlPlane: ControlPlane = {
    kubeconfig,
    kubeconfigPath,
    server,
    natsUrl,
    nats,
    group,
    dataDir,
    pid: launcher.pid!,
    output,
    async recordEvents(recorderOptions = {}) {
      const source = nats ? natsSource(nats) : httpWatchSource(server, tls, recorderOptions.resources ?? []);
      const recorder = await EventRecorder.start(source, recorderOptions);
      recorders.add(recorder);
      return recorder;
    },
    async installCrds(crds) {
      const path = `/apis/${group("apiextensions")}/v1/customresourcedefinitions`;
      const objects = crds.flatMap((crd) => (typeof crd === "string" ? documents(crd) : [crd]));
      for (const crd of objects) {
        const { status, body } = await api("POST", path, { ...crd, apiVersion: `${group("apiextensions")}/v1` });
        if (status !== 201) throw new Error(`creating CRD ${name(crd)}: ${status} ${body}`);
      }
      for (const crd of objects) {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const { body } = await api("GET", `${path}/${name(crd)}`);
          const conditions = (JSON.parse(body) as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions;
          if (conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
          if (Date.now() > deadline) throw new Error(`CRD ${name(crd)} not Established within 10 s: ${body}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    },
    async webhookCertificate(hosts = ["127.0.0.1", "localhost"]) {
      const ca = { certPem: readFileSync(pki("ca.crt"), "utf8"), keyPem: readFileSync(pki("ca.key"), "utf8") };
      const ip = (h: string) => /^[\d.]+$|:/.test(h);
      const { certPem, keyPem } = await issueCertificate({
        ca,
        subject: { commonName: hosts[0] ?? "webhook" },
        dnsNames: hosts.filter((h) => !ip(h)),
        ipAddresses: hosts.filter(ip),
        usages: ["digital signature", "key encipherment", "server auth"],
        validitySeconds: 24 * 3600,
      });
      return { cert: certPem, key: keyPem!, caBundle: Buffer.from(ca.certPem).toString("base64") };
    },
    async stop() {
      for (const recorder of recorders) await recorder.stop();
      await stopLauncher(launcher, exited);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  if (options.crds?.length) {
    try {
      await controlPlane.installCrds(options.crds);
    } catch (e) {
      await controlPlane.stop();
      throw e;
    }
  }
  return controlPlane;
}

function waitUntilReady(launcher: ChildProcess, output: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`orch not ready within ${timeoutMs} ms:\n${output.join("\n")}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output.push(...chunk.toString().split("\n").filter(Boolean));
      if (output.some((line) => line.includes("control plane ready"))) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    launcher.stdout!.on("data", onData);
    launcher.stderr!.on("data", onData);
    launcher.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`orch exited (${code}) before it was ready:\n${output.join("\n")}`));
    });
  });
}

/** SIGTERM, and the launcher stops its processes in order; SIGKILL after 10 s (its children follow it). */
async function stopLauncher(launcher: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (launcher.exitCode !== null || launcher.signalCode !== null) return;
  launcher.kill("SIGTERM");
  const timer = setTimeout(() => launcher.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

const name = (o: Record<string, unknown>) => String((o.metadata as { name?: string } | undefined)?.name);

function documents(file: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d !== null);
}

export interface Tls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

function apiRequest(server: string, tls: Tls, method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolveResponse, reject) => {
    const req = request(new URL(path, server), { method, ...tls, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolveResponse({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
