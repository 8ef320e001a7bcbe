// Impersonation (k8s.io/apiserver/pkg/endpoints/filters/impersonation.go): `Impersonate-User`,
// `-Group`, `-Uid` and `-Extra-<key>` headers make the request act as another user, each one allowed
// only by the `impersonate` verb on users, groups, serviceaccounts, uids or userextras/<key>.
import type { NamingProfile } from "@orch/api";
import { type StatusError, failure, isDNS1123Label, isDNS1123Subdomain } from "@orch/machinery";
import type { AuthorizationAttributes, Authorizer, UserInfo } from "@orch/registry";
import { forbidden } from "../authz/request-attributes.js";

const AUTHENTICATED = "system:authenticated";
const UNAUTHENTICATED = "system:unauthenticated";
const ANONYMOUS = "system:anonymous";
const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";
const EXTRA_PREFIX = "impersonate-extra-";

/** Request headers by lowercase name, every value kept (Node's `headersDistinct`). */
export type DistinctHeaders = Record<string, string[] | undefined>;

interface ImpersonationRequest {
  kind: "ServiceAccount" | "User" | "Group" | "UserExtra" | "UID";
  namespace?: string;
  name: string;
  apiVersion?: string;
  fieldPath?: string;
}

/** serviceaccount.SplitUsername: `system:serviceaccount:<namespace>:<name>`, both valid names. */
function splitServiceAccount(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(":");
  if (parts.length !== 2) return undefined;
  const [namespace = "", name = ""] = parts;
  if (isDNS1123Label(namespace).length || isDNS1123Subdomain(name).length) return undefined;
  return { namespace, name };
}

/** url.PathUnescape, keeping a malformed key as it came. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

function impersonationRequests(headers: DistinctHeaders): ImpersonationRequest[] | StatusError {
  const requests: ImpersonationRequest[] = [];
  const user = headers["impersonate-user"]?.[0] ?? "";
  if (user) {
    const sa = splitServiceAccount(user);
    requests.push(sa ? { kind: "ServiceAccount", ...sa } : { kind: "User", name: user });
  }
  const groups = headers["impersonate-group"] ?? [];
  for (const group of groups) requests.push({ kind: "Group", name: group });
  let extras = false;
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    extras = true;
    const key = unescapeExtraKey(header.slice(EXTRA_PREFIX.length).toLowerCase());
    for (const value of values ?? [])
      requests.push({ kind: "UserExtra", apiVersion: "authentication.k8s.io/v1", name: value, fieldPath: key });
  }
  const uid = headers["impersonate-uid"]?.[0] ?? "";
  if (uid) requests.push({ kind: "UID", name: uid, apiVersion: "authentication.k8s.io/v1" });
  if ((groups.length > 0 || extras || uid) && !user) {
    // Go prints the references with %v: every ObjectReference field, space-separated.
    const printed = requests.map(
      (r) => `{${[r.kind, r.namespace ?? "", r.name, "", r.apiVersion ?? "", "", r.fieldPath ?? ""].join(" ")}}`,
    );
    const message = `requested [${printed.join(" ")}] without impersonating a user`;
    return failure(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] });
  }
  return requests;
}

/**
 * The user a request acts as: undefined without impersonation headers, the impersonated user when every
 * part is allowed, or the error to answer (403 for a part not allowed).
 */
export async function impersonate(
  headers: DistinctHeaders,
  requestor: UserInfo,
  authorizer: Authorizer,
  profile: NamingProfile,
): Promise<UserInfo | StatusError | undefined> {
  const requests = impersonationRequests(headers);
  if (!Array.isArray(requests)) return requests;
  if (requests.length === 0) return undefined;
  const groupsSpecified = (headers["impersonate-group"]?.length ?? 0) > 0;
  const authenticationGroup = profile.group("authentication");
  let username = "";
  let uid = "";
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const request of requests) {
    const target = { namespace: "", apiGroup: "", resource: "", subresource: "", name: request.name };
    switch (request.kind) {
      case "ServiceAccount":
        Object.assign(target, { resource: "serviceaccounts", namespace: request.namespace });
        username = `${SERVICE_ACCOUNT_PREFIX}${request.namespace}:${request.name}`;
        // A service account's groups follow from its namespace.
        if (!groupsSpecified) groups = ["system:serviceaccounts", `system:serviceaccounts:${request.namespace}`];
        break;
      case "User":
        target.resource = "users";
        username = request.name;
        break;
      case "Group":
        target.resource = "groups";
        groups.push(request.name);
        break;
      case "UserExtra":
        Object.assign(target, { apiGroup: authenticationGroup, resource: "userextras", subresource: request.fieldPath });
        (extra[request.fieldPath!] ??= []).push(request.name);
        break;
      case "UID":
        Object.assign(target, { apiGroup: authenticationGroup, resource: "uids" });
        uid = request.name;
        break;
    }
    const attributes: AuthorizationAttributes = {
      user: requestor,
      verb: "impersonate",
      resourceRequest: true,
      apiVersion: "v1",
      ...target,
    };
    const decision = await authorizer.authorize(attributes);
    if (!decision.allowed) return forbidden(attributes, decision.reason);
  }
  if (username !== ANONYMOUS) {
    if (!groups.includes(AUTHENTICATED) && !groups.includes(UNAUTHENTICATED)) groups.push(AUTHENTICATED);
  } else if (!groups.includes(UNAUTHENTICATED)) {
    groups.push(UNAUTHENTICATED);
  }
  return { username, ...(uid ? { uid } : {}), groups, ...(Object.keys(extra).length ? { extra } : {}) };
}
