// A CustomResourceDefinition's conversion webhook (`spec.conversion.strategy: Webhook`), as
// apiextensions-apiserver's pkg/apiserver/conversion/webhook_converter.go calls it: the objects that
// are not yet in the desired version go in one ConversionReview (in the first of
// `conversionReviewVersions` orch speaks), POSTed over HTTPS verified with `caBundle`; the answer is
// checked (uid, result, count, apiVersion and kind, name/namespace/uid kept) and only labels and
// annotations of the metadata may change (restoreObjectMeta). Every failure is Kubernetes' error: a
// 500 whose message starts `conversion webhook for <group>/<version>, Kind=<kind> failed`.
import { randomUUID } from "node:crypto";
import type { CustomResourceDefinition, ObjectHeader } from "@orch/api";
import {
  FieldPath,
  type FieldError,
  StatusError,
  failure,
  fieldErrorText,
  goAggregate,
  validateAnnotations,
  validateLabels,
} from "@orch/machinery";
import { decodeJson } from "@orch/machinery/serializer";
import type { ConversionWebhookFailure, ConversionWebhookObservation } from "@orch/metrics";
import type { ClusterReader, VersionConverter } from "@orch/registry";
import { resolveService } from "../admission/webhook-admission.js";
import { describeFailure, post, unexpectedAnswer } from "../admission/webhook-call.js";

/** The ConversionReview versions orch speaks, in no order of preference: the CRD's list decides. */
export const CONVERSION_REVIEW_VERSIONS = ["v1", "v1beta1"] as const;

/** Kubernetes' conversion webhook client timeout (its REST client's 30 s, sent as `?timeout=30s`). */
export const DEFAULT_CONVERSION_TIMEOUT_MS = 30_000;

export interface WebhookConverterOptions {
  /** Where `service` references are called: the Service's Endpoints (see resolveService). */
  cluster: ClusterReader;
  /** How long one call may take (default 30 s, as Kubernetes). */
  timeoutMs?: number;
  /** Told of every conversion that called the webhook (the apiserver's metrics). */
  observe?: (o: ConversionWebhookObservation) => void;
}

type Webhook = NonNullable<CustomResourceDefinition["spec"]["conversion"]["webhook"]>;

/**
 * A plain error with the conversion's message: Kubernetes answers it as a 500 without a reason. It
 * says which kind of failure it was, for the metrics.
 */
class ConversionError extends StatusError {
  constructor(
    message: string,
    readonly failure?: ConversionWebhookFailure,
  ) {
    super(failure500(message));
  }
}
const failure500 = (message: string) => failure(500, "", message).status;
const conversionFailure = (message: string, kind?: ConversionWebhookFailure) => new ConversionError(message, kind);

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** The converter of one CRD whose strategy is Webhook. */
export function webhookConverter(crd: CustomResourceDefinition, options: WebhookConverterOptions): VersionConverter {
  const webhook: Webhook = crd.spec.conversion.webhook ?? { conversionReviewVersions: [] };
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONVERSION_TIMEOUT_MS;
  return {
    strategy: "Webhook",
    async convert(objects, apiVersion, signal) {
      const indexes = objects.flatMap((o, i) => (o.apiVersion === apiVersion ? [] : [i]));
      if (indexes.length === 0) return [...objects];
      const sent = indexes.map((i) => objects[i]!);
      // Kubernetes names the GroupVersionKind of what it was given (for one object, the object's own).
      const first = sent[0]!;
      const gvk = `${first.apiVersion ?? ""}, Kind=${first.kind ?? ""}`;
      // Kubernetes' converterMetric and its webhook call metrics; a failure before any call is only the former's.
      const observe = (succeeded: boolean, failure?: ConversionWebhookFailure) =>
        options.observe?.({
          crd: crd.metadata.name ?? "",
          fromVersion:
            String(first.apiVersion ?? "")
              .split("/")
              .at(-1) ?? "",
          toVersion: apiVersion.split("/").at(-1) ?? "",
          seconds: (performance.now() - started) / 1000,
          succeeded,
          ...(failure ? { failure } : {}),
        });
      const started = performance.now();
      let converted: ObjectHeader[];
      try {
        converted = await callWebhook(webhook, sent, apiVersion, gvk, timeoutMs, options.cluster, signal);
      } catch (e) {
        observe(false, e instanceof ConversionError ? e.failure : undefined);
        throw e;
      }
      observe(true);
      const out = [...objects];
      indexes.forEach((at, j) => (out[at] = converted[j]!));
      return out;
    },
  };
}

