// List and watch options, validated and turned into a plan as Kubernetes' apiserver interprets them
// (resourceVersion semantics, continue tokens, selectors).
import type { ObjectHeader } from "@orch/api";
import { type FieldError, type StatusError, errors, fieldError, fieldErrorText } from "@orch/machinery";
import type { CompactedError, Position } from "@orch/storage";
import type { KindDefinition } from "./kind.js";
import { compileFieldSelector, compileLabelSelector, labelSelectorTextCheck } from "./selectors.js";

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
  /** The request's deadline: a wait for a revision not yet committed ends when it aborts. */
  signal?: AbortSignal;
}

export interface ListPlan {
  namespace?: string;
  filter?: (obj: ObjectHeader) => boolean;
  /** A cheap test of the stored JSON text that every object `filter` keeps passes (see labelSelectorTextCheck). */
  textMayMatch?: (json: string) => boolean;
  limit?: number;
  after?: Position;
  /** Read at exactly this revision (continue token, resourceVersionMatch=Exact). */
  exactRevision?: number;
  /** Wait until at least this revision is committed (resourceVersion=N, NotOlderThan). */
  minRevision?: number;
  /** Watch: deliver changes after this revision. */
  startRevision?: number;
  /** Watch: send the current state as ADDED events first. */
  initialEvents: boolean;
  encodeContinue(revision: number, after: Position): string;
  expired(e: CompactedError): StatusError;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

const CONTINUE_EXPIRED =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/**
 * Kubernetes' token: base64url JSON whose `start` is the next key relative to the list's key prefix,
 * so `name\0` within one namespace (or for a cluster-scoped kind) and `namespace/name\0` across all.
 */
function encodeContinue(revision: number, after: Position, namespace: string | undefined): string {
  const relative = namespace !== undefined || !after.namespace ? after.name : `${after.namespace}/${after.name}`;
  const token: ContinueToken = { v: "meta.k8s.io/v1", rv: revision, start: `${relative}\u0000` };
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function decodeContinue(text: string, namespace: string | undefined): { revision: number; after: Position } {
  const invalid = (why: string) => errors.badRequest(`invalid continue token: continue key is not valid: ${why}`);
  let token: Partial<ContinueToken>;
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("illegal base64 data");
    const parsed = JSON.parse(Buffer.from(text, "base64url").toString()) as unknown;
    if (typeof parsed !== "object" || parsed === null) throw new Error("not a JSON object");
    token = parsed as Partial<ContinueToken>;
  } catch (e) {
    throw invalid((e as Error).message);
  }
  if (token.v !== "meta.k8s.io/v1") throw invalid(`server does not recognize this encoded version ${String(token.v ?? "")}`);
  if (typeof token.rv !== "number" || !Number.isInteger(token.rv) || token.rv === 0) {
    throw invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
  const key = typeof token.start === "string" ? token.start.replace(/\u0000$/, "") : "";
  if (key === "") throw invalid("encoded start key empty (version meta.k8s.io/v1)");
  if (key.split("/").some((p) => p === "" || p === "." || p === "..")) throw invalid(`invalid start key ${JSON.stringify(key)}`);
  if (namespace !== undefined) return { revision: token.rv, after: { namespace, name: key } };
  const slash = key.indexOf("/");
  const after = slash < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  return { revision: token.rv, after };
}

/**
 * A resourceVersion must be an unsigned integer: 400, for a list and (unlike Kubernetes, whose watch
 * answers 500 here) for a watch: a client's mistake is never a server error.
 */
function parseRevision(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  const invalid = fieldErrorText(
    fieldError.invalid("resourceVersion", text, `strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`),
  );
  throw errors.badRequest(`invalid resource version: ${invalid}`);
}

export function planList(kind: KindDefinition, o: ListOptions, watch: boolean): ListPlan {
  const errs: FieldError[] = [];
  const rv = o.resourceVersion ?? "";
  const match = o.resourceVersionMatch ?? "";
  // Kubernetes' ValidateListOptions / validateWatchOptions, in their order.
  if (watch) {
    if (o.sendInitialEvents !== undefined && match !== "NotOlderThan") {
      errs.push(fieldError.forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (match) {
      if (o.sendInitialEvents === undefined) {
        errs.push(
          fieldError.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
        );
      }
      if (match !== "NotOlderThan") errs.push(fieldError.notSupported("resourceVersionMatch", match, ["NotOlderThan"]));
      if (o.continue) {
        errs.push(fieldError.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
      }
    }
  } else {
    if (match) {
      if (!rv) {
        errs.push(fieldError.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"));
      }
      if (o.continue) {
        errs.push(fieldError.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
      }
      if (match !== "NotOlderThan" && match !== "Exact") {
        errs.push(fieldError.notSupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]));
      }
      if (match === "Exact" && rv === "0") {
        errs.push(fieldError.forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
      }
    }
    if (o.sendInitialEvents !== undefined) {
      errs.push(fieldError.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
    }
  }
  if (o.limit !== undefined && (!Number.isInteger(o.limit) || o.limit < 0)) {
    errs.push(fieldError.invalid("limit", o.limit, "must be a non-negative integer"));
  }
  if (errs.length > 0) throw errors.invalid({ group: "meta.k8s.io", kind: "ListOptions" }, "", errs);
  const revision = rv && rv !== "0" ? parseRevision(rv) : undefined;

  const labels = compileLabelSelector(o.labelSelector);
  const fields = compileFieldSelector(kind, o.fieldSelector);
  const filter = labels || fields ? (obj: ObjectHeader) => (!labels || labels(obj)) && (!fields || fields(obj)) : undefined;

  const namespace = kind.namespaced ? o.namespace : undefined;
  const textMayMatch = labelSelectorTextCheck(o.labelSelector);
  const plan: ListPlan = {
    namespace,
    filter,
    ...(textMayMatch ? { textMayMatch } : {}),
    limit: watch ? undefined : o.limit || undefined,
    initialEvents: false,
    encodeContinue: (revision, after) => encodeContinue(revision, after, namespace),
    expired: (e) => errors.gone(`too old resource version: ${e.requested} (${e.compacted})`),
  };
  if (o.continue && !watch) {
    if (rv && rv !== "0") throw errors.badRequest("specifying resource version is not allowed when using continue");
    const token = decodeContinue(o.continue, namespace);
    // rv -1 is the token handed out with an expired one: continue at the latest state.
    if (token.revision > 0) plan.exactRevision = token.revision;
    plan.after = token.after;
    plan.expired = () => {
      const gone = errors.gone(CONTINUE_EXPIRED);
      gone.status.metadata = { continue: encodeContinue(-1, token.after, namespace) };
      return gone;
    };
    return plan;
  }
  if (watch) {
    // Unset or "0": the current state first (synthetic ADDED events), unless the client opts out.
    plan.initialEvents = revision === undefined ? o.sendInitialEvents !== false : o.sendInitialEvents === true;
    if (revision !== undefined) {
      if (plan.initialEvents) plan.minRevision = revision;
      else plan.startRevision = revision;
    }
    return plan;
  }
  if (revision !== undefined) {
    // Without a match rule, a paged list at N reads exactly N (Kubernetes' legacy semantics).
    if (match === "Exact" || (!match && plan.limit)) plan.exactRevision = revision;
    plan.minRevision = revision;
  }
  return plan;
}
