// The NATS subject scheme for change events:
//   orch.events.<group>.<resource>.<namespace>.<name>
// `<group>` is `core` for the core group and `<namespace>` is `_` for cluster-scoped objects. Each
// token is percent-encoded where NATS would misread it ('.', '*', '>', '%', whitespace), so
// `certificates.orch.io` becomes `certificates%2Eorch%2Eio`. Subscribers pick with wildcards, e.g.
// `orch.events.apps.deployments.default.*` or `orch.events.core.>`.

export const EVENTS_PREFIX = "orch.events";
export const CLUSTER_SCOPE = "_";

// Characters are escaped as their UTF-8 bytes (`%E2%80%A8` for U+2028, a whitespace): a code unit above
// 0xFF written as `%2028` would decode as a space followed by "28".
export function encodeToken(token: string): string {
  return token.replace(/[%.*>\s]/g, escapeOf);
}

// Each character's escape, made once: Events' names and API groups have dots, so nearly every change's
// subject needs some, and making them each time was most of what publishing a change cost its subject.
const escapes = new Map<string, string>();
function escapeOf(c: string): string {
  let escaped = escapes.get(c);
  if (escaped === undefined) {
    escaped = [...Buffer.from(c, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
    escapes.set(c, escaped);
  }
  return escaped;
}

export function decodeToken(token: string): string {
  return token.replace(/(?:%[0-9A-F]{2})+/g, (bytes) => {
    try {
      return decodeURIComponent(bytes);
    } catch {
      return bytes; // not UTF-8, so not written by encodeToken: leave it as it is
    }
  });
}

export interface SubjectParts {
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

export function eventSubject(p: SubjectParts): string {
  return subjectOf(`${p.group || "core"}/${p.resource}`, p.namespace, p.name);
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
  return subjectOf(change.resource, change.namespace, change.name);
}

/** The subject of an object of `resource` (`<group|core>/<plural>`). */
function subjectOf(resource: string, namespace: string, name: string): string {
  return `${resourcePrefix(resource)}.${namespace ? encodeToken(namespace) : CLUSTER_SCOPE}.${encodeToken(name)}`;
}

// `orch.events.<group>.<resource>` of each stored resource, encoded once: the served resources are few.
const prefixes = new Map<string, string>();
function resourcePrefix(resource: string): string {
  let prefix = prefixes.get(resource);
  if (prefix === undefined) {
    const slash = resource.indexOf("/");
    prefix = [EVENTS_PREFIX, encodeToken(resource.slice(0, slash)), encodeToken(resource.slice(slash + 1))].join(".");
    prefixes.set(resource, prefix);
  }
  return prefix;
}
