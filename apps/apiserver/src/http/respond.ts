// Writing responses: JSON text (objects are often already serialized by the storage), Status errors,
// and `Warning` headers.
import { type Status, StatusError, errors, failure } from "@orch/machinery";
import { type ResponseFormat, JSON_TYPE, serialize } from "./negotiation.js";

export function warningHeader(message: string): string {
  return `299 - ${JSON.stringify(message)}`;
}

export function respond(
  status: number,
  body: unknown,
  format: ResponseFormat = { type: JSON_TYPE },
  pretty = false,
  warnings: readonly string[] = [],
): Response {
  // Plain headers unless there are warnings (one Warning header each): the Node adapter writes a plain
  // object as it is, where a Headers object is built and then converted for every answer.
  let headers: Headers | Record<string, string> = { "Content-Type": format.type };
  if (warnings.length > 0) {
    headers = new Headers(headers);
    for (const w of new Set(warnings)) headers.append("Warning", warningHeader(w));
  }
  // JSON text or bytes (a list spliced from stored items) go out as they are when JSON is asked for.
  const serialized = typeof body === "string" || body instanceof Uint8Array;
  const text =
    serialized && format.type === JSON_TYPE && !pretty
      ? body
      : serialize(serialized ? JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString()) : body, format, pretty);
  return new Response(text, { status, headers });
}

/**
 * JSON text made of a head, parts with a comma between each two, and a tail (a list's items, a Table's
 * rows), written as UTF-8 into one buffer: no one large string (joining 10,000 items, then encoding the
 * result, costs several times more than writing each part once).
 */
export function jsonBytes(head: string, parts: readonly string[], tail: string): Buffer {
  let length = Buffer.byteLength(head) + Math.max(parts.length - 1, 0) + Buffer.byteLength(tail);
  for (const part of parts) length += Buffer.byteLength(part);
  const bytes = Buffer.allocUnsafe(length);
  let at = bytes.write(head);
  parts.forEach((part, i) => {
    if (i > 0) at = bytes.writeUInt8(COMMA, at);
    at += bytes.write(part, at);
  });
  bytes.write(tail, at);
  return bytes;
}

const COMMA = 0x2c;

export function statusOf(e: unknown): Status {
  if (e instanceof StatusError) return e.status;
  return errors.internal(e instanceof Error ? e.message : String(e)).status;
}

/** The error behind each 500 answered for something unforeseen: the request log line reports it. */
const unforeseen = new WeakMap<Response, unknown>();
export const unforeseenError = (response: Response): unknown => unforeseen.get(response);

export function respondError(e: unknown, format?: ResponseFormat, warnings: readonly string[] = []): Response {
  const status = statusOf(e);
  // Go omits an empty reason (`reason,omitempty`): a plain error becomes a 500 without one.
  const body = status.reason ? status : (({ reason: _r, ...rest }) => rest)(status);
  const response = respond(status.code, body, format ?? { type: JSON_TYPE }, false, warnings);
  if (status.details?.retryAfterSeconds) response.headers.set("Retry-After", String(status.details.retryAfterSeconds));
  if (!(e instanceof StatusError)) unforeseen.set(response, e);
  return response;
}

export { failure };
