// The one request path for every kind: resolve the kind from the URL, check that Kubernetes would route
// the verb there, then hand it to the verb's handler, which calls the generic store.
import { errors } from "@orch/machinery";
import type { KindDefinition } from "@orch/registry";
import { type ResponseFormat, negotiate } from "../negotiation.js";
import type { RequestVerb, ResourceRequest } from "../request-info.js";
import { respond, respondError } from "../respond.js";
import { methodNotAllowed } from "./errors.js";
import { prettyRequested } from "../query.js";
import { patch } from "./patch.js";
import { get, list } from "./read.js";
import type { IncomingRequest, ResourceDeps, VerbHandler } from "./request.js";
import { scale } from "./scale.js";
import { watch } from "./watch.js";
import { act, create, deleteCollection, remove, update } from "./write.js";

const handlers: Record<RequestVerb, VerbHandler> = {
  get,
  list,
  watch,
  create,
  update,
  patch,
  delete: remove,
  deletecollection: deleteCollection,
};

export async function handleResource(deps: ResourceDeps, req: IncomingRequest): Promise<Response> {
  const { info, query, ctx } = req;
  let format: ResponseFormat | undefined;
  try {
    format = negotiate(req.headers.get("accept") ?? undefined, query.get("includeObject") ?? undefined);
    // A group-version nobody serves falls through to the end of the chain, as in Kubernetes.
    if (!deps.registry.groups().get(info.group)?.has(info.version)) {
      return new Response("404 page not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
    }
    const kind = deps.registry.lookup(info.group, info.version, info.resource);
    if (!kind) throw errors.notFoundPath();
    if (kind.deprecationWarning) ctx.warnings.push(kind.deprecationWarning);
    if (info.namespace && !kind.namespaced && info.resource !== "namespaces") throw errors.notFoundPath();
    const isScale = info.subresource === "scale" && kind.scale !== undefined;
    const isAction = info.subresource !== "" && kind.actions?.[info.subresource] !== undefined;
    if (info.subresource && !kind.subresources[info.subresource] && !isScale && !isAction) throw errors.notFoundPath();
    if (kind.namespaced && !info.namespace && info.name) throw errors.notFoundPath();
    if (!routed(kind, info)) throw methodNotAllowed();
    if (info.verb === "watch" && !kind.verbs.includes("watch")) {
      throw errors.methodNotSupported({ group: kind.group, resource: kind.plural }, info.verb);
    }
    const pretty = prettyRequested(query, req.headers.get("user-agent") ?? undefined);
    const answerFormat = format;
    const handler = isScale ? scale : isAction ? act : handlers[info.verb];
    return await handler({
      deps,
      req,
      kind,
      store: deps.storeFor(kind),
      format,
      namespace: kind.namespaced ? info.namespace : "",
      ok: (code, body) => respond(code, body, answerFormat, pretty, ctx.warnings),
    });
  } catch (e) {
    return respondError(e, format, ctx.warnings);
  }
}

/** Whether Kubernetes would have a route for this verb on this path: collection, object or subresource. */
function routed(kind: KindDefinition, info: ResourceRequest): boolean {
  // Across all namespaces a namespaced kind only lists and watches.
  if (kind.namespaced && !info.namespace && !["list", "watch"].includes(info.verb)) return false;
  if (info.subresource) {
    return kind.actions?.[info.subresource] ? info.verb === "create" : ["get", "update", "patch"].includes(info.verb);
  }
  switch (info.verb) {
    case "create":
      if (info.name) return false;
      break;
    case "update":
    case "patch":
      if (!info.name) return false;
      break;
    case "watch":
      // A kind without watch still routes GET on its collection; the handler says watch is unsupported.
      return kind.verbs.includes("list");
    default:
  }
  return kind.verbs.includes(info.verb);
}
