// What a request asks to do, in the authorizer's terms (Kubernetes' RequestInfoFactory and
// WithAuthorization), and the 403 it gets when nobody allows it (responsewriters.Forbidden).
import { type StatusError, failure, goQuote, parseFieldSelector } from "@orch/machinery";
import type { AuthorizationAttributes, UserInfo } from "@orch/registry";
import { watchRequested } from "../http/query.js";
import { type ResourceRequest, resourceRequest } from "../http/request-info.js";

/** What a request's URL names: the resource request under /api or /apis, or undefined for another path. */
export function requestInfo(method: string, url: URL): ResourceRequest | undefined {
  return resourceRequest(method, url.pathname, watchRequested(url.searchParams));
}

/** The attributes of an HTTP request: a resource request (`info`), else a non-resource path. */
export function requestAttributes(user: UserInfo, method: string, url: URL, info: ResourceRequest | undefined): AuthorizationAttributes {
  if (!info) return { user, verb: method.toLowerCase(), resourceRequest: false, path: url.pathname };
  let name = info.name;
  // A list or watch of one name (`kubectl get pod x -w`) is about that name, so resourceNames rules apply.
  if (!name && (info.verb === "list" || info.verb === "watch")) name = exactName(url.searchParams.get("fieldSelector"));
  return {
    user,
    verb: info.verb,
    resourceRequest: true,
    namespace: info.namespace,
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.resource,
    subresource: info.subresource,
    name,
  };
}

/** `metadata.name=x` (or `==`) in a field selector, when it is a valid path segment. */
function exactName(fieldSelector: string | null): string {
  if (!fieldSelector) return "";
  try {
    const requirement = parseFieldSelector(fieldSelector).requirements.find((r) => r.field === "metadata.name" && r.operator === "=");
    const value = requirement?.value ?? "";
    return value === "." || value === ".." || /[/%]/.test(value) ? "" : value;
  } catch {
    return "";
  }
}

/** forbiddenMessage + NewForbidden: what Kubernetes answers a request no authorizer allowed. */
export function forbidden(attributes: AuthorizationAttributes, reason: string): StatusError {
  const user = goQuote(attributes.user.username);
  let why: string;
  if (!attributes.resourceRequest) {
    why = `User ${user} cannot ${attributes.verb} path ${goQuote(attributes.path)}`;
  } else {
    const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
    const scope = attributes.namespace ? `in the namespace ${goQuote(attributes.namespace)}` : "at the cluster scope";
    why = `User ${user} cannot ${attributes.verb} resource ${goQuote(resource)} in API group ${goQuote(attributes.apiGroup)} ${scope}`;
  }
  if (reason) why = `${why}: ${reason}`;
  if (!attributes.resourceRequest) return failure(403, "Forbidden", `forbidden: ${why}`, {});
  const { apiGroup: group, resource, name } = attributes;
  const qualified = group ? `${resource}.${group}` : resource;
  const message = name ? `${qualified} ${goQuote(name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  return failure(403, "Forbidden", message, { ...(name ? { name } : {}), ...(group ? { group } : {}), kind: resource });
}
