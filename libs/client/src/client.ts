// The typed HTTPS client: one keep-alive connection pool per client, authenticated with the caller's
// own credentials from its kubeconfig, generic over the object type. Every failure is an ApiError
// carrying the server's Status. The transport is undici's pool: a request costs the caller a quarter to a
// half less CPU than through Node's https module (docs/benchmarks.md), and every controller is such a caller.
import { createSecureContext } from "node:tls";
import type { Dispatcher } from "undici";
import { type ConnectionPool, connectionPool } from "./connection-pool.js";
import { ApiError, type Status, errorFromResponse, errorFromStatus, isConflict } from "./errors.js";
import { type Kubeconfig, loadKubeconfig } from "./kubeconfig.js";
import type { KubeObject, ObjectList, ResourceRef } from "./types.js";

export interface ClientOptions {
  /** Sent as `User-Agent`, so the server's logs say which controller called. */
  userAgent?: string;
  /** Socket inactivity limit of one request (not of a watch), default 60 s. */
  requestTimeoutMs?: number;
  /** Connections its requests (not its watches) use at most, default 32; more wait for one. */
  maxConnections?: number;
}

/**
 * A client's connections for requests, as client-go's one HTTP/2 connection multiplexes them: a burst of
 * 500 creates (a ReplicaSet's slow start) opened 500 TLS connections, a handshake each on both sides, and
 * the agent closed all but 256 once idle, to open them again at the next burst.
 */
const MAX_CONNECTIONS = 32;

export interface NamespaceOption {
  /** Required for namespaced resources unless the object carries `metadata.namespace`. */
  namespace?: string;
}

export interface ListOptions extends NamespaceOption {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the reply's `metadata.continue` asks for the next page. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
}

export interface WriteOptions extends NamespaceOption {
  dryRun?: boolean;
  fieldValidation?: "Ignore" | "Warn" | "Strict";
}

export interface PatchOptions extends WriteOptions {
  /** `merge` (RFC 7386, the default) or `json` (RFC 6902). */
  type?: "merge" | "json";
  subresource?: string;
}

