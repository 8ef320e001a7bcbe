// The HTTP surface: health, version, discovery and OpenAPI, then one handler for every resource.
import type { NamingProfile } from "@orch/api";
import type { Auditor } from "@orch/audit";
import type { Logger } from "@orch/log";
import type { ApiserverMetrics } from "@orch/metrics";
import { errors } from "@orch/machinery";
import type { Authorizer } from "@orch/registry";
import type { ServiceAccountTokens } from "@orch/tokens";
import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { IncomingHttpHeaders } from "node:http";
import type { ChainResult, Credentials } from "../authn/authenticators.js";
import { oidcDiscoveryRoutes } from "../authn/oidc.js";
import { audit, auditID, failedAuthenticationAudit } from "./audit.js";
import { AGGREGATED_TYPE, aggregatedDiscovery, apiGroupList, apiResourceList, namedGroups, wantsAggregated } from "./discovery.js";
import { FlowControl } from "../flow-control/filter.js";
import { type FlowControlConfig, flowControlDefaults } from "../flow-control/priority-levels.js";
import { type Env, authentication, authorization, deadline, impersonation, limitBody, requestLog } from "./filters.js";
import { instrumentRequests, metricsEndpoint } from "./metrics.js";
import { OpenApiDocuments } from "./openapi.js";
import { MAX_BODY_BYTES, type RequestHeaders, type ResourceDeps, handleResource, methodNotAllowed } from "./resources/index.js";
import { respond, respondError } from "./respond.js";

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
  /** Where requests are counted and timed, and what GET /metrics exposes. */
  metrics: ApiserverMetrics;
  /** True once the apiserver can serve requests (storage open, kinds registered). */
  ready: () => boolean;
  log: Logger;
  /** The request deadline (ORCH_REQUEST_TIMEOUT_SECONDS); default 60 s. */
  requestTimeoutMs?: number;
  /** Records requests as the audit policy says (ORCH_AUDIT_POLICY_FILE); none when absent. */
  auditor?: Auditor;
  /** Concurrency and watch limits (ORCH_MAX_REQUESTS_INFLIGHT and others); default `flowControlDefaults`. */
  flowControl?: FlowControlConfig;
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

/** A request still running after this gets 504, as Kubernetes' default --request-timeout. */
export const REQUEST_TIMEOUT_MS = 60_000;

const text = (status: number, body: string) => new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8" } });

