// The label values of a request as Kubernetes reports them (k8s.io/apiserver pkg/endpoints/metrics:
// CleanScope, CanonicalVerb, CleanVerb, cleanDryRun). Every value comes from a short fixed set or from
// the served kinds, never from an object's name or a raw URL, so the number of series stays bounded.

/** The verbs of orch's request info (lower case, as RBAC sees them). */
export type RequestInfoVerb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

/** What a resource request is, as far as its metrics care. */
export interface RequestFacts {
  /** The HTTP method, upper case. */
  method: string;
  verb: RequestInfoVerb;
  /** The request's Content-Type header: an apply patch is reported as APPLY. */
  contentType: string | undefined;
  /** Every `dryRun` query value. */
  dryRun: readonly string[];
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export type Scope = "resource" | "namespace" | "cluster";

/** The labels apiserver_request_total and apiserver_request_duration_seconds share (component aside). */
export interface RequestLabels {
  verb: string;
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: Scope;
}

/** Kubernetes' CleanScope: one object (or a create), a namespace's collection, or the whole cluster. */
export function scopeOf(facts: Pick<RequestFacts, "verb" | "namespace" | "name">): Scope {
  if (facts.name !== "" || facts.verb === "create") return "resource";
  if (facts.namespace !== "") return "namespace";
  return "cluster";
}

/** The methods Kubernetes reports; anything else is `other`, so an odd method adds no series. */
const REPORTED_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE", "GET"]);

/**
 * Kubernetes' reported verb: the HTTP method upper case, except that a GET (or HEAD) of a collection is
 * LIST, a watch is WATCH, and a patch of type application/apply-patch+yaml is APPLY. A delete of a
 * collection stays DELETE (its scope tells it apart), as in Kubernetes.
 */
export function reportedVerb(facts: Pick<RequestFacts, "method" | "verb" | "contentType">): string {
  if (facts.verb === "watch") return "WATCH";
  if (facts.verb === "list") return "LIST";
  const method = facts.method === "HEAD" ? "GET" : facts.method;
  if (method === "PATCH" && mediaType(facts.contentType) === "application/apply-patch+yaml") return "APPLY";
  return REPORTED_METHODS.has(method) ? method : "other";
}

const mediaType = (contentType: string | undefined) => contentType?.split(";")[0]?.trim().toLowerCase();

/** Kubernetes' cleanDryRun: "" without dryRun, the sorted distinct values when valid ("All"), else "invalid". */
export function dryRunLabel(values: readonly string[]): string {
  if (values.length === 0) return "";
  if (values.some((v) => v !== "All")) return "invalid";
  return "All";
}

export function requestLabels(facts: RequestFacts): RequestLabels {
  return {
    verb: reportedVerb(facts),
    dry_run: dryRunLabel(facts.dryRun),
    group: facts.group,
    version: facts.version,
    resource: facts.resource,
    subresource: facts.subresource,
    scope: scopeOf(facts),
  };
}

/** Kubernetes' request kinds of the in-flight limit: get, list and watch are read-only, the rest mutate. */
export type RequestKind = "readOnly" | "mutating";

export const requestKindOf = (verb: RequestInfoVerb): RequestKind =>
  verb === "get" || verb === "list" || verb === "watch" ? "readOnly" : "mutating";
