// Test harness: a real apiserver (HTTPS, SQLite file in a temp data dir, no NATS) started in-process,
// and a small HTTPS client that presents the admin client certificate from the data dir's pki/.
import { afterAll, beforeAll } from "vitest";
import { namingProfile } from "@orch/api";
import { createLogger } from "@orch/log";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import type { ApiserverConfig } from "../src/config.js";
import { type RunningApiserver, startApiserver } from "../src/server.js";

export interface Reply<T = any> {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every `Warning` header, decoded to its text (`299 - "text"` → `text`). */
  warnings: string[];
  /** The body parsed as JSON (or YAML when the response says so); the raw text when it is neither. */
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string | Buffer;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
}

export interface WatchEvent {
  type: string;
  object: any;
}

/** Reads a watch stream line by line. */
export class WatchStream {
  private buffer = "";
  private readonly events: WatchEvent[] = [];
  private waiter: (() => void) | undefined;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  private isEnded = false;

  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    private readonly res: IncomingMessage,
  ) {
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, nl).trim();
        this.buffer = this.buffer.slice(nl + 1);
        if (line) this.events.push(JSON.parse(line) as WatchEvent);
      }
      this.waiter?.();
    });
    this.ended = new Promise((resolve) => {
      const done = () => {
        this.isEnded = true;
        this.waiter?.();
        resolve();
      };
      res.on("end", done);
      res.on("close", done);
      res.on("error", done);
    });
  }

  get done(): boolean {
    return this.isEnded;
  }

  /** The next event; fails after `timeoutMs`. */
  async next(timeoutMs = 3000): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = this.events.shift();
      if (e) return e;
      if (this.isEnded) throw new Error("watch stream ended");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }

  async take(n: number, timeoutMs = 3000): Promise<WatchEvent[]> {
    const out: WatchEvent[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next(timeoutMs));
    return out;
  }

  /** Asserts that nothing arrives for `ms`; returns what did arrive otherwise. */
  /**
   * The events that arrive before the one for `marker`, an object `write` changes after everything the
   * test expects no event for. Watch events come in revision order, so once the marker's arrives, any
   * event for an earlier change would have come first: an empty answer proves there was none.
   */
  async eventsBefore(marker: string, write: () => Promise<unknown>): Promise<WatchEvent[]> {
    await write();
    const before: WatchEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (event.object?.metadata?.name === marker) return before;
      before.push(event);
    }
  }

  close(): void {
    this.res.destroy();
  }
}

export class Client {
  readonly agent: Agent;

  constructor(
    readonly url: string,
    private readonly tls: { ca: string; cert?: string; key?: string },
    private readonly defaultHeaders: Record<string, string> = {},
  ) {
    this.agent = new Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
  }

  /** The same server, without a client certificate. */
  anonymous(): Client {
    return new Client(this.url, { ca: this.tls.ca });
  }

  /** A client without a certificate that presents a bearer token. */
  withToken(token: string): Client {
    return new Client(this.url, { ca: this.tls.ca }, { Authorization: `Bearer ${token}` });
  }

