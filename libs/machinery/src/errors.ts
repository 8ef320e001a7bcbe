// Kubernetes `Status` failures (k8s.io/apimachinery/pkg/api/errors). Every failure that leaves the
// apiserver is one of these, so clients can branch on `reason` and `code`.
import { type FieldError, fieldErrorBody, fieldErrorText } from "./validation/field-errors.js";
import { goAggregate } from "./values/go-format.js";

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, unknown>;
  status: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export interface GroupResource {
  group: string;
  resource: string;
}
export interface GroupKind {
  group: string;
  kind: string;
}

export const qualifiedResource = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);
export const qualifiedKind = (gk: GroupKind): string => (gk.group ? `${gk.kind}.${gk.group}` : gk.kind);

export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): string | undefined {
    return this.status.reason;
  }
}

export function failure(code: number, reason: string, message: string, details?: StatusDetails): StatusError {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  if (details) status.details = details;
  return new StatusError(status);
}

export function success(details?: StatusDetails): Status {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 200 };
  if (details) status.details = details;
  return status;
}

export const isStatusError = (e: unknown): e is StatusError => e instanceof StatusError;

const withGroup = (gr: GroupResource, name: string): StatusDetails =>
  gr.group ? { name, group: gr.group, kind: gr.resource } : { name, kind: gr.resource };

export const errors = {
  notFound: (gr: GroupResource, name: string) =>
    failure(404, "NotFound", `${qualifiedResource(gr)} "${name}" not found`, withGroup(gr, name)),

  alreadyExists: (gr: GroupResource, name: string) =>
    failure(409, "AlreadyExists", `${qualifiedResource(gr)} "${name}" already exists`, withGroup(gr, name)),

  conflict: (gr: GroupResource, name: string, why: string) =>
    failure(409, "Conflict", `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, withGroup(gr, name)),

  /** The optimistic-concurrency failure every stale write gets. */
  modified: (gr: GroupResource, name: string) =>
    errors.conflict(gr, name, "the object has been modified; please apply your changes to the latest version and try again"),

  invalid: (gk: GroupKind, name: string, errs: readonly FieldError[]) => {
    const aggregate = goAggregate(errs.map(fieldErrorText));
    const details: StatusDetails = {
      name,
      ...(gk.group ? { group: gk.group } : {}),
      kind: gk.kind,
      causes: errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    };
    return failure(422, "Invalid", `${qualifiedKind(gk)} "${name}" is invalid: ${aggregate}`, details);
  },

  badRequest: (message: string) => failure(400, "BadRequest", message),
  /** A patch that cannot be applied to the object. */
  invalidPatch: (message: string) => failure(422, "Invalid", message),
  unauthorized: (message = "Unauthorized") => failure(401, "Unauthorized", message),
  forbidden: (gr: GroupResource, name: string, why: string) =>
    failure(403, "Forbidden", `${qualifiedResource(gr)}${name ? ` "${name}"` : ""} is forbidden: ${why}`, withGroup(gr, name)),
  notFoundPath: () => failure(404, "NotFound", "the server could not find the requested resource", {}),
  methodNotSupported: (gr: GroupResource, action: string) =>
    failure(405, "MethodNotAllowed", `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`, {
      group: gr.group,
      kind: gr.resource,
    }),
  notAcceptable: (accepted: readonly string[]) =>
    failure(406, "NotAcceptable", `only the following media types are accepted: ${accepted.join(", ")}`),
  unsupportedMediaType: (supported: readonly string[]) =>
    failure(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: ${supported.join(", ")}`,
    ),
  tooLarge: (message = "the server has received too large of a request") =>
    failure(413, "RequestEntityTooLarge", `Request entity too large: ${message}`),
  gone: (message: string) => failure(410, "Expired", message),
  tooManyRequests: (message: string, retryAfterSeconds: number) => failure(429, "TooManyRequests", message, { retryAfterSeconds }),
  internal: (message: string) => failure(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] }),
  timeout: (message: string, retryAfterSeconds: number, causeReason?: string) =>
    failure(504, "Timeout", `Timeout: ${message}`, {
      retryAfterSeconds,
      ...(causeReason ? { causes: [{ reason: causeReason, message }] } : {}),
    }),
};
