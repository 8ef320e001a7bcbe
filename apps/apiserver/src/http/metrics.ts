// Metrics in the request path: one filter that counts and times every request to a served resource under
// Kubernetes' names (libs/metrics), and the /metrics endpoint that exposes them.
import { type ApiserverMetrics, PROMETHEUS_CONTENT_TYPE, type StorageStats, requestKindOf } from "@orch/metrics";
import { type KindRegistry, storageResource } from "@orch/registry";
import type { ServingStorage } from "@orch/storage";
import type { MiddlewareHandler } from "hono";
import type { Env } from "./filters.js";
import type { ResourceRequest } from "./request-info.js";

/**
 * Placed after authorization, as Kubernetes instruments its routes (a 401 or 403 is not counted), and
 * before flow control and the deadline, so that their 429s and 504s are. A request is counted once its
 * answer is complete or its client gone: a watch when it ends, its duration spanning the stream, as in
 * Kubernetes (latency objectives leave WATCH out by its verb label).
 */
export function instrumentRequests(metrics: ApiserverMetrics, registry: KindRegistry): MiddlewareHandler<Env> {
  return async (c, next) => {
    const info = c.get("info");
    // Only what the apiserver serves: every label value then comes from its own list of kinds, never
    // from whatever path a client sends.
    if (!info || !serves(registry, info)) return next();
    const series = metrics.series({
      method: c.req.method,
      verb: info.verb,
      // Node's own parsed headers: asking Hono would build a Headers object for this one value.
      contentType: c.env.incoming.headers["content-type"],
      dryRun: c.get("url").searchParams.getAll("dryRun"),
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
    });
    const { labels } = series;
    const started = performance.now();
    const outgoing = c.env.outgoing;
    const watch = info.verb === "watch";
    const kind = requestKindOf(info.verb);
    outgoing.once("close", () => {
      if (watch) metrics.longRunningChanged(labels, -1);
      // A watch writes its stream (and status) to the connection itself; other answers go through Hono.
      const code = outgoing.headersSent ? outgoing.statusCode : c.res.status;
      metrics.observe(series, code, (performance.now() - started) / 1000);
      // orch's own 429s come from flow control and its 504s from the deadline: the apiserver protecting itself.
      if (code === 429 || code === 504) metrics.terminated(labels, code);
      // A watch ends by its client leaving; any other request whose client left before the whole answer
      // was written, or whose handler the deadline stopped, was aborted.
      if (!watch && (!outgoing.writableFinished || c.get("deadline")?.passed)) metrics.aborted(labels);
    });
    if (watch) metrics.longRunningChanged(labels, 1);
    else metrics.inFlightChanged(kind, 1);
    try {
      await next();
    } finally {
      if (!watch) metrics.inFlightChanged(kind, -1);
    }
  };
}

function serves(registry: KindRegistry, info: ResourceRequest): boolean {
  const kind = registry.lookup(info.group, info.version, info.resource);
  if (!kind) return false;
  const sub = info.subresource;
  return (
    sub === "" || kind.subresources[sub] !== undefined || (sub === "scale" && kind.scale !== undefined) || kind.actions?.[sub] !== undefined
  );
}

/** GET /metrics, behind authentication and RBAC (`get` on the non-resource URL, as system:monitoring has). */
export function metricsEndpoint(metrics: ApiserverMetrics): () => Promise<Response> {
  return async () => new Response(await metrics.expose(), { headers: { "Content-Type": PROMETHEUS_CONTENT_TYPE } });
}

/**
 * The storage's figures for /metrics: live objects of every served resource (0 for one without any, as
 * Kubernetes reports a registered resource), the database's size, and its epoch as the storage's id.
 */
export async function storageMetrics(storage: ServingStorage, registry: KindRegistry): Promise<StorageStats> {
  const [{ objectCounts, sizeBytes }, clusterId] = await Promise.all([storage.stats(), storage.epoch()]);
  const counts = new Map(objectCounts);
  for (const versions of registry.groups().values()) {
    for (const kinds of versions.values())
      for (const kind of kinds) if (!counts.has(storageResource(kind))) counts.set(storageResource(kind), 0);
  }
  const objects = [...counts].map(([key, count]) => {
    const slash = key.indexOf("/");
    const group = key.slice(0, slash);
    return { group: group === "core" ? "" : group, resource: key.slice(slash + 1), count };
  });
  return { objects, sizeBytes, clusterId };
}