export interface DeleteOptions extends NamespaceOption {
  gracePeriodSeconds?: number;
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface WatchOptions extends NamespaceOption {
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this revision; without it the watch starts with the current state as ADDED events. */
  resourceVersion?: string;
  /** With `sendInitialEvents`: `NotOlderThan` (what Kubernetes requires there). */
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  /** Default true: BOOKMARK events carry progress (`object.metadata.resourceVersion`). */
  allowWatchBookmarks?: boolean;
  /** The server ends the watch after this long (the iterator then simply ends). */
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** The events of one watch request. An ERROR event ends it by throwing (ExpiredError for 410). */
export interface WatchStream<T> extends AsyncIterable<WatchEvent<T>> {
  /** Ends the request; a pending iteration then finishes without an error. */
  close(): void;
}

export interface RetryOptions extends NamespaceOption {
  /** Write through this subresource (`status`, `approval`) instead of the main resource. */
  subresource?: string;
  /** Attempts before the last Conflict is thrown, default 10. */
  attempts?: number;
}

interface Call {
  method: string;
  path: string;
  query?: URLSearchParams;
  body?: string;
  contentType?: string;
  /** No inactivity timeout (watch). */
  streaming?: boolean;
  signal?: AbortSignal;
}

const PATCH_TYPES = { merge: "application/merge-patch+json", json: "application/json-patch+json" } as const;

export class ApiClient {
  /** Requests share at most `maxConnections` kept-alive connections; each watch holds one of its own. */
  private readonly pool: ConnectionPool;
  private readonly watchPool: ConnectionPool;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(
    readonly config: Kubeconfig,
    options: ClientOptions = {},
  ) {
    const base = new URL(config.server);
    const tls = base.protocol === "https:";
    // Built once: given the PEMs instead, every new connection would parse the key and the CAs again.
    const secureContext = tls ? createSecureContext({ ca: config.ca, cert: config.cert, key: config.key }) : undefined;
    const connect = tls
      ? { secureContext, rejectUnauthorized: config.insecureSkipTlsVerify !== true, servername: config.tlsServerName }
      : undefined;
    // undici keeps an idle connection only as long as the server's Keep-Alive header allows, so a request
    // does not meet a connection the server is just closing (Node's agent needed a retry for that).
    this.pool = connectionPool(base.origin, { connections: options.maxConnections ?? MAX_CONNECTIONS, connect });
    // A watch holds its connection for as long as it lasts: as many as there are watches.
    this.watchPool = connectionPool(base.origin, { connections: null, connect });
    this.headers = { Accept: "application/json", "User-Agent": options.userAgent ?? "orch-client" };
    if (config.token) this.headers.Authorization = `Bearer ${config.token}`;
    this.timeoutMs = options.requestTimeoutMs ?? 60_000;
  }

  /** A client from a kubeconfig file (see loadKubeconfig for how the file is found). */
  static fromKubeconfig(path?: string, options?: ClientOptions): ApiClient {
    return new ApiClient(loadKubeconfig(path), options);
  }

  /** The URL path of a collection, an object, or an object's subresource. */
  path(ref: ResourceRef, namespace: string | undefined, name?: string, subresource?: string): string {
    let p = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
    if (ref.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${ref.plural}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }

  async get<T extends KubeObject>(ref: ResourceRef, name: string, options: NamespaceOption = {}): Promise<T> {
    return this.json<T>({ method: "GET", path: this.objectPath(ref, options.namespace, name) });
  }

  /** One page (all items when no `limit` is given). */
  async list<T extends KubeObject>(ref: ResourceRef, options: ListOptions = {}): Promise<ObjectList<T>> {
    const query = params({
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      limit: options.limit,
      continue: options.continue,
      resourceVersion: options.resourceVersion,
      resourceVersionMatch: options.resourceVersionMatch,
    });
    return this.json<ObjectList<T>>({ method: "GET", path: this.path(ref, options.namespace), query });
  }

  /**
   * Every page of a list, as one list at the first page's revision (continue tokens keep the snapshot).
   * `limit` is the page size, default 500. Throws ExpiredError when a continue token outlives history.
   */
  async listAll<T extends KubeObject>(ref: ResourceRef, options: ListOptions = {}): Promise<ObjectList<T>> {
    const first = await this.list<T>(ref, { ...options, limit: options.limit ?? 500 });
    const items = first.items;
    let next = first.metadata.continue;
    while (next) {
      const page = await this.list<T>(ref, {
        ...options,
        limit: options.limit ?? 500,
        continue: next,
        resourceVersion: undefined,
        resourceVersionMatch: undefined,
      });
      items.push(...page.items);
      next = page.metadata.continue;
    }
    return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
  }

  async create<T extends KubeObject>(ref: ResourceRef, obj: T, options: WriteOptions = {}): Promise<T> {
    const namespace = this.namespaceOf(ref, obj, options);
    return this.json<T>({ method: "POST", path: this.path(ref, namespace), query: writeParams(options), body: JSON.stringify(obj) });
  }

  /** PUT: fails with Conflict when `metadata.resourceVersion` is not the current one. */
  async update<T extends KubeObject>(ref: ResourceRef, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.put(ref, obj, undefined, options);
  }

  async updateStatus<T extends KubeObject>(ref: ResourceRef, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.put(ref, obj, "status", options);
  }

  /** PUT to a subresource (`status`, `approval`): only that part of the object is written. */
  async updateSubresource<T extends KubeObject>(ref: ResourceRef, obj: T, subresource: string, options: WriteOptions = {}): Promise<T> {
    return this.put(ref, obj, subresource, options);
  }

  /**
   * POST to an object's subresource (`binding`, `eviction`, `token`): `body` is the request object, the
   * answer is whatever the server returns (a Status, a TokenRequest).
   */
  async createSubresource<R = unknown>(
    ref: ResourceRef,
    name: string,
    subresource: string,
    body: unknown,
    options: WriteOptions = {},
  ): Promise<R> {
    return this.json<R>({
      method: "POST",
      path: this.objectPath(ref, options.namespace, name, subresource),
      query: writeParams(options),
      body: JSON.stringify(body),
    });
  }

  async patch<T extends KubeObject>(ref: ResourceRef, name: string, patch: unknown, options: PatchOptions = {}): Promise<T> {
    return this.json<T>({
      method: "PATCH",
      path: this.objectPath(ref, options.namespace, name, options.subresource),
      query: writeParams(options),
      body: JSON.stringify(patch),
      contentType: PATCH_TYPES[options.type ?? "merge"],
    });
  }

  /** The object as it is now (still present with finalizers, or its last state), or a success Status. */
  async delete<T extends KubeObject>(ref: ResourceRef, name: string, options: DeleteOptions = {}): Promise<T | Status> {
    const { namespace, dryRun, ...rest } = options;
    const body = { kind: "DeleteOptions", apiVersion: "v1", ...rest, ...(dryRun ? { dryRun: ["All"] } : {}) };
    return this.json<T | Status>({ method: "DELETE", path: this.objectPath(ref, namespace, name), body: JSON.stringify(body) });
  }

  /**
   * Watches over HTTP (`?watch=true`). The request starts at once; iterate to read events. The iterator
   * ends when the server ends the watch (timeout) or after close(); it throws ExpiredError when the start
   * revision is older than the server's history (relist then) and ApiError for other failures.
   */
  watch<T extends KubeObject>(ref: ResourceRef, options: WatchOptions = {}): WatchStream<T> {
    const abort = new AbortController();
    const query = params({
      watch: "true",
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      resourceVersion: options.resourceVersion,
      resourceVersionMatch: options.resourceVersionMatch,
      allowWatchBookmarks: options.allowWatchBookmarks === false ? undefined : "true",
      timeoutSeconds: options.timeoutSeconds,
      sendInitialEvents: options.sendInitialEvents === undefined ? undefined : String(options.sendInitialEvents),
    });
    const response = this.send({ method: "GET", path: this.path(ref, options.namespace), query, streaming: true, signal: abort.signal });
    // A failure before iteration starts is reported by the iterator, not as an unhandled rejection.
    response.catch(() => undefined);
    return {
      close: () => abort.abort(),
      [Symbol.asyncIterator]: () => readWatch<T>(response, abort.signal),
    };
  }

  /**
   * Read, mutate, write; on Conflict read again and re-apply `mutate` (client-go's RetryOnConflict).
   * `mutate` gets a fresh copy each time and may change it in place or return a new object. When it
   * changes nothing, nothing is written and the current object is returned.
   */
  async updateWithRetry<T extends KubeObject>(
    ref: ResourceRef,
    name: string,
    mutate: (obj: T) => T | void | Promise<T | void>,
    options: RetryOptions = {},
  ): Promise<T> {
    const attempts = options.attempts ?? 10;
    for (let attempt = 1; ; attempt++) {
      const text = await this.text({ method: "GET", path: this.objectPath(ref, options.namespace, name) });
      const current = JSON.parse(text) as T;
      const desired = (await mutate(current)) ?? current;
      // Unchanged (key order is kept by parse and stringify): a write would only bump the revision.
      if (JSON.stringify(desired) === JSON.stringify(JSON.parse(text))) return desired;
      try {
        return await this.put(ref, desired, options.subresource, { namespace: options.namespace });
      } catch (e) {
        if (!isConflict(e) || attempt >= attempts) throw e;
        // Jittered backoff: writers that collided should not collide again in lock step.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 5 * 2 ** attempt)));
      }
    }
  }

  /** Closes its connections; the client must not be used afterwards. */
  close(): void {
    for (const pool of [this.pool, this.watchPool]) pool.destroy().catch(() => undefined);
  }

  private put<T extends KubeObject>(ref: ResourceRef, obj: T, subresource: string | undefined, options: WriteOptions): Promise<T> {
    const name = obj.metadata?.name;
    if (!name) throw new TypeError("the object has no metadata.name");
    const namespace = this.namespaceOf(ref, obj, options);
    return this.json<T>({
      method: "PUT",
      path: this.path(ref, namespace, name, subresource),
      query: writeParams(options),
      body: JSON.stringify(obj),
    });
  }

  private namespaceOf(ref: ResourceRef, obj: KubeObject, options: NamespaceOption): string | undefined {
    const namespace = options.namespace ?? obj.metadata?.namespace;
    if (ref.namespaced && !namespace) throw new TypeError(`${ref.plural} are namespaced: give a namespace`);
    return ref.namespaced ? namespace : undefined;
  }

  private objectPath(ref: ResourceRef, namespace: string | undefined, name: string, subresource?: string): string {
    if (ref.namespaced && !namespace) throw new TypeError(`${ref.plural} are namespaced: give a namespace`);
    return this.path(ref, namespace, name, subresource);
  }

  private async json<T>(call: Call): Promise<T> {
    return JSON.parse(await this.text(call)) as T;
  }

  private async text(call: Call): Promise<string> {
    const res = await this.send(call);
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) throw errorFromResponse(res.statusCode, text);
    return text;
  }

  private async send(call: Call): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { ...this.headers };
    if (call.body !== undefined) headers["Content-Type"] = call.contentType ?? "application/json";
    const query = call.query?.toString();
    // A watch may be quiet for minutes: only a request has an inactivity limit.
    const timeout = call.streaming ? 0 : this.timeoutMs;
    try {
      return await (call.streaming ? this.watchPool : this.pool).request({
        method: call.method as Dispatcher.HttpMethod,
        path: query ? `${call.path}?${query}` : call.path,
        headers,
        body: call.body,
        signal: call.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
        throw new Error(`${call.method} ${call.path}: no response within ${this.timeoutMs} ms`, { cause: e });
      throw e;
    }
  }
}

function params(values: Record<string, string | number | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== "") q.set(k, String(v));
  return q;
}

function writeParams(options: WriteOptions): URLSearchParams {
  return params({ dryRun: options.dryRun ? "All" : undefined, fieldValidation: options.fieldValidation });
}

/** Reads JSON lines off a watch response, with the stream's own backpressure (one chunk at a time). */
async function* readWatch<T>(response: Promise<Dispatcher.ResponseData>, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
  let res: Dispatcher.ResponseData;
  try {
    res = await response;
  } catch (e) {
    if (signal.aborted) return;
    throw e;
  }
  try {
    if (res.statusCode !== 200) throw errorFromResponse(res.statusCode, await res.body.text());
    res.body.setEncoding("utf8");
    let buffer = "";
    for await (const chunk of res.body) {
      buffer += chunk as string;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line) continue;
        const event = JSON.parse(line) as { type: string; object: unknown };
        if (event.type === "ERROR") throw errorFromStatus(event.object as Status);
        yield event as WatchEvent<T>;
      }
    }
  } catch (e) {
    if (signal.aborted && !(e instanceof ApiError)) return;
    throw e;
  } finally {
    res.body.destroy();
  }
}
