// Failures from the apiserver as typed errors carrying the Kubernetes `Status`, so callers branch on
// `reason`/`code` (as client-go's apierrors) instead of parsing messages.
import type { Status, StatusCause } from "@orch/machinery";

export type { Status, StatusCause };

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

export class ApiError extends Error {
  override readonly name: string = "ApiError";
  constructor(readonly status: Status) {
    super(status.message || `${status.code} ${status.reason ?? ""}`.trim());
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): string | undefined {
    return this.status.reason;
  }
  get causes(): StatusCause[] {
    return this.status.details?.causes ?? [];
  }
}

/** 410: the requested revision is gone from the server's history (watch start, continue token): relist. */
export class ExpiredError extends ApiError {
  override readonly name: string = "ExpiredError";
}

/** The typed error for a Status (from a response body or a watch ERROR event). */
export function errorFromStatus(status: Status): ApiError {
  return status.code === 410 ? new ExpiredError(status) : new ApiError(status);
}

/**
 * The typed error for a failed response. The body is a `Status` for every failure the apiserver itself
 * answers; anything else (a proxy, "404 page not found") gets a Status built from the HTTP code.
 */
export function errorFromResponse(code: number, body: string): ApiError {
  try {
    const parsed = JSON.parse(body) as Partial<Status> | null;
    if (parsed && parsed.kind === "Status" && typeof parsed.code === "number") return errorFromStatus(parsed as Status);
  } catch {
    // not JSON
  }
  return errorFromStatus({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    code,
    reason: REASONS[code] ?? "Unknown",
    message: body.trim() || `the server responded with ${code}`,
  });
}

const is = (e: unknown, code: number, reason?: string): boolean =>
  e instanceof ApiError && (e.code === code || (reason !== undefined && e.reason === reason));

export const isNotFound = (e: unknown): boolean => is(e, 404, "NotFound");
/** 409 with reason Conflict: the object changed since it was read (optimistic concurrency). */
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.reason === "Conflict";
export const isAlreadyExists = (e: unknown): boolean => e instanceof ApiError && e.reason === "AlreadyExists";
export const isExpired = (e: unknown): boolean => e instanceof ExpiredError || is(e, 410, "Expired");
export const isInvalid = (e: unknown): boolean => is(e, 422, "Invalid");
export const isForbidden = (e: unknown): boolean => is(e, 403, "Forbidden");
