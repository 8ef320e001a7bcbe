// Query parameters and option bodies of the resource verbs, parsed and validated as Kubernetes does.
import { errors, fieldError } from "@orch/machinery";
import { managerOrUserAgent, validateFieldManager } from "@orch/fieldmanager";
import type { DeleteOptions, FieldValidation, ListOptions } from "@orch/registry";
import { parseBody } from "../negotiation.js";
import { queryBool, queryInt64 } from "../query.js";
import { readText } from "./body.js";
import type { IncomingRequest } from "./request.js";

/**
 * ListOptions from the query, for list, watch and deletecollection alike: Kubernetes decodes all of
 * them on each, so a bad `timeoutSeconds` is a 400 on a list too.
 */
export function listOptions(req: IncomingRequest): ListOptions & { timeoutSeconds?: number } {
  const q = req.query;
  return {
    namespace: req.info.namespace || undefined,
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
    limit: queryInt64(q, "limit"),
    continue: q.get("continue") ?? undefined,
    resourceVersion: q.get("resourceVersion") ?? undefined,
    resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined,
    sendInitialEvents: queryBool(q, "sendInitialEvents"),
    allowWatchBookmarks: queryBool(q, "allowWatchBookmarks"),
    timeoutSeconds: queryInt64(q, "timeoutSeconds"),
    signal: req.ctx.signal,
  };
}

/** Create, update and patch options; `leading` are the patch type's own errors, reported first. */
export function writeOptions(req: IncomingRequest, kindName: string, leading: ReturnType<typeof validateFieldManager> = []) {
  const dryRun = req.query.getAll("dryRun");
  const fieldValidation = req.query.get("fieldValidation") ?? "";
  const fieldManager = req.query.get("fieldManager") ?? "";
  const errs = [...leading, ...validateFieldManager(fieldManager, "fieldManager")];
  if (dryRun.some((d) => d !== "All")) {
    errs.push({ type: "FieldValueNotSupported" as const, field: "dryRun", value: dryRun, detail: 'supported values: "All"' });
  }
  if (!["", "Ignore", "Warn", "Strict"].includes(fieldValidation)) {
    errs.push({
      type: "FieldValueNotSupported" as const,
      field: "fieldValidation",
      value: fieldValidation,
      detail: 'supported values: "", "Ignore", "Strict", "Warn"',
    });
  }
  if (errs.length > 0) throw errors.invalid({ group: "meta.k8s.io", kind: kindName }, "", errs);
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: (fieldValidation || "Warn") as FieldValidation,
    fieldManager: managerOrUserAgent(fieldManager, req.headers.get("user-agent") ?? undefined),
  };
}

/** ValidatePatchOptions' first rules: `force` only for apply, which needs a fieldManager. */
export function patchOptionErrors(req: IncomingRequest, applying: boolean) {
  if (!applying) return forceGiven(req) ? [fieldError.forbidden("force", "may not be specified for non-apply patch")] : [];
  return req.query.get("fieldManager") ? [] : [fieldError.required("fieldManager", "is required for apply patch")];
}

/** Whether force was given: PatchOptions.Force is a pointer, so `force=false` is given too. */
export const forceGiven = (req: IncomingRequest) => queryBool(req.query, "force") !== undefined;
export const forceRequested = (req: IncomingRequest) => queryBool(req.query, "force") === true;

/**
 * DeleteOptions from the body when there is one, else from the query: Kubernetes' delete handler reads
 * one or the other, never both.
 */
export async function deleteOptions(req: IncomingRequest): Promise<{ options: DeleteOptions; dryRun: boolean }> {
  const text = await readText(req);
  const body = text.trim() ? deleteOptionsBody(req, text) : deleteOptionsQuery(req.query);
  const dryRunValues = (body.dryRun as string[] | undefined) ?? [];
  if (dryRunValues.some((d) => d !== "All")) {
    throw errors.invalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", [
      { type: "FieldValueNotSupported", field: "dryRun", value: dryRunValues, detail: 'supported values: "All"' },
    ]);
  }
  const options: DeleteOptions = {
    gracePeriodSeconds: body.gracePeriodSeconds as number | undefined,
    propagationPolicy: body.propagationPolicy as string | undefined,
    orphanDependents: body.orphanDependents as boolean | undefined,
    preconditions: body.preconditions as DeleteOptions["preconditions"],
  };
  return { options, dryRun: dryRunValues.length > 0 };
}

function deleteOptionsBody(req: IncomingRequest, text: string): Record<string, unknown> {
  const parsed = parseBody(text, req.headers.get("content-type") ?? undefined).value;
  if (typeof parsed !== "object" || parsed === null) throw errors.badRequest("decoded object cannot be converted to DeleteOptions");
  const body = parsed as Record<string, unknown>;
  if (body.kind !== undefined && body.kind !== "DeleteOptions") {
    throw errors.badRequest("decoded object cannot be converted to DeleteOptions");
  }
  return body;
}

/** The DeleteOptions a query spells, with Kubernetes' conversions (preconditions have no query form). */
function deleteOptionsQuery(q: URLSearchParams): Record<string, unknown> {
  return {
    gracePeriodSeconds: queryInt64(q, "gracePeriodSeconds"),
    propagationPolicy: q.get("propagationPolicy") ?? undefined,
    orphanDependents: queryBool(q, "orphanDependents"),
    dryRun: q.getAll("dryRun"),
  };
}