/** The URL a call goes to (with Kubernetes' `timeout` parameter), the TLS name, or why there is none. */
async function target(
  webhook: Webhook,
  timeoutMs: number,
  cluster: ClusterReader,
): Promise<{ url: URL; servername?: string; unresolved?: string }> {
  const config = webhook.clientConfig ?? {};
  const timeout = `${Math.round(timeoutMs / 1000)}s`;
  if (config.url) {
    const url = new URL(config.url);
    url.searchParams.set("timeout", timeout);
    return { url };
  }
  const ref = config.service ?? { name: "", namespace: "", port: 443 };
  const port = ref.port ?? 443;
  // The address as Kubernetes dials it, for messages; orch calls one of the Service's endpoints instead.
  const resolved = await resolveService(cluster, { ...ref, port });
  if (typeof resolved === "string") {
    // Written out: URL drops the default port, Go's request line keeps it.
    return {
      url: new URL("https://unresolved"),
      unresolved: `Post "https://${ref.name}.${ref.namespace}.svc:${port}${ref.path ?? ""}?timeout=${timeout}": ${resolved}`,
    };
  }
  const host = resolved.host.includes(":") ? `[${resolved.host}]` : resolved.host;
  const url = new URL(`https://${host}:${resolved.port}${ref.path ?? ""}`);
  url.searchParams.set("timeout", timeout);
  return { url, servername: `${ref.name}.${ref.namespace}.svc` };
}

