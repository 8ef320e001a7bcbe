// Reads what a resource request is about from its path and method, as Kubernetes' RequestInfoFactory
// does: /api/v1/... and /apis/<group>/<version>/..., optionally under /namespaces/<ns>/.
import { errors, goQuote } from "@orch/machinery";

export type RequestVerb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

export interface ResourceRequest {
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: RequestVerb;
}

/** Subresources of a namespace that stay on the namespace object itself. */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

/** A path segment unescaped; a 400 when its escapes are malformed or do not spell UTF-8, as Go's URL parser refuses them. */
function unescapeSegment(segment: string): string {
  // Most segments have no escape: decodeURIComponent is a call into V8's runtime even for those.
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw errors.badRequest(`invalid URL escape in path segment ${goQuote(segment)}`);
  }
}

/** Returns undefined for paths that are not resource requests (discovery, health). */
export function resourceRequest(method: string, path: string, watch: boolean): ResourceRequest | undefined {
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map(unescapeSegment);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 3) {
    group = "";
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  // The deprecated `/watch/` prefix Kubernetes still serves (`/api/v1/watch/namespaces/x/pods[/name]`):
  // a watch of the collection, or of the one object named.
  const watchPrefix = rest[0] === "watch" && rest.length > 1 && (method === "GET" || method === "HEAD");
  if (watchPrefix) rest = rest.slice(1);
  let namespace = "";
  if (rest[0] === "namespaces" && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  const [resource = "", name = "", subresource = "", ...extra] = rest;
  if (extra.length > 0) return undefined;
  let verb: RequestVerb;
  switch (method) {
    case "GET":
    case "HEAD":
      verb = watchPrefix ? "watch" : name ? "get" : watch ? "watch" : "list";
      break;
    case "POST":
      verb = "create";
      break;
    case "PUT":
      verb = "update";
      break;
    case "PATCH":
      verb = "patch";
      break;
    case "DELETE":
      verb = name ? "delete" : "deletecollection";
      break;
    default:
      return { group, version, namespace, resource, name, subresource, verb: "get" };
  }
  return { group, version, namespace, resource, name, subresource, verb };
}
