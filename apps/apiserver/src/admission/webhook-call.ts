// One call of an admission webhook: an AdmissionReview POSTed over HTTPS (verified with the
// webhook's caBundle), its answer checked as k8s.io/apiserver's request.VerifyAdmissionResponse
// does, and failures worded as ErrCallingWebhook words them.
import { Agent, request as httpsRequest } from "node:https";
import type { MutatingWebhook } from "@orch/api";
import { ACCEPTED_ADMISSION_REVIEW_VERSIONS } from "@orch/registry";

/** An answer larger than this is refused (Kubernetes reads webhook answers up to its request limit). */
const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** Kept-alive connections to webhooks; Node keeps one pool per distinct `ca`. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** What a webhook answered (admission.k8s.io AdmissionResponse), checked. */
export interface AdmissionResponse {
  allowed: boolean;
  /** A metav1.Status when denied. */
  result?: { code?: number; message?: string; reason?: string; status?: string; details?: unknown; [field: string]: unknown };
  patch?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** Kubernetes' ErrCallingWebhook: the call did not produce an answer; failurePolicy decides. */
export class WebhookCallError extends Error {
  constructor(
    readonly webhook: string,
    reason: string,
  ) {
    super(`failed calling webhook ${JSON.stringify(webhook)}: ${reason}`);
  }
}

/** The review version to send: the first of the webhook's list that orch speaks. */
export function reviewVersion(hook: MutatingWebhook): string | undefined {
  return (hook.admissionReviewVersions ?? []).find((v) => (ACCEPTED_ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v));
}

export type ServiceReference = NonNullable<NonNullable<MutatingWebhook["clientConfig"]>["service"]>;

/**
 * Where a `service` reference is served: an address and port from the Service's Endpoints (orch runs
 * no Service proxy), or why there is none.
 */
export type ServiceResolver = (service: ServiceReference) => Promise<{ host: string; port: number } | string>;

/** The address of the call, with Kubernetes' `timeout` query parameter, and the TLS server name. */
async function target(hook: MutatingWebhook, resolveService: ServiceResolver): Promise<{ url: URL; servername?: string }> {
  const config = hook.clientConfig ?? {};
  const timeout = `${hook.timeoutSeconds ?? 10}s`;
  if (config.url) {
    const url = new URL(config.url);
    url.searchParams.set("timeout", timeout);
    return { url };
  }
  const service: ServiceReference = config.service ?? { port: 443 };
  const resolved = await resolveService(service);
  if (typeof resolved === "string") throw new WebhookCallError(hook.name ?? "", `could not get REST client: ${resolved}`);
  const host = resolved.host.includes(":") ? `[${resolved.host}]` : resolved.host;
  const url = new URL(`https://${host}:${resolved.port}${service.path ?? ""}`);
  url.searchParams.set("timeout", timeout);
  // The certificate must name the Service, as Kubernetes requires: <name>.<namespace>.svc.
  return { url, servername: `${service.name ?? ""}.${service.namespace ?? ""}.svc` };
}

/** How Go's HTTP client reports what Node reports, so that messages read as Kubernetes'. */
export function describeFailure(e: unknown, url: URL, timedOut: boolean): string {
  const post = `Post ${JSON.stringify(url.toString())}`;
  if (timedOut) return `${post}: context deadline exceeded`;
  const err = e as NodeJS.ErrnoException;
  const host = `${url.hostname}:${url.port || "443"}`;
  switch (err.code) {
    case "ECONNREFUSED":
      return `${post}: dial tcp ${host}: connect: connection refused`;
    case "ENOTFOUND":
      return `${post}: dial tcp: lookup ${url.hostname}: no such host`;
    case "ECONNRESET":
      return `${post}: read tcp ${host}: read: connection reset by peer`;
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
      return `${post}: tls: failed to verify certificate: x509: certificate signed by unknown authority`;
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `${post}: tls: failed to verify certificate: x509: certificate is valid for other names, not ${url.hostname}`;
    case "CERT_HAS_EXPIRED":
      return `${post}: tls: failed to verify certificate: x509: certificate has expired or is not yet valid`;
    default:
      return `${post}: ${err.message}`;
  }
}

export function post(
  url: URL,
  servername: string | undefined,
  body: string,
  ca: string | undefined,
  signal: AbortSignal,
): Promise<{ status: number; text: string; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: "POST",
        agent,
        ...(ca ? { ca } : {}),
        ...(servername ? { servername } : {}),
        signal,
        headers: { "Content-Type": "application/json", Accept: "application/json", "Content-Length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`the response is larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString("utf8"),
            contentType: res.headers["content-type"] ?? "",
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Sends `review` (with `request.uid` = `uid`) to the webhook and returns its checked answer, or throws
 * a WebhookCallError. `signal` is the request's own deadline; the webhook's timeout is added to it.
 */
export async function callWebhook(
  hook: MutatingWebhook,
  version: string,
  uid: string,
  review: unknown,
  mutating: boolean,
  signal: AbortSignal | undefined,
  resolveService: ServiceResolver,
): Promise<AdmissionResponse> {
  const name = hook.name ?? "";
  const { url, servername } = await target(hook, resolveService);
  const timeout = AbortSignal.timeout((hook.timeoutSeconds ?? 10) * 1000);
  const bundle = hook.clientConfig?.caBundle;
  const ca = bundle ? Buffer.from(bundle, "base64").toString("utf8") : undefined;
  let answer: { status: number; text: string; contentType: string };
  try {
    answer = await post(url, servername, JSON.stringify(review), ca, signal ? AbortSignal.any([signal, timeout]) : timeout);
  } catch (e) {
    signal?.throwIfAborted();
    throw new WebhookCallError(name, `failed to call webhook: ${describeFailure(e, url, timeout.aborted)}`);
  }
  if (answer.status < 200 || answer.status > 299) throw new WebhookCallError(name, `failed to call webhook: ${unexpectedAnswer(answer)}`);
  let parsed: { apiVersion?: unknown; kind?: unknown; response?: Record<string, unknown> | null };
  try {
    parsed = JSON.parse(answer.text);
  } catch (e) {
    throw new WebhookCallError(name, `failed to call webhook: couldn't get version/kind; json parse error: ${goJsonError(answer.text, e)}`);
  }
  return verifyResponse(name, version, uid, parsed, mutating);
}

/**
 * client-go's newUnstructuredResponseError / NewGenericServerResponse for a non-2xx answer, or the Status
 * it carried (conversion webhooks' answers too).
 */
export function unexpectedAnswer(answer: { status: number; text: string; contentType: string }): string {
  const media = answer.contentType.split(";")[0]!.trim();
  if (media === "application/json") {
    try {
      const status = JSON.parse(answer.text) as { kind?: unknown; message?: unknown };
      if (status.kind === "Status" && typeof status.message === "string") return status.message;
    } catch {
      // Not a Status: reported as an unexpected answer below.
    }
  }
  const text = media === "" || media.startsWith("text/") ? answer.text.slice(0, 2048).trim() : "unknown";
  const code = answer.status;
  const fixed: Record<number, string> = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: text,
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    406: text,
    409: "the server reported a conflict",
    415: text,
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
  };
  if (fixed[code] !== undefined) return fixed[code]!;
  if (code >= 500) return `an error on the server (${JSON.stringify(text)}) has prevented the request from succeeding`;
  return `the server responded with the status code ${code} but did not return more information`;
}

/** Go's encoding/json syntax error for the common cases, else the parser's own words. */
function goJsonError(text: string, e: unknown): string {
  const first = text.trimStart()[0];
  if (first === undefined) return "unexpected end of JSON input";
  if (!`{["-0123456789tfn`.includes(first)) return `invalid character '${first}' looking for beginning of value`;
  return (e as Error).message;
}

const invalid = (name: string, why: string) => new WebhookCallError(name, `received invalid webhook response: ${why}`);

/** How Go prints a GroupVersionKind: `group/version, Kind=kind` (`/v1, Kind=…` for the core group). */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const text = typeof apiVersion === "string" ? apiVersion : "";
  const slash = text.indexOf("/");
  const [group, version] = slash < 0 ? ["", text] : [text.slice(0, slash), text.slice(slash + 1)];
  return `${group}/${version}, Kind=${typeof kind === "string" ? kind : ""}`;
}

/** request.VerifyAdmissionResponse: v1 answers are checked, v1beta1 answers were never. */
function verifyResponse(
  name: string,
  version: string,
  uid: string,
  review: { apiVersion?: unknown; kind?: unknown; response?: Record<string, unknown> | null },
  mutating: boolean,
): AdmissionResponse {
  if (typeof review !== "object" || review === null) throw invalid(name, "webhook response was absent");
  const response = review.response;
  if (!response || typeof response !== "object") throw invalid(name, "webhook response was absent");
  const rawPatch = typeof response.patch === "string" ? response.patch : "";
  const patchType = response.patchType;
  if (version === "v1") {
    if (response.uid !== uid)
      throw invalid(name, `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? "")}`);
    if (review.apiVersion !== "admission.k8s.io/v1" || review.kind !== "AdmissionReview") {
      throw invalid(
        name,
        `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvkString(review.apiVersion, review.kind)}`,
      );
    }
    if (mutating) {
      if (rawPatch !== "" && patchType === undefined) throw invalid(name, "webhook returned response.patch but not response.patchType");
      if (rawPatch === "" && patchType !== undefined) throw invalid(name, "webhook returned response.patchType but not response.patch");
      if (patchType === "") throw invalid(name, `webhook returned invalid response.patchType of ""`);
    } else {
      if (rawPatch !== "") throw invalid(name, "validating webhook may not return response.patch");
      if (patchType !== undefined) throw invalid(name, "validating webhook may not return response.patchType");
    }
  }
  // v1beta1 patches are JSON patches; a validating webhook's patch is ignored there.
  const patch = mutating && rawPatch !== "" ? rawPatch : undefined;
  if (patch !== undefined && response.allowed === true && version === "v1" && patchType !== "JSONPatch") {
    // The dispatcher's, not the verifier's: ErrCallingWebhook with the webhook's own Status.
    throw new WebhookCallError(name, `unsupported patch type ${JSON.stringify(patchType)}`);
  }
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === "string") : undefined;
  const annotations = response.auditAnnotations;
  const auditAnnotations =
    annotations && typeof annotations === "object"
      ? Object.fromEntries(Object.entries(annotations).filter((e): e is [string, string] => typeof e[1] === "string"))
      : undefined;
  return {
    allowed: response.allowed === true,
    ...(response.status && typeof response.status === "object" ? { result: response.status as AdmissionResponse["result"] } : {}),
    ...(patch !== undefined ? { patch } : {}),
    ...(warnings ? { warnings } : {}),
    ...(auditAnnotations ? { auditAnnotations } : {}),
  };
}
