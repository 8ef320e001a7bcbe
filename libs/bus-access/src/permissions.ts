// Who may do what on the event bus, derived from RBAC: an identity may read the change events of the
// resources it may `watch`, in the namespaces where it may; only the apiserver publishes. The result is
// a NATS `authorization` block (users mapped from their TLS client certificate's subject), which the
// NATS server reloads whenever RBAC changes what it says.
//
// Reading events takes, in NATS terms: subscribing to the event subjects themselves (core NATS), or
// creating a JetStream consumer on the stream. A consumer is created through
// `$JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>`, whose subject carries the filter, and the server
// refuses a request whose body asks for another filter: permitting that subject for the event
// subjects one may watch permits exactly the consumers one may have. Every other way to read the
// stream (unfiltered or durable consumers, direct or stored-message gets) is simply not permitted.
// Pulls and deliveries go to the identity's own inbox; consumer names are random, and nobody may list them.
import type { PolicyRule } from "@orch/api";
import { EVENTS_PREFIX, EVENTS_STREAM, encodeToken } from "@orch/events";
import { inboxPrefixFor } from "./connection.js";

export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

export interface BusUser {
  /** The TLS client certificate's subject as NATS' verify_and_map reads it (RFC 2253, e.g. `CN=alice`). */
  subject: string;
  permissions: NatsPermissions;
}

const ALL = "*";
const mayWatch = (rule: PolicyRule) => (rule.verbs ?? []).some((v) => v === ALL || v === "watch");

/**
 * The event subjects the rules let one watch: `orch.events.<group>.<resource>.<namespace>.<name>`
 * patterns. `namespace` is where the rules apply (a RoleBinding's namespace), undefined for cluster-wide
 * rules. Subresources carry no events of their own and are skipped.
 */
export function watchableSubjects(rules: readonly PolicyRule[], namespace?: string): string[] {
  const subjects = new Set<string>();
  for (const rule of rules) {
    if (!mayWatch(rule)) continue;
    const names = rule.resourceNames?.length ? rule.resourceNames.map(encodeToken) : [ALL];
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        if (resource.includes("/")) continue;
        const groupToken = group === ALL ? ALL : encodeToken(group || "core");
        const resourceToken = resource === ALL ? ALL : encodeToken(resource);
        const namespaceToken = namespace === undefined ? ALL : encodeToken(namespace);
        for (const name of names) {
          const tail = namespace === undefined && name === ALL ? ">" : `${namespaceToken}.${name}`;
          subjects.add(`${EVENTS_PREFIX}.${groupToken}.${resourceToken}.${tail}`);
        }
      }
    }
  }
  return [...subjects];
}

/** Every event subject: what members of system:masters may read. */
export const ALL_EVENTS = `${EVENTS_PREFIX}.>`;

/** A reader of change events: the consumers it may create, its own inbox, nothing published. */
export function consumerPermissions(username: string, subjects: readonly string[], stream = EVENTS_STREAM): NatsPermissions {
  return {
    publish: {
      allow: [
        `$JS.API.STREAM.INFO.${stream}`,
        `$JS.API.CONSUMER.INFO.${stream}.*`,
        `$JS.API.CONSUMER.DELETE.${stream}.*`,
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
        ...subjects.map((s) => `$JS.API.CONSUMER.CREATE.${stream}.*.${s}`),
      ],
    },
    subscribe: { allow: [`${inboxPrefixFor(username)}.>`, ...subjects] },
  };
}

/** The apiserver: publishes change events and manages the stream. */
export const PUBLISHER_PERMISSIONS: NatsPermissions = { publish: { allow: [">"] }, subscribe: { allow: [">"] } };

/** `CN=<name>` as NATS writes a certificate subject: RFC 2253, with its special characters escaped. */
export const certificateSubject = (commonName: string, organizations: readonly string[] = []): string =>
  [`CN=${escapeRdn(commonName)}`, ...organizations.map((o) => `O=${escapeRdn(o)}`)].join(",");

const escapeRdn = (value: string) => value.replace(/[,+"\\<>;]/g, (c) => `\\${c}`).replace(/^[ #]| $/g, (c) => `\\${c}`);

/**
 * The NATS server's `authorization` block (a configuration file to `include`): TLS-mapped users only,
 * so that a connection without a certificate of a listed subject is refused.
 */
export function authorizationConfig(users: readonly BusUser[]): string {
  const entries = users.map((u) => `    ${JSON.stringify({ user: u.subject, permissions: u.permissions })}`);
  return `# Written by the orch apiserver from RBAC; do not edit (it is rewritten when RBAC changes).\nauthorization {\n  users = [\n${entries.join("\n")}\n  ]\n}\n`;
}