  private send(method: string, path: string, o: RequestOptions = {}) {
    const payload = o.raw !== undefined ? o.raw : o.body === undefined ? undefined : JSON.stringify(o.body);
    const headers: Record<string, string> = { ...this.defaultHeaders, ...o.headers };
    if (o.accept) headers.Accept = o.accept;
    if (payload !== undefined) {
      headers["Content-Type"] = o.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(payload));
    }
    const url = new URL(path, this.url);
    const attempt = (retried: boolean) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpsRequest(url, { method, headers, agent: this.agent }, resolve);
        req.on("error", (e: NodeJS.ErrnoException) => {
          // A kept-alive connection the server closed as idle (5 s) just as this request took it, which a
          // loaded machine makes likely: the server read nothing, so sending again is safe (Node's advice).
          if (req.reusedSocket && e.code === "ECONNRESET" && !retried) resolve(attempt(true));
          else reject(e);
        });
        if (payload !== undefined) req.write(payload);
        req.end();
      });
    return attempt(false);
  }

  async request<T = any>(method: string, path: string, o: RequestOptions = {}): Promise<Reply<T>> {
    const res = await this.send(method, path, o);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const type = String(res.headers["content-type"] ?? "");
    let body: unknown = text;
    try {
      if (type.startsWith("application/json")) body = JSON.parse(text);
      else if (type.startsWith("application/yaml")) body = parseYaml(text);
    } catch {
      body = text;
    }
    return { status: res.statusCode ?? 0, headers: res.headers, warnings: warningsOf(res.headers), body: body as T, text };
  }

  get<T = any>(path: string, o?: RequestOptions) {
    return this.request<T>("GET", path, o);
  }
  post<T = any>(path: string, body: unknown, o?: RequestOptions) {
    return this.request<T>("POST", path, { ...o, body });
  }
  put<T = any>(path: string, body: unknown, o?: RequestOptions) {
    return this.request<T>("PUT", path, { ...o, body });
  }
  /** Merge patch unless another type is given. */
  patch<T = any>(path: string, body: unknown, type = "application/merge-patch+json", o?: RequestOptions) {
    return this.request<T>("PATCH", path, { ...o, body, contentType: type });
  }
  delete<T = any>(path: string, body?: unknown, o?: RequestOptions) {
    return this.request<T>("DELETE", path, { ...o, body });
  }

  /** Opens a watch (`watch=true` is added) and returns once the response headers are in. */
  async watch(path: string, o: RequestOptions = {}): Promise<WatchStream> {
    const sep = path.includes("?") ? "&" : "?";
    const res = await this.send("GET", `${path}${sep}watch=true`, o);
    return new WatchStream(res.statusCode ?? 0, res.headers, res);
  }

  close(): void {
    this.agent.destroy();
  }
}

export function warningsOf(headers: IncomingHttpHeaders): string[] {
  const raw = headers.warning;
  // Node joins repeated headers with ", "; split on the boundary between two `299 - "..."` values.
  const text = Array.isArray(raw) ? raw.join(", ") : (raw ?? "");
  const out: string[] = [];
  const re = /\d{3} \S+ "((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(JSON.parse(`"${m[1]}"`) as string);
  return out;
}

export interface TestServer {
  api: Client;
  server: RunningApiserver;
  dataDir: string;
  config: ApiserverConfig;
  /** Stops the apiserver and starts it again on the same data directory, after `whileStopped` if given. */
  restart(whileStopped?: () => Promise<void>): Promise<void>;
  /** Stops the apiserver and removes its data directory. */
  stop(): Promise<void>;
}

export interface TestServerOptions {
  history?: Partial<ApiserverConfig["history"]>;
  /** Lines of a static token file (`token,user,uid,"groups"`). */
  tokens?: string[];
  /** Service account token settings (issuer, audiences, maximum lifetime, public discovery). */
  serviceAccounts?: ApiserverConfig["serviceAccounts"];
  /** The request deadline (default 60 s). */
  requestTimeoutMs?: number;
  /** The time a connection has for its TLS handshake and headers (default 32 s). */
  headerTimeoutMs?: number;
  /** Concurrency and watch limits (default: flowControlDefaults). */
  flowControl?: ApiserverConfig["flowControl"];
  /** How long Events live after their last write (default 1 h). */
  eventTtlMs?: number;
  /** Where Services' cluster IPs come from (default 10.96.0.0/12). */
  serviceClusterIPRange?: string;
  /** The naming profile (default `orch`); `kubernetes` serves apiextensions.k8s.io and `x-kubernetes-*`. */
  profile?: "orch" | "kubernetes";
}

/**
 * Starts an apiserver on a fresh data directory. `into` receives the fields (and keeps receiving them
 * across restarts), so a test file can hold one object for its whole life.
 */
