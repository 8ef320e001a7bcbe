// What a verb handler is given: the request as the HTTP layer hands it over, the kind it addresses, its
// store and the negotiated response format.
import type { KindDefinition, KindRegistry, RequestContext, ResourceStore } from "@orch/registry";
import type { ResponseFormat } from "../negotiation.js";
import type { ResourceRequest } from "../request-info.js";

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface ResourceDeps {
  registry: KindRegistry;
  storeFor(kind: KindDefinition): ResourceStore;
  /** The annotation marking the end of initial watch events (profile-specific). */
  initialEventsAnnotation: string;
}

/** A request's headers by name (case-insensitive), several values of one joined by ", " as `Headers` does. */
export interface RequestHeaders {
  get(name: string): string | null;
}

export interface IncomingRequest {
  info: ResourceRequest;
  query: URLSearchParams;
  headers: RequestHeaders;
  readBody(): Promise<Uint8Array>;
  ctx: RequestContext;
  /** Calls back when the client goes away (watch). */
  onClose(callback: () => void): void;
  /**
   * Starts a streamed response written straight to the connection (watch): no web stream and no
   * promise per chunk between an event and the socket. The handler then returns `RESPONSE_ALREADY_SENT`.
   */
  openStream(status: number, headers: Record<string, string>): ResponseStream;
}

export interface ResponseStream {
  /** False when the socket's buffer is full: wait for `onDrain`. */
  write(chunk: Uint8Array): boolean;
  onDrain(callback: () => void): void;
  end(): void;
}

/** One verb on one kind: everything a handler needs, resolved and checked by the router. */
export interface VerbRequest {
  deps: ResourceDeps;
  req: IncomingRequest;
  kind: KindDefinition;
  store: ResourceStore;
  format: ResponseFormat;
  /** The namespace of the object: empty for a cluster-scoped kind. */
  namespace: string;
  /** Answers with the negotiated format, `?pretty` and the request's warnings. */
  ok(code: number, body: unknown): Response;
}

export type VerbHandler = (r: VerbRequest) => Promise<Response>;
