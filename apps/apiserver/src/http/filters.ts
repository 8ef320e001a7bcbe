// The filters every API request passes before its handler, in Kubernetes' order (k8s.io/apiserver
// pkg/endpoints/filters and pkg/server/filters): request log, authentication, impersonation, request
// info and authorization; then, for resource requests, flow control (../flow-control), the deadline and the body limit.
import type { HttpBindings } from "@hono/node-server";
import type { NamingProfile } from "@orch/api";
import type { RequestAudit } from "@orch/audit";
import type { Logger } from "@orch/log";
import { StatusError, errors } from "@orch/machinery";
import type { Authorizer, RequestContext, UserInfo } from "@orch/registry";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { IncomingHttpHeaders } from "node:http";
import type { TLSSocket } from "node:tls";
import { type ChainResult, type Credentials, bearerToken } from "../authn/authenticators.js";
import { impersonate } from "../authn/impersonation.js";
import { forbidden, requestAttributes, requestInfo } from "../authz/request-attributes.js";
import { requestTimeoutMs } from "./query.js";
import type { ResourceRequest } from "./request-info.js";
import { respondError, unforeseenError } from "./respond.js";

export type Env = {
  Bindings: HttpBindings;
  Variables: {
    /** Who authenticated; `user` is who the request acts as (the same unless impersonating). */
    authenticated: UserInfo;
    user: UserInfo;
    /** The user as the request log names it. */
    userName: string | undefined;
    url: URL;
    info: ResourceRequest | undefined;
    ctx: RequestContext;
    /** Aborts the request's handler when its deadline passes (see `deadline`). */
    deadline: Deadline;
    /** Every request's audit ID and arrival time (`preciseNow()`), from `auditID` (audit.ts). */
    auditID: string;
    receivedAt: number;
    /** The request's audit record when the audit policy records it (audit.ts). */
    audit: RequestAudit | undefined;
    /** The request body as the handler read it, for the audit record. */
    requestBody: Uint8Array | undefined;
  };
};

type Filter = MiddlewareHandler<Env>;

/**
 * One line per request, as Kubernetes' httplog (a watch is logged when its stream starts): at debug
 * level (ORCH_LOG_LEVEL=debug), since controllers' lease renewals alone make a few a second; a failure
 * of the server's own is an error line with its stack.
 */
export function requestLog(log: Logger): Filter {
  return async (c, next) => {
    const started = performance.now();
    await next();
    // A request answered before its body was read (a 401, a 415, a 413): the rest of the body is still
    // on its way, and a connection kept alive would have to drain it while the client already sends the
    // next request. Close it after the answer, as Go's server does, so that the client opens a new one.
    const incoming = c.env.incoming;
    if (!incoming.readableEnded && hasBody(incoming.headers) && !c.env.outgoing.headersSent) {
      c.res.headers.set("Connection", "close");
    }
    const failure = unforeseenError(c.res);
    if (failure === undefined && !log.enabled("debug")) return;
    const fields = {
      verb: c.get("info")?.verb ?? c.req.method,
      uri: incoming.url,
      user: c.get("userName"),
      code: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      userAgent: incoming.headers["user-agent"],
    };
    if (failure !== undefined) log.error("request failed", failure, fields);
    else log.debug("request", fields);
  };
}

/** Who is calling, from the connection's certificate, a bearer token or a front proxy's headers; 401 if nobody. */
export function authentication(authenticate: (credentials: Credentials) => Promise<ChainResult>): Filter {
  return async (c, next) => {
    const incoming = c.env.incoming;
    const result = await authenticate({
      socket: incoming.socket as TLSSocket,
      token: bearerToken(incoming.headers.authorization),
      // Built from the raw headers when first read: only a front proxy's request headers need them.
      get headers() {
        return incoming.headersDistinct;
      },
    });
    if (!("user" in result)) return respondError(errors.unauthorized());
    c.set("authenticated", result.user);
    c.set("user", result.user);
    c.set("userName", result.user.username);
    await next();
  };
}

/** `Impersonate-*` headers: act as another user when the authenticated one may impersonate them. */
export function impersonation(authorizer: Authorizer, profile: NamingProfile): Filter {
  return async (c, next) => {
    if (!impersonating(c.env.incoming.headers)) return next();
    const authenticated = c.get("authenticated");
    const impersonated = await impersonate(c.env.incoming.headersDistinct, authenticated, authorizer, profile);
    if (impersonated instanceof StatusError) return respondError(impersonated);
    if (impersonated) {
      c.set("user", impersonated);
      c.set("userName", `${impersonated.username} (as, by ${authenticated.username})`);
    }
    await next();
  };
}