async function callWebhook(
  webhook: Webhook,
  objects: ObjectHeader[],
  apiVersion: string,
  gvk: string,
  timeoutMs: number,
  cluster: ClusterReader,
  signal: AbortSignal | undefined,
): Promise<ObjectHeader[]> {
  // Everything r.Into reports in Kubernetes (the call, its status, its body) is a call failure.
  const failed = (why: string, kind: ConversionWebhookFailure = "conversion_webhook_call_failure") =>
    conversionFailure(`conversion webhook for ${gvk} failed: ${why}`, kind);
  const version = (webhook.conversionReviewVersions ?? []).find((v) => (CONVERSION_REVIEW_VERSIONS as readonly string[]).includes(v));
  // createConversionReviewObjects' error, unwrapped as Kubernetes returns it.
  if (!version) throw conversionFailure("no supported conversion review versions");
  const uid = randomUUID();
  // Webhooks decode the review under Kubernetes' group whatever orch's profile (controller-runtime,
  // kubebuilder), as admission webhooks get admission.k8s.io.
  const review = {
    apiVersion: `apiextensions.k8s.io/${version}`,
    kind: "ConversionReview",
    request: { uid, desiredAPIVersion: apiVersion, objects },
  };
  const { url, servername, unresolved } = await target(webhook, timeoutMs, cluster);
  if (unresolved) throw failed(unresolved);
  const timeout = AbortSignal.timeout(timeoutMs);
  const bundle = webhook.clientConfig?.caBundle?.trim();
  const ca = bundle ? Buffer.from(bundle, "base64").toString("utf8") : undefined;
  let answer: Awaited<ReturnType<typeof post>>;
  try {
    answer = await post(url, servername, JSON.stringify(review), ca, signal ? AbortSignal.any([signal, timeout]) : timeout);
  } catch (e) {
    signal?.throwIfAborted();
    throw failed(describeFailure(e, url, timeout.aborted));
  }
  if (answer.status < 200 || answer.status > 206) throw failed(unexpectedAnswer(answer));
  if (answer.text.length === 0) {
    throw failed(`0-length response with status code: ${answer.status} and content type: ${answer.contentType}`);
  }
  let parsed: unknown;
  try {
    parsed = decodeJson(answer.text);
  } catch (e) {
    throw failed(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  const converted = convertedObjects(parsed, version, uid);
  if (typeof converted === "string") throw failed(converted, "conversion_webhook_malformed_response_failure");
  if (converted.length !== objects.length) {
    throw conversionFailure(
      `conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objects.length}`,
      "conversion_webhook_partial_response_failure",
    );
  }
  const [group, desired] = splitApiVersion(apiVersion);
  // One object reads as Kubernetes' single-object path; several as its list path, by index.
  const single = objects.length === 1;
  return converted.map((raw, i) => {
    const original = objects[i]!;
    const invalid = (why: string) =>
      conversionFailure(
        single
          ? `conversion webhook for ${gvk} returned invalid object${why.startsWith("invalid groupVersion") || why.startsWith("invalid kind") ? " at index 0" : ""}: ${why}`
          : `conversion webhook for ${gvk} returned invalid converted object at index ${i}: ${why}`,
        "conversion_webhook_invalid_converted_object_failure",
      );
    if (!isObject(raw)) throw invalid("Object 'Kind' is missing in the converted object");
    const out = raw as ObjectHeader;
    const [outGroup, outVersion] = splitApiVersion(String(out.apiVersion ?? ""));
    if (outGroup !== group || outVersion !== desired) {
      throw invalid(`invalid groupVersion (expected ${apiVersion}, received ${String(out.apiVersion ?? "")})`);
    }
    if (out.kind !== original.kind) throw invalid(`invalid kind (expected ${original.kind}, received ${String(out.kind ?? "")})`);
    const mismatch = metadataMismatch(original, out);
    if (mismatch) throw invalid(mismatch);
    const problem = restoreObjectMeta(original, out);
    if (problem) {
      throw conversionFailure(
        single
          ? `conversion webhook for ${gvk} returned invalid metadata: ${problem}`
          : `conversion webhook for ${gvk} returned invalid metadata in object at index ${i}: ${problem}`,
        "conversion_webhook_invalid_converted_object_failure",
      );
    }
    return out;
  });
}

const splitApiVersion = (apiVersion: string): [string, string] => {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
};

/** getConvertedObjectsFromResponse: the converted objects, or what is wrong with the answer. */
function convertedObjects(review: unknown, version: string, uid: string): unknown[] | string {
  if (!isObject(review)) return "couldn't get version/kind; json parse error: expected an object";
  const response = review.response;
  if (version === "v1") {
    // Only v1 answers are checked for what they are and whom they answer (v1beta1 never was).
    const got = `${String(review.apiVersion ?? "")}, Kind=${String(review.kind ?? "")}`;
    if (review.apiVersion !== "apiextensions.k8s.io/v1" || review.kind !== "ConversionReview") {
      return `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got}`;
    }
  }
  if (!isObject(response)) return "no response provided";
  if (version === "v1" && response.uid !== uid)
    return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? "")}`;
  const result = isObject(response.result) ? response.result : {};
  if (result.status !== "Success") {
    if (typeof result.message === "string" && result.message !== "") return result.message;
    return `response.result.status was '${String(result.status ?? "")}', not 'Success'`;
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/** validateConvertedObject: everything of the metadata but labels and annotations is the server's. */
function metadataMismatch(original: ObjectHeader, out: ObjectHeader): string | undefined {
  const a = original.metadata ?? {};
  const b = (isObject(out.metadata) ? out.metadata : {}) as ObjectHeader["metadata"];
  if ((a.name ?? "") !== (b.name ?? "")) return `must have the same name: ${a.name ?? ""} != ${b.name ?? ""}`;
  if ((a.namespace ?? "") !== (b.namespace ?? "")) return `must have the same namespace: ${a.namespace ?? ""} != ${b.namespace ?? ""}`;
  if ((a.uid ?? "") !== (b.uid ?? "")) return `must have the same UID: ${a.uid ?? ""} != ${b.uid ?? ""}`;
  return undefined;
}

/**
 * restoreObjectMeta: the converted object gets the original's metadata, with the labels and
 * annotations the webhook answered (validated when they changed). Returns what is wrong, if anything.
 */
function restoreObjectMeta(original: ObjectHeader, out: ObjectHeader): string | undefined {
  const answered: unknown = out.metadata;
  if (answered === undefined) return "missing metadata in converted object";
  if (!isObject(answered)) return `invalid metadata of type ${goType(answered)} in converted object`;
  const restored = structuredClone(original.metadata ?? {}) as Record<string, unknown>;
  for (const field of ["labels", "annotations"] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete restored[field];
      continue;
    }
    if (!isObject(value)) return `invalid metadata.${field} of type ${goType(value)} in converted object`;
    const before = (restored[field] ?? {}) as Record<string, unknown>;
    let changed = Object.keys(before).length !== Object.keys(value).length;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== "string") return `metadata.${field}[${k}] must be a string, but is ${goType(v)} in converted object`;
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      const strings = value as Record<string, string>;
      const errs: FieldError[] =
        field === "labels"
          ? validateLabels(strings, FieldPath.root("metadata", "labels"))
          : validateAnnotations(strings, FieldPath.root("metadata", "annotation"));
      if (errs.length > 0) return goAggregate(errs.map(fieldErrorText));
    }
    restored[field] = value;
  }
  out.metadata = restored as ObjectHeader["metadata"];
  return undefined;
}

/** The Go type encoding/json gives a JSON value, for messages. */
function goType(value: unknown): string {
  if (Array.isArray(value)) return "[]interface {}";
  if (typeof value === "string") return "string";
  if (typeof value === "number") return "float64";
  if (typeof value === "boolean") return "bool";
  if (isObject(value)) return "map[string]interface {}";
  return "<nil>";
}
