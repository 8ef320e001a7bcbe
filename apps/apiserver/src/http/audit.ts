// Audit logging, placed as Kubernetes places it (k8s.io/apiserver pkg/endpoints/filters/audit*.go and
// pkg/server/config.go DefaultBuildHandlerChain):
// - `auditID` first, for every request: the `Audit-ID` response header (the client's own if it sent one);
// - `failedAuthenticationAudit` around authentication: a 401 is recorded without a user;
// - `audit` right after authentication, before impersonation and authorization: the policy sees the
//   authenticated user, and the later filters add the impersonated user and the authorization decision.
import {
  type AuditSettings,
  type Auditor,
  type RequestAttributes,
  type RequestAudit,
  auditUser,
  levelAtLeast,
  loadPolicyFile,
  preciseNow,
  sourceIPs,
  startAuditor,
  truncateUserAgent,
} from "@orch/audit";
import type { Logger } from "@orch/log";
import { decodeKubernetesProtobuf, PROTOBUF_CONTENT_TYPE } from "@orch/machinery/protobuf";
import type { UserInfo } from "@orch/registry";
import type { Context, MiddlewareHandler } from "hono";
import { randomUUID } from "node:crypto";
import type { TLSSocket } from "node:tls";
import { parse as parseYaml } from "yaml";
import { requestAttributes, requestInfo } from "../authz/request-attributes.js";
import type { AuditConfig } from "../config.js";
import type { Env } from "./filters.js";
import { parseMediaType } from "./negotiation.js";
import type { ResourceRequest } from "./request-info.js";
import { unforeseenError } from "./respond.js";

type Filter = MiddlewareHandler<Env>;

/**
 * The auditor the settings ask for, or none. As Kubernetes, a policy without a log (or a log without a
 * policy) records nothing: said once at start-up, as a warning. An unusable policy or log file refuses
 * start-up.
 */
export async function auditorFromConfig(
  config: AuditConfig | undefined,
  log: Logger,
  openSink?: AuditSettings["openSink"],
): Promise<Auditor | undefined> {
  const { policyFile, logPath } = config ?? {};
  if (policyFile && logPath) {
    const auditLog = log.child("audit");
    return startAuditor({ ...config, policyFile, logPath, openSink, onError: (message, error) => auditLog.error(message, error) });
  }
  // Kubernetes reads the policy before it looks for a backend: a broken one refuses start-up either way.
  if (policyFile) {
    await loadPolicyFile(policyFile);
    log.warn("ORCH_AUDIT_POLICY_FILE is set but ORCH_AUDIT_LOG_PATH is not: no audit events will be recorded");
  } else if (logPath) {
    log.warn("ORCH_AUDIT_LOG_PATH is set but ORCH_AUDIT_POLICY_FILE is not: no audit events will be recorded");
  }
  return undefined;
}

/** Kubernetes' WithAuditInit: every response carries the request's audit ID. */
export function auditID(): Filter {
  return async (c, next) => {
    c.set("receivedAt", preciseNow());
    const id = header(c.env.incoming.headers["audit-id"]) || randomUUID();
    c.set("auditID", id);
    // On the connection's response, so that a watch's stream (written straight to it) carries it too.
    c.env.outgoing.setHeader("Audit-ID", id);
    await next();
  };
}

/** Kubernetes' WithFailedAuthenticationAudit: a request nobody could authenticate, at ResponseStarted. */
export function failedAuthenticationAudit(auditor: Auditor, log: Logger): Filter {
  return async (c, next) => {
    await next();
    if (c.get("authenticated") !== undefined || c.res.status !== 401) return;
    try {
      const record = begin(auditor, c, undefined);
      if (!record) return;
      record.record.setResponseStatus(401, { message: attemptedAuthentication(c) });
      record.record.emit("ResponseStarted");
    } catch (e) {
      log.error("auditing a failed authentication failed", e);
    }
  };
}

/** Kubernetes' WithAudit: the request's stages, as the policy says. */
export function audit(auditor: Auditor, log: Logger): Filter {
  return async (c, next) => {
    let started: { record: RequestAudit; info: ResourceRequest | undefined } | undefined;
    try {
      started = begin(auditor, c, c.get("authenticated"));
    } catch (e) {
      log.error("starting an audit record failed", e);
    }
    if (!started) return next();
    const { record, info } = started;
    c.set("audit", record);
    record.emit("RequestReceived");
    try {
      await next();
    } catch (e) {
      // Hono turns a handler's error into a 500 before it gets here; this is for whatever escapes that.
      record.setResponseStatus(500, panicStatus(e));
      record.emit("Panic");
      throw e;
    }
    recordResponse(c, record, info).catch((e) => log.error("completing an audit record failed", e));
  };
}

