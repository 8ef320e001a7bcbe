// The HTTP surface: health, version, discovery and OpenAPI, then one handler for every resource.
import type { HttpBindings } from "@hono/node-server";
import type { NamingProfile } from "@orch/api";
import { StatusError, errors, failure } from "@orch/machinery";
import type { Authorizer, RequestContext } from "@orch/registry";
import type { ServiceAccountTokens } from "@orch/tokens";
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { IncomingHttpHeaders } from "node:http";
import type { TLSSocket } from "node:tls";
import { impersonate } from "../authn/impersonation.js";
import { forbidden, requestAttributes, requestInfo } from "../authz/request-attributes.js";
import { type ChainResult, type Credentials, bearerToken } from "../authn/middleware.js";
import { AGGREGATED_TYPE, aggregatedDiscovery, apiGroupList, apiResourceList, namedGroups, wantsAggregated } from "./discovery.js";
import { oidcDiscoveryRoutes } from "../authn/oidc.js";
import { OPENAPI_V2_STUB, OpenApiDocuments } from "./openapi.js";
import type { ResourceRequest } from "./request-info.js";
import { MAX_BODY_BYTES, type ResourceDeps, handleResource } from "./resources/index.js";
import { respond, respondError, unforeseenError } from "./respond.js";
import type { Logger } from "@orch/log";

export interface AppDeps extends ResourceDeps {
  profile: NamingProfile;
  /** The authenticator chain: client certificates, static tokens, service account tokens. */
  authenticate: (credentials: Credentials) => Promise<ChainResult>;
  /** Decides every authenticated request (RBAC), and answers the kinds that ask it. */
  authorizer: Authorizer;
  /** The service account token issuer, for OIDC discovery. */
  tokens: ServiceAccountTokens;
  /** Where discovery says the key set is. */
  jwksUri: string;
  /** Serve OIDC discovery without authentication (by default only authenticated callers get it). */
  publicDiscovery?: boolean;
  /** True once the apiserver can serve requests (storage open, kinds registered). */
  ready: () => boolean;
  log: Logger;
}

export const VERSION_INFO = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.4-orch",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2026-01-01T00:00:00Z",
  goVersion: "node",
  compiler: "orch",
  platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
};

/** Requests served at once before new ones get 429 (Kubernetes' max-in-flight). Watches do not count. */
const MAX_IN_FLIGHT = 800;
/** A request still running after this gets 504, as Kubernetes' request deadline does. */
const REQUEST_TIMEOUT_MS = 60_000;

type Env = {
  Bindings: HttpBindings;
  Variables: { ctx: RequestContext; url: URL; info: ResourceRequest | undefined; user: string | undefined };
};

const text = (status: number, body: string) => new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8" } });

