// The audit.k8s.io/v1 Event, one per stage of a request, and the record of one audited request that
// emits them (Kubernetes' pkg/apis/audit/v1/types.go, pkg/audit/request.go, endpoints/filters/audit.go).
import { isIP } from "node:net";
import { AUDIT_API_VERSION, type Level, LEVELS, type Stage } from "./policy.js";
import type { RequestAuditConfig } from "./checker.js";

/** authentication.k8s.io/v1 UserInfo: every field left out when empty. */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** metav1.Status as the event carries it: `metadata: {}` always, the rest on failures. */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

/** Fields in the order Kubernetes writes them. */
export interface AuditEvent {
  kind: "Event";
  apiVersion: typeof AUDIT_API_VERSION;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** Where events go. `write` neither blocks nor throws: a backend reports its own failures. */
export interface AuditSink {
  write(event: AuditEvent): void;
  close(): Promise<void>;
}

/** The annotations the authorization filter adds, as Kubernetes names them. */
export const DECISION_ANNOTATION = "authorization.k8s.io/decision";
export const REASON_ANNOTATION = "authorization.k8s.io/reason";

/** Wall-clock time in milliseconds with a fraction: enough for the microseconds audit timestamps carry. */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/** metav1.MicroTime as JSON: RFC 3339 in UTC with six fractional digits. */
export function microTime(ms: number): string {
  const wholeMs = Math.floor(ms);
  const micros = Math.floor((ms - wholeMs) * 1000);
  const iso = new Date(wholeMs).toISOString(); // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, 23)}${String(micros).padStart(3, "0")}Z`;
}

export const levelAtLeast = (level: Level, minimum: Level): boolean => LEVELS.indexOf(level) >= LEVELS.indexOf(minimum);

const MAX_USER_AGENT_LENGTH = 1024;

/** The client's User-Agent, cut as Kubernetes cuts it. */
export function truncateUserAgent(userAgent: string | undefined): string | undefined {
  if (!userAgent) return undefined;
  return userAgent.length > MAX_USER_AGENT_LENGTH ? `${userAgent.slice(0, MAX_USER_AGENT_LENGTH)}...TRUNCATED` : userAgent;
}

/**
 * Kubernetes' utilnet.SourceIPs: the X-Forwarded-For addresses, then X-Real-Ip if not among them, then
 * the connection's own address unless it is the last one already. All but the last can be made up by
 * the client.
 */
export function sourceIPs(forwardedFor: string | undefined, realIp: string | undefined, remoteAddress: string | undefined): string[] {
  const ips: string[] = [];
  for (const part of (forwardedFor ?? "").split(",")) {
    const ip = canonicalIp(part.trim());
    if (ip) ips.push(ip);
  }
  const real = canonicalIp((realIp ?? "").trim());
  if (real && !ips.includes(real)) ips.push(real);
  const remote = canonicalIp(remoteAddress ?? "");
  if (remote && ips.at(-1) !== remote) ips.push(remote);
  return ips;
}

/** An address as Go prints it: an IPv4-mapped IPv6 address is plain IPv4. */
function canonicalIp(text: string): string | undefined {
  const ip = text.startsWith("::ffff:") && isIP(text.slice(7)) === 4 ? text.slice(7) : text;
  return isIP(ip) ? ip : undefined;
}

/** The user as the event records it: empty fields left out, as Go's omitempty does. */
export function auditUser(user: {
  username: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Record<string, string[]>;
}): AuditUser {
  const out: AuditUser = {};
  if (user.username) out.username = user.username;
  if (user.uid) out.uid = user.uid;
  if (user.groups && user.groups.length > 0) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) out.extra = user.extra;
  return out;
}

/** What is known of a request when it arrives, before its handler runs. */
export interface AuditedRequest {
  auditID: string;
  /** `preciseNow()` when the request arrived. */
  receivedAt: number;
  requestURI: string;
  verb: string;
  user: AuditUser;
  sourceIPs: string[];
  userAgent: string | undefined;
  objectRef: ObjectReference | undefined;
}

/**
 * One audited request: its event, filled in as the request goes, written once per stage the policy
 * does not omit. Each write serializes the event as it is at that moment.
 */
export class RequestAudit {
  readonly event: AuditEvent;

  constructor(
    private readonly sink: AuditSink,
    readonly config: RequestAuditConfig,
    request: AuditedRequest,
  ) {
    const received = microTime(request.receivedAt);
    this.event = {
      kind: "Event",
      apiVersion: AUDIT_API_VERSION,
      level: config.level,
      auditID: request.auditID,
      stage: "RequestReceived",
      requestURI: request.requestURI,
      verb: request.verb,
      user: request.user,
      ...(request.sourceIPs.length > 0 ? { sourceIPs: request.sourceIPs } : {}),
      ...(request.userAgent ? { userAgent: request.userAgent } : {}),
      ...(request.objectRef ? { objectRef: request.objectRef } : {}),
      requestReceivedTimestamp: received,
      stageTimestamp: received,
    };
  }