function begin(auditor: Auditor, c: Context<Env>, user: UserInfo | undefined) {
  const url = new URL(c.req.url);
  let info: ResourceRequest | undefined;
  try {
    info = requestInfo(c.req.method, url);
  } catch {
    // A path the router answers 400: audited as a non-resource request.
  }
  const { user: _placeholder, ...attributes } = requestAttributes(user ?? { username: "", groups: [] }, c.req.method, url, info);
  const policyAttributes = { ...attributes, ...(user ? { user } : {}) } as RequestAttributes;
  const incoming = c.env.incoming;
  const record = auditor.begin(policyAttributes, {
    auditID: c.get("auditID"),
    receivedAt: c.get("receivedAt"),
    requestURI: incoming.url ?? "",
    verb: attributes.verb,
    user: user ? auditUser(user) : {},
    sourceIPs: sourceIPs(header(incoming.headers["x-forwarded-for"]), header(incoming.headers["x-real-ip"]), incoming.socket.remoteAddress),
    userAgent: truncateUserAgent(incoming.headers["user-agent"]),
    objectRef: attributes.resourceRequest
      ? omitEmpty({
          resource: attributes.resource,
          namespace: attributes.namespace,
          name: attributes.name,
          apiGroup: attributes.apiGroup,
          apiVersion: attributes.apiVersion ?? "",
          subresource: attributes.subresource,
        })
      : undefined,
  });
  return record ? { record, info } : undefined;
}

/** What the response and the request's body tell the record, then its last stage. */
async function recordResponse(c: Context<Env>, record: RequestAudit, info: ResourceRequest | undefined): Promise<void> {
  const authenticated = c.get("authenticated");
  const user = c.get("user");
  if (user && user !== authenticated) record.event.impersonatedUser = auditUser(user);
  // Kubernetes records objects only for resource requests.
  const body = info ? c.get("requestBody") : undefined;
  if (body && body.length > 0 && (levelAtLeast(record.level, "Request") || !record.event.objectRef?.name)) {
    const object = decodeBody(body, c.req.header("content-type"));
    if (object !== undefined) record.setRequestObject(object);
  }

  const outgoing = c.env.outgoing;
  const longRunning = info?.verb === "watch";
  if (longRunning && outgoing.headersSent) {
    // A watch's stream is on the connection: it has started; it completes when the connection is done with it.
    record.setResponseStatus(outgoing.statusCode);
    record.emit("ResponseStarted");
    outgoing.once("close", () => record.emit("ResponseComplete"));
    return;
  }

  const response = c.res;
  const failure = unforeseenError(response);
  if (failure !== undefined) {
    record.setResponseStatus(500, panicStatus(failure));
    record.emit("Panic");
    return;
  }
  const wantsObject = info !== undefined && levelAtLeast(record.level, "RequestResponse");
  const type = response.headers.get("content-type") ?? "";
  // A failure's Status says why; a success needs its body read only when the record keeps it.
  if ((wantsObject || response.status >= 400) && decodable(type)) {
    const object = decodeBody(new Uint8Array(await response.clone().arrayBuffer()), type);
    record.setResponseStatus(response.status, isStatus(object) ? object : undefined);
    if (wantsObject && object !== undefined) record.setResponseObject(object);
  } else {
    record.setResponseStatus(response.status);
  }
  if (longRunning) record.emit("ResponseStarted");
  record.emit("ResponseComplete");
}

const panicStatus = (e: unknown) => ({
  status: "Failure",
  reason: "InternalError",
  message: `APIServer panic'd: ${e instanceof Error ? e.message : String(e)}`,
});

/** Kubernetes' getAuthMethods: which credentials the failed request carried. */
function attemptedAuthentication(c: Context<Env>): string {
  const methods: string[] = [];
  const [scheme = "", credential] = (c.req.header("authorization") ?? "").trim().split(" ");
  if (scheme.toLowerCase() === "basic" && credential) methods.push("basic");
  if (scheme.toLowerCase() === "bearer" && credential !== undefined) methods.push("bearer");
  if (new URL(c.req.url).searchParams.get("access_token")?.trim()) methods.push("access_token");
  const socket = c.env.incoming.socket as TLSSocket;
  const certificate = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined;
  if (certificate && Object.keys(certificate).length > 0) methods.push("x509");
  return methods.length > 0 ? `Authentication failed, attempted: ${methods.join(", ")}` : "Authentication failed, no credentials provided";
}

const JSON_TYPES = /^application\/([a-z-]+\+)?json$/;
const YAML_TYPES = new Set(["application/yaml", "text/yaml", "application/apply-patch+yaml"]);

function decodable(contentType: string): boolean {
  const type = parseMediaType(contentType).type;
  return JSON_TYPES.test(type) || YAML_TYPES.has(type) || type === PROTOBUF_CONTENT_TYPE;
}

/** A body as the JSON value it stands for; undefined when it does not parse (the handler has said why). */
function decodeBody(body: Uint8Array, contentType: string | undefined): unknown {
  const type = parseMediaType(contentType || "application/json").type;
  try {
    if (type === PROTOBUF_CONTENT_TYPE) return decodeKubernetesProtobuf(body);
    const text = new TextDecoder().decode(body);
    return YAML_TYPES.has(type) ? parseYaml(text) : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isStatus(object: unknown): object is { status?: unknown; message?: unknown; reason?: unknown; details?: unknown } {
  return typeof object === "object" && object !== null && (object as { kind?: unknown }).kind === "Status";
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);

function omitEmpty<T extends Record<string, string>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== "")) as Partial<T>;
}