export function createApp(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const openapi = new OpenApiDocuments(deps.registry, deps.profile);
  const discovery = oidcDiscoveryRoutes(deps.tokens, deps.jwksUri, deps.log);

  // Before everything, health checks included: every response carries its Audit-ID, as in Kubernetes.
  app.use("*", auditID());
  for (const path of ["/healthz", "/livez"]) app.get(path, () => text(200, "ok"));
  app.get("/readyz", () => (deps.ready() ? text(200, "ok") : text(500, "not ready")));
  // Kubernetes lets only authenticated callers (RBAC: system:service-account-issuer-discovery) read
  // discovery; an operator who wants relying parties to fetch it anonymously says so.
  if (deps.publicDiscovery) for (const [path, handler] of discovery) app.get(path, handler);

  app.use("*", requestLog(deps.log));
  if (deps.auditor) app.use("*", failedAuthenticationAudit(deps.auditor, deps.log));
  app.use("*", authentication(deps.authenticate));
  if (deps.auditor) app.use("*", audit(deps.auditor, deps.log));
  app.use("*", impersonation(deps.authorizer, deps.profile));
  app.use("*", authorization(deps.authorizer, deps.profile));

  if (!deps.publicDiscovery) for (const [path, handler] of discovery) app.get(path, handler);

  // go-restful, which serves these in Kubernetes, ignores a trailing slash: `/version/` and `/apis/apps/v1/`
  // answer as without it (kube-aggregator does the same for `/apis/` and `/apis/<group>/`).
  const orSlash = <P extends string>(path: P): [P, `${P}/`] => [path, `${path}/`];
  app.on("GET", orSlash("/version"), () => respond(200, VERSION_INFO));
  app.get("/metrics", metricsEndpoint(deps.metrics));

  app.on("GET", orSlash("/api"), (c) => {
    if (wantsAggregated(c.req.header("accept"))) {
      return withType(respond(200, aggregatedDiscovery(deps.registry, true)), AGGREGATED_TYPE);
    }
    return respond(200, { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] });
  });
  app.on("GET", orSlash("/apis"), (c) => {
    if (wantsAggregated(c.req.header("accept"))) {
      return withType(respond(200, aggregatedDiscovery(deps.registry, false)), AGGREGATED_TYPE);
    }
    return respond(200, apiGroupList(deps.registry));
  });
  app.on("GET", orSlash("/api/:version{v[0-9a-z]+}"), (c) => {
    const kinds = deps.registry.groups().get("")?.get(c.req.param("version"));
    return kinds ? respond(200, apiResourceList(c.req.param("version"), kinds)) : respondError(errors.notFoundPath());
  });
  app.on("GET", orSlash("/apis/:group"), (c) => {
    const group = namedGroups(deps.registry).find((g) => g.name === c.req.param("group"));
    if (!group) return text(404, "404 page not found");
    const { kinds: _k, ...rest } = group;
    return respond(200, { kind: "APIGroup", apiVersion: "v1", ...rest });
  });
  app.on("GET", orSlash("/apis/:group/:version"), (c) => {
    const kinds = deps.registry.groups().get(c.req.param("group"))?.get(c.req.param("version"));
    if (!kinds) return text(404, "404 page not found");
    return respond(200, apiResourceList(`${c.req.param("group")}/${c.req.param("version")}`, kinds));
  });

  app.get("/openapi/v3", (c) => openapi.root(c.req.raw));
  app.get(
    "/openapi/v3/*",
    (c) => openapi.groupVersion(c.req.raw, c.req.path.slice("/openapi/v3/".length)) ?? respondError(errors.notFoundPath()),
  );
  app.get("/openapi/v2", (c) => openapi.v2(c.req.raw));

  const requestTimeoutMs = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // A request waits for a seat at most a quarter of its deadline, as Kubernetes' APF.
  const flowControl = new FlowControl(deps.flowControl ?? flowControlDefaults, requestTimeoutMs / 4, deps.profile).filter();
  const requestDeadline = deadline(requestTimeoutMs);
  const bodyLimit = limitBody(MAX_BODY_BYTES);
  for (const path of ["/api/*", "/apis/*"]) app.use(path, instrumentRequests(deps.metrics, deps.registry));
  for (const path of ["/api/*", "/apis/*"]) {
    app.use(path, flowControl, requestDeadline, bodyLimit);
    app.all(path, resources);
  }
  app.all("*", () => text(404, "404 page not found"));
  // Anything a handler did not turn into a Status is a 500 Status, never a plain-text page.
  app.onError((e) => (e instanceof HTTPException ? e.getResponse() : respondError(e)));

  function resources(c: Context<Env>): Promise<Response> | Response {
    const url = c.get("url");
    const info = c.get("info");
    if (!info) return respondError(errors.notFoundPath());
    if (!["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].includes(c.req.method)) {
      return respondError(methodNotAllowed());
    }
    return handleResource(deps, {
      info,
      query: url.searchParams,
      headers: nodeHeaders(c.env.incoming.headers),
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
      readBody: async () => {
        const body = new Uint8Array(await c.req.arrayBuffer());
        c.set("requestBody", body);
        return body;
      },
    });
  }

  return app;
}

/**
 * The headers Node has already parsed: a web `Headers` object (what Hono's request would build for
 * them) costs a few microseconds per request, for the two or three values a handler reads.
 */
function nodeHeaders(headers: IncomingHttpHeaders): RequestHeaders {
  return {
    get: (name) => {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

function withType(response: Response, type: string): Response {
  response.headers.set("Content-Type", type);
  return response;
}
