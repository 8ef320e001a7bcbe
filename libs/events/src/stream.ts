// The JetStream stream that carries change events, the headers of each message and its body: the
// contract between the apiserver's relay (libs/event-relay) and every consumer (libs/client).

export const EVENTS_STREAM = "ORCH_EVENTS";
export const REVISION_HEADER = "Orch-Revision";
/**
 * When the change was committed (Unix milliseconds, fractional), for changes this process committed and
 * published while running: subscribers measure commit-to-delivery latency with it. A backlog published
 * after a restart has no such header.
 */
export const COMMITTED_AT_HEADER = "Orch-Committed-At";

/**
 * Storage resources whose objects travel on the bus as their identity only, whatever their size: what
 * they hold is a credential, and is read through the API, where authentication and RBAC apply.
 */
export const IDENTITY_ONLY_RESOURCES: ReadonlySet<string> = new Set(["core/secrets"]);

export interface EventEnvelope {
  type: "ADDED" | "MODIFIED" | "DELETED";
  revision: number;
  object: unknown;
  /**
   * `object` carries only its type and identifying metadata (name, namespace, uid, resourceVersion,
   * generation), because the object carries credentials (IDENTITY_ONLY_RESOURCES) or was larger than the
   * NATS server's max_payload: a consumer reads the object from the API (Informer does).
   */
  truncated?: true;
}
