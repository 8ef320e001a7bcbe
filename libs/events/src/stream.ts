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

export interface EventEnvelope {
  type: "ADDED" | "MODIFIED" | "DELETED";
  revision: number;
  object: unknown;
  /**
   * The object was larger than the NATS server's max_payload: `object` carries only its type and
   * identifying metadata, and a consumer reads the object from the API (Informer does).
   */
  truncated?: true;
}