export function createApp(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const openapi = new OpenApiDocuments(deps.registry);
  const discovery = oidcDiscoveryRoutes(deps.tokens, deps.jwksUri, deps.log);

  for (const path of ["/healthz", "/livez"]) app.get(path, () => text(200, "ok"));
  app.get("/readyz", () => (deps.ready() ? text(200, "ok") : text(500, "not ready")));
  // Kubernetes lets only authenticated callers (RBAC: system:service-account-issuer-discovery) read
  // discovery; an operator who wants relying parties to fetch it anonymously says so.
  if (deps.publicDiscovery) for (const [path, handler] of discovery) app.get(path, handler);

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    // A request answered before its body was read (a 401, a 415, a 413): the rest of the body is still
    // on its way, and a connection kept alive would have to drain it while the client already sends the
    // next request. Close it after the answer, as Go's server does, so that the client opens a new one.
    const incoming = c.env.incoming;
    if (!incoming.readableEnded && hasBody(incoming.headers) && !c.env.outgoing.headersSent) {
      c.res.headers.set("Connection", "close");
    }
    // One line per request, as Kubernetes' httplog (a watch is logged when its stream starts): at debug
    // level (ORCH_LOG_LEVEL=debug), since controllers' lease renewals alone make a few a second; a
    // failure of the server's own is an error line with its stack.
    const fields = {
      verb: c.get("info")?.verb ?? c.req.method,
      uri: incoming.url,
      user: c.get("user"),
      code: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      userAgent: incoming.headers["user-agent"],
    };
    const failure = unforeseenError(c.res);
    if (failure !== undefined) deps.log.error("request failed", failure, fields);
    else if (deps.log.enabled("debug")) deps.log.debug("request", fields);
  });

  app.use("*", async (c, next) => {
    // Node builds headersDistinct anew on each access: once per request.
    const headers = c.env.incoming.headersDistinct;
    const result = await deps.authenticate({
      socket: c.env.incoming.socket as TLSSocket,
      token: bearerToken(c.req.header("authorization")),
      headers,
    });
    if (!("user" in result)) return respondError(errors.unauthorized());
    c.set("user", result.user.username);
    // Impersonation, then authorization of what the (possibly impersonated) user asks, as Kubernetes' filters.
    const impersonated = await impersonate(headers, result.user, deps.authorizer, deps.profile);
    if (impersonated instanceof StatusError) return respondError(impersonated);
    const user = impersonated ?? result.user;
    if (impersonated) c.set("user", `${impersonated.username} (as, by ${result.user.username})`);
    const url = new URL(c.req.url);
    let info: ResourceRequest | undefined;
    try {
      info = requestInfo(c.req.method, url);
    } catch (e) {
      return respondError(e);
    }
    c.set("url", url);
    c.set("info", info);
    const attributes = requestAttributes(user, c.req.method, url, info);
    const decision = await deps.authorizer.authorize(attributes);
    if (!decision.allowed) return respondError(forbidden(attributes, decision.reason));
    c.set("ctx", { user, profile: deps.profile, warnings: [], authorizer: deps.authorizer });
    await next();
  });

  if (!deps.publicDiscovery) for (const [path, handler] of discovery) app.get(path, handler);

  app.get("/version", () => respond(200, VERSION_INFO));

  app.get("/api", (c) => {
    if (wantsAggregated(c.req.header("accept"))) {
      return withType(respond(200, aggregatedDiscovery(deps.registry, true)), AGGREGATED_TYPE);
    }
    return respond(200, { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] });
  });
  app.get("/apis", (c) => {
    if (wantsAggregated(c.req.header("accept"))) {
      return withType(respond(200, aggregatedDiscovery(deps.registry, false)), AGGREGATED_TYPE);
    }
    return respond(200, apiGroupList(deps.registry));
  });
  app.get("/api/:version{v[0-9a-z]+}", (c) => {
    const kinds = deps.registry.groups().get("")?.get(c.req.param("version"));
    return kinds ? respond(200, apiResourceList(c.req.param("version"), kinds)) : respondError(errors.notFoundPath());
  });
  app.get("/apis/:group", (c) => {
    const group = namedGroups(deps.registry).find((g) => g.name === c.req.param("group"));
    if (!group) return text(404, "404 page not found");
    const { kinds: _k, ...rest } = group;
    return respond(200, { kind: "APIGroup", apiVersion: "v1", ...rest });
  });
  app.get("/apis/:group/:version", (c) => {
    const kinds = deps.registry.groups().get(c.req.param("group"))?.get(c.req.param("version"));
    if (!kinds) return text(404, "404 page not found");
    return respond(200, apiResourceList(`${c.req.param("group")}/${c.req.param("version")}`, kinds));
  });

  app.get("/openapi/v3", () => respond(200, openapi.root()));
  app.get("/openapi/v3/*", (c) => {
    const doc = openapi.document(c.req.path.slice("/openapi/v3/".length));
    return doc ? respond(200, doc) : respondError(errors.notFoundPath());
  });
  app.get("/openapi/v2", () => new Response(OPENAPI_V2_STUB, { headers: { "Content-Type": "application/octet-stream" } }));

  let inFlight = 0;
  const limited = async (c: import("hono").Context<Env>): Promise<Response> => {
    if (c.req.query("watch") === "true" || c.req.query("watch") === "1") return resources(c);
    if (inFlight >= MAX_IN_FLIGHT) {
      const r = respondError(errors.tooManyRequests("Too many requests, please try again later.", 1));
      return r;
    }
    inFlight++;
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = new Promise<Response>((resolve) => {
        timer = setTimeout(
          () => resolve(respondError(errors.timeout("request did not complete within the allotted timeout", 0))),
          REQUEST_TIMEOUT_MS,
        );
      });
      return await Promise.race([resources(c), deadline]);
    } finally {
      clearTimeout(timer);
      inFlight--;
    }
  };
  // A body over the limit is refused before it is read: by its declared length, or, for a chunked one,
  // by Hono's body limit counting it as it arrives; the connection then closes rather than reading the
  // rest of the upload. (Hono's middleware alone would turn every body into a web stream, which costs a
  // third of the create rate.)
  const tooLarge = () => {
    const response = respondError(errors.tooLarge(`limit is ${MAX_BODY_BYTES}`));
    response.headers.set("Connection", "close");
    return response;
  };
  const limitChunkedBody = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  const limitBody: MiddlewareHandler<Env> = (c, next) => {
    const { headers } = c.env.incoming;
    if (headers["transfer-encoding"] !== undefined) return limitChunkedBody(c, next);
    return Number(headers["content-length"] ?? 0) > MAX_BODY_BYTES ? Promise.resolve(tooLarge()) : next();
  };
  app.all("/api/*", limitBody, limited);
  app.all("/apis/*", limitBody, limited);
  app.all("*", () => text(404, "404 page not found"));
  // Anything a handler did not turn into a Status is a 500 Status, never a plain-text page.
  app.onError((e) => respondError(e));

  function resources(c: import("hono").Context<Env>): Promise<Response> | Response {
    const url = c.get("url");
    const info = c.get("info");
    if (!info) return respondError(errors.notFoundPath());
    if (!["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].includes(c.req.method)) {
      return respondError(failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}));
    }
    return handleResource(deps, {
      info,
      query: url.searchParams,
      headers: c.req.raw.headers,
      ctx: c.get("ctx"),
      onClose: (callback) => c.env.outgoing.once("close", callback),
      openStream: (status, headers) => {
        const out = c.env.outgoing;
        out.writeHead(status, headers);
        // Headers now, not with the first event: a client waits for them before it reads the stream.
        out.flushHeaders();
        return {
          write: (chunk) => out.write(chunk),
          onDrain: (callback) => void out.once("drain", callback),
          end: () => void out.end(),
        };
      },
      // Within MAX_BODY_BYTES: the body limit middleware has checked it.
      readBody: async () => new Uint8Array(await c.req.arrayBuffer()),
    });
  }

  return app;
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;
}

function withType(response: Response, type: string): Response {
  response.headers.set("Content-Type", type);
  return response;
}