/** Whether any `Impersonate-*` header came: most requests have none, and need no distinct headers built. */
function impersonating(headers: IncomingHttpHeaders): boolean {
  for (const name in headers) if (name.startsWith("impersonate-")) return true;
  return false;
}

/** What the request asks (verb, resource, namespace, name), then whether its user may: 403 if not. */
export function authorization(authorizer: Authorizer, profile: NamingProfile): Filter {
  return async (c, next) => {
    const url = new URL(c.req.url);
    let info: ResourceRequest | undefined;
    try {
      info = requestInfo(c.req.method, url);
    } catch (e) {
      return respondError(e);
    }
    c.set("url", url);
    c.set("info", info);
    const user = c.get("user");
    const attributes = requestAttributes(user, c.req.method, url, info);
    const decision = await authorizer.authorize(attributes);
    c.get("audit")?.recordAuthorization(decision.allowed, decision.reason);
    if (!decision.allowed) return respondError(forbidden(attributes, decision.reason));
    const record = c.get("audit");
    // An admission annotation is never overwritten: the first value stays (Kubernetes refuses the second).
    const annotate = record
      ? (key: string, value: string) => {
          if (record.event.annotations?.[key] === undefined) record.annotate(key, value);
        }
      : undefined;
    c.set("ctx", new RequestScope(user, profile, authorizer, annotate));
    await next();
  };
}

/**
 * A request's context as its handler sees it. A class, so that every request's has one shape, and its
 * `signal` comes from the deadline the deadline filter sets, made only when a handler asks for it.
 */
class RequestScope implements RequestContext {
  readonly warnings: string[] = [];
  deadline: Deadline | undefined;

  constructor(
    readonly user: UserInfo,
    readonly profile: NamingProfile,
    readonly authorizer: Authorizer,
    readonly annotate: ((key: string, value: string) => void) | undefined,
  ) {}

  get signal(): AbortSignal | undefined {
    return this.deadline?.signal;
  }

  throwIfAborted(): void {
    this.deadline?.throwIfPassed();
  }
}

/** Watches are long-running: the deadline does not apply to them (request info says which). */
const isWatch = (c: Context<Env>) => c.get("info")?.verb === "watch";

/**
 * A request's deadline. Its signal is made when first asked for: a get never asks, and making an
 * AbortSignal for every request cost about 2 % of a get's CPU.
 */
export class Deadline {
  private controller: AbortController | undefined;
  private reason: unknown;
  passed = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.passed) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  throwIfPassed(): void {
    if (this.passed) throw this.reason;
  }

  expire(reason: unknown): void {
    this.passed = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * A request still running after `ms` is answered 504, as Kubernetes' request deadline, and its handler is
 * stopped: the request context's signal aborts, so the store writes nothing after the answer is gone and
 * a wait for a revision ends. Watches have their own timeout (`timeoutSeconds`).
 */
export function deadline(ms: number): Filter {
  return (c, next) => {
    if (isWatch(c)) return next();
    // The client's own `timeout` shortens the deadline, never lengthens it (WithRequestDeadline).
    let requested: number | undefined;
    try {
      requested = requestTimeoutMs(c.get("url").searchParams);
    } catch (e) {
      return Promise.resolve(respondError(e));
    }
    const deadline = new Deadline();
    c.set("deadline", deadline);
    (c.get("ctx") as RequestScope).deadline = deadline;
    const limit = requested !== undefined && requested > 0 && requested < ms ? requested : ms;
    // The handler, raced by a timer: one promise, where a race of two promises made several per request.
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = errors.timeout("request did not complete within the allotted timeout", 0);
        deadline.expire(error);
        reject(new HTTPException(504, { res: respondError(error) }));
      }, limit);
      next().then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  };
}

/**
 * A body over the limit is refused before it is read: by its declared length, or, for a chunked one, by
 * Hono's body limit counting it as it arrives; the connection then closes rather than reading the rest
 * of the upload. (Hono's middleware alone would turn every body into a web stream, which costs a third
 * of the create rate.)
 */
export function limitBody(maxBytes: number): Filter {
  const tooLarge = () => {
    const response = respondError(errors.tooLarge(`limit is ${maxBytes}`));
    response.headers.set("Connection", "close");
    return response;
  };
  const limitChunked = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return (c, next) => {
    const { headers } = c.env.incoming;
    if (headers["transfer-encoding"] !== undefined) return limitChunked(c, next);
    return Number(headers["content-length"] ?? 0) > maxBytes ? Promise.resolve(tooLarge()) : next();
  };
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;
}