export async function startTestServer(options: TestServerOptions = {}, into = {} as TestServer): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "orch-apiserver-test-"));
  const config: ApiserverConfig = {
    dataDir,
    port: 0,
    bind: "127.0.0.1",
    bus: undefined,
    profile: namingProfile(options.profile ?? "orch"),
    history: { maxRevisions: 100_000, maxAgeMs: 3_600_000, compactEveryMs: 60_000, ...options.history },
    ...(options.tokens ? { tokenFile: join(dataDir, "tokens.csv") } : {}),
    ...(options.serviceAccounts ? { serviceAccounts: options.serviceAccounts } : {}),
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.headerTimeoutMs ? { headerTimeoutMs: options.headerTimeoutMs } : {}),
    ...(options.flowControl ? { flowControl: options.flowControl } : {}),
    ...(options.eventTtlMs ? { eventTtlMs: options.eventTtlMs } : {}),
    ...(options.serviceClusterIPRange ? { serviceClusterIPRange: options.serviceClusterIPRange } : {}),
  };
  if (options.tokens) writeFileSync(join(dataDir, "tokens.csv"), `${options.tokens.join("\n")}\n`);
  const t = Object.assign(into, { dataDir, config });
  const boot = async () => {
    t.server = await startApiserver(config, testLog);
    t.api = adminClient(t.server.url, dataDir);
  };
  t.restart = async (whileStopped) => {
    t.api.close();
    await t.server.close();
    await whileStopped?.();
    config.port = t.server.port;
    await boot();
  };
  t.stop = async () => {
    t.api.close();
    await t.server.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  await boot();
  return t;
}

/** The cluster-admin client of a data directory's PKI (e.g. an apiserver started as a process). */
export function adminClient(url: string, dataDir: string): Client {
  const pki = (name: string) => readFileSync(join(dataDir, "pki", name), "utf8");
  return new Client(url, { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") });
}

/** In-process servers log what goes wrong, not every request: that would bury the test output. */
export const testLog = createLogger("apiserver", { level: "warn" });

/** One apiserver for the whole test file: started before its tests, stopped after them. */
export function useTestServer(options: TestServerOptions = {}): TestServer {
  const t = {} as TestServer;
  beforeAll(async () => {
    await startTestServer(options, t);
  });
  afterAll(async () => {
    await t.stop?.();
  });
  return t;
}

let openKinds = 0;
/**
 * A namespaced custom kind (`Thing`) whose spec keeps any field, Established through /status the way the
 * crd-controller would: for requests that must reach deep into an object.
 */
export async function defineOpenKind(api: Client): Promise<{ path: string; apiVersion: string; kind: string }> {
  const group = `open${++openKinds}-${process.pid}.example.com`;
  const crds = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
  const created = await api.post(crds, {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "things", singular: "thing", kind: "Thing" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", "x-orch-preserve-unknown-fields": true } } } },
        },
      ],
    },
  });
  if (created.status !== 201) throw new Error(`creating the CRD: ${created.status} ${created.text}`);
  const path = `/apis/${group}/v1/namespaces/default/things`;
  await establishCrd(api, crds, created.body, path);
  return { path, apiVersion: `${group}/v1`, kind: "Thing" };
}

/**
 * Marks a created CRD (the body the create answered) NamesAccepted and Established through /status, as
 * the crd-controller would, and waits until `servedPath` answers.
 */
export async function establishCrd(api: Client, crdsPath: string, crd: any, servedPath: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  crd.status = {
    acceptedNames: crd.spec.names,
    conditions: [
      { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "", lastTransitionTime: now },
      { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "", lastTransitionTime: now },
    ],
  };
  const established = await api.put(`${crdsPath}/${crd.metadata.name}/status`, crd);
  if (established.status !== 200) throw new Error(`establishing the CRD: ${established.status} ${established.text}`);
  for (let i = 0; i < 100 && (await api.get(servedPath)).status !== 200; i++) await sleep(20);
}

/** Collection paths of the kinds tests use most. */
export const paths = {
  deployments: (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`,
  secrets: (ns: string) => `/api/v1/namespaces/${ns}/secrets`,
};

let counter = 0;
/** A fresh namespace for one test, so tests in a file do not see each other's objects. */
export async function freshNamespace(api: Client, prefix = "t"): Promise<string> {
  const name = `${prefix}-${process.pid}-${++counter}`;
  const r = await api.post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  if (r.status !== 201) throw new Error(`creating namespace ${name}: ${r.status} ${r.text}`);
  return name;
}

/** A minimal valid Deployment. */
export function deployment(name: string, labels: Record<string, string> = {}, replicas = 1) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  };
}

/** A minimal valid Secret. */
export function secret(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, labels }, type: "Opaque", data };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