  get level(): Level {
    return this.config.level;
  }

  annotate(key: string, value: string): void {
    this.event.annotations = { ...this.event.annotations, [key]: value };
  }

  /** The authorizer's answer, as Kubernetes' WithAuthorization annotates it (the reason even when empty). */
  recordAuthorization(allowed: boolean, reason: string): void {
    this.annotate(DECISION_ANNOTATION, allowed ? "allow" : "forbid");
    this.annotate(REASON_ANNOTATION, reason);
  }

  /** The response's code, with a Status's fields when the response is one (as LogResponseObject copies them). */
  setResponseStatus(code: number, status?: { status?: unknown; message?: unknown; reason?: unknown; details?: unknown }): void {
    const out: ResponseStatus = { metadata: {}, code };
    if (typeof status?.status === "string" && status.status) out.status = status.status;
    if (typeof status?.message === "string" && status.message) out.message = status.message;
    if (typeof status?.reason === "string" && status.reason) out.reason = status.reason;
    if (status?.details !== undefined) out.details = status.details;
    // Keep Go's field order: metadata, status, message, reason, details, code.
    const { code: _code, ...rest } = out;
    this.event.responseStatus = { ...rest, code };
  }

  /** The request body at Request level and above; at any level it names the object when the URL did not. */
  setRequestObject(object: unknown): void {
    const meta = metadataOf(object);
    const ref = this.event.objectRef;
    if (ref && meta) {
      if (!ref.namespace && typeof meta.namespace === "string" && meta.namespace) ref.namespace = meta.namespace;
      if (!ref.name && typeof meta.name === "string" && meta.name) ref.name = meta.name;
      if (!ref.uid && typeof meta.uid === "string" && meta.uid) ref.uid = meta.uid;
      if (!ref.resourceVersion && typeof meta.resourceVersion === "string" && meta.resourceVersion)
        ref.resourceVersion = meta.resourceVersion;
      this.event.objectRef = inGoOrder(ref);
    }
    if (!levelAtLeast(this.level, "Request")) return;
    this.event.requestObject = this.config.omitManagedFields ? withoutManagedFields(object) : object;
  }

  /** The response body, at RequestResponse level only. */
  setResponseObject(object: unknown): void {
    if (!levelAtLeast(this.level, "RequestResponse")) return;
    this.event.responseObject = this.config.omitManagedFields ? withoutManagedFields(object) : object;
  }

  /** Writes the event at `stage`, unless the policy omits that stage. */
  emit(stage: Stage): void {
    if (this.config.omitStages.includes(stage)) return;
    this.event.stage = stage;
    this.event.stageTimestamp = stage === "RequestReceived" ? this.event.requestReceivedTimestamp : microTime(preciseNow());
    this.sink.write(this.event);
  }
}

type Meta = Record<string, unknown>;

const OBJECT_REFERENCE_FIELDS = [
  "resource",
  "namespace",
  "name",
  "uid",
  "apiGroup",
  "apiVersion",
  "resourceVersion",
  "subresource",
] as const;

/** The reference's fields in the order Go writes them, whatever order they were filled in. */
function inGoOrder(ref: ObjectReference): ObjectReference {
  const out: ObjectReference = {};
  for (const field of OBJECT_REFERENCE_FIELDS) if (ref[field]) out[field] = ref[field];
  return out;
}

function metadataOf(object: unknown): Meta | undefined {
  if (typeof object !== "object" || object === null) return undefined;
  const meta = (object as { metadata?: unknown }).metadata;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as Meta) : undefined;
}

/**
 * A copy without `metadata.managedFields`: of the object, of each item of a list, of each row's object of
 * a Table (Kubernetes' copyWithoutManagedFields). Only the objects on the way are copied.
 */
export function withoutManagedFields(object: unknown): unknown {
  if (typeof object !== "object" || object === null || Array.isArray(object)) return object;
  let out = object as Record<string, unknown>;
  const strip = (o: Record<string, unknown>): Record<string, unknown> => {
    const meta = metadataOf(o);
    if (!meta || !("managedFields" in meta)) return o;
    const { managedFields: _dropped, ...rest } = meta;
    return { ...o, metadata: rest };
  };
  out = strip(out);
  if (Array.isArray(out.items)) {
    out = { ...out, items: out.items.map((item: unknown) => (typeof item === "object" && item !== null ? strip(item as Meta) : item)) };
  }
  if (out.kind === "Table" && Array.isArray(out.rows)) {
    out = {
      ...out,
      rows: out.rows.map((row: unknown) => {
        const rowObject = (row as { object?: unknown } | null)?.object;
        return typeof rowObject === "object" && rowObject !== null ? { ...(row as Meta), object: strip(rowObject as Meta) } : row;
      }),
    };
  }
  return out;
}
