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

/** `envelope`'s JSON up to an array member `name` opened last: `{…,"name":[`, to be followed by its elements and `]}`. */
export function openArrayMember(envelope: Record<string, unknown>, name: string): string {
  return `${JSON.stringify(envelope).slice(0, -1)},${JSON.stringify(name)}:[`;
}

/**
 * `envelope` with the array member `name` of `elements` (JSON texts: a list's items, a Table's rows) last,
 * written as UTF-8 into one buffer: no one large string (joining 10,000 items, then encoding the result,
 * costs several times more than writing each element once).
 */
export function jsonBytes(envelope: Record<string, unknown>, name: string, elements: readonly string[]): Buffer {
  const head = openArrayMember(envelope, name);
  let length = Buffer.byteLength(head) + Math.max(elements.length - 1, 0) + CLOSE.length;
  for (const element of elements) length += Buffer.byteLength(element);
  const bytes = Buffer.allocUnsafe(length);
  let at = bytes.write(head);
  elements.forEach((element, i) => {
    if (i > 0) at = bytes.writeUInt8(COMMA, at);
    at += bytes.write(element, at);
  });
  bytes.write(CLOSE, at);
  return bytes;
}

/** What closes the array member and its envelope. */
const CLOSE = "]}";
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
