// The NATS subject scheme for change events:
//   orch.events.<group>.<resource>.<namespace>.<name>
// `<group>` is `core` for the core group and `<namespace>` is `_` for cluster-scoped objects. Each
// token is percent-encoded where NATS would misread it ('.', '*', '>', '%', whitespace), so
// `certificates.orch.io` becomes `certificates%2Eorch%2Eio`. Subscribers pick with wildcards, e.g.
// `orch.events.apps.deployments.default.*` or `orch.events.core.>`.

export const EVENTS_PREFIX = "orch.events";
export const CLUSTER_SCOPE = "_";

export function encodeToken(token: string): string {
  return token.replace(/[%.*>\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

export function decodeToken(token: string): string {
  return token.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export interface SubjectParts {
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

export function eventSubject(p: SubjectParts): string {
  return [
    EVENTS_PREFIX,
    encodeToken(p.group || "core"),
    encodeToken(p.resource),
    p.namespace ? encodeToken(p.namespace) : CLUSTER_SCOPE,
    encodeToken(p.name),
  ].join(".");
}

export function parseEventSubject(subject: string): SubjectParts | undefined {
  const prefix = `${EVENTS_PREFIX}.`;
  if (!subject.startsWith(prefix)) return undefined;
  const parts = subject.slice(prefix.length).split(".");
  if (parts.length !== 4) return undefined;
  const [group, resource, namespace, name] = parts.map(decodeToken) as [string, string, string, string];
  return { group: group === "core" ? "" : group, resource, namespace: namespace === CLUSTER_SCOPE ? "" : namespace, name };
}

/** Storage keys the resource as `<group|core>/<plural>`. */
export function subjectForChange(change: { resource: string; namespace: string; name: string }): string {
  const slash = change.resource.indexOf("/");
  const group = change.resource.slice(0, slash);
  return eventSubject({
    group: group === "core" ? "" : group,
    resource: change.resource.slice(slash + 1),
    namespace: change.namespace,
    name: change.name,
  });
}
