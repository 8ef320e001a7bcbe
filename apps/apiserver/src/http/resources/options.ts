// Query parameters and option bodies of the resource verbs, parsed and validated as Kubernetes does.
import { errors, fieldError } from "@orch/machinery";
import { managerOrUserAgent, validateFieldManager } from "@orch/fieldmanager";
import type { DeleteOptions, FieldValidation, ListOptions } from "@orch/registry";
import { parseBody } from "../negotiation.js";
import { readText } from "./body.js";
import type { IncomingRequest } from "./request.js";

export const bool = (v: string | null) => (v === null ? undefined : v === "true" || v === "1");

export function int(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === "") return undefined;
  if (!/^-?\d+$/.test(v))
    throw errors.badRequest(`invalid value for ${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

export function listOptions(req: IncomingRequest): ListOptions {
  const q = req.query;
  return {
    namespace: req.info.namespace || undefined,
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
    limit: int(q, "limit"),
    continue: q.get("continue") ?? undefined,
    resourceVersion: q.get("resourceVersion") ?? undefined,
    resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined,
    sendInitialEvents: bool(q.get("sendInitialEvents")),
    allowWatchBookmarks: bool(q.get("allowWatchBookmarks")),
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
  if (!applying) return req.query.has("force") ? [fieldError.forbidden("force", "may not be specified for non-apply patch")] : [];
  return req.query.get("fieldManager") ? [] : [fieldError.required("fieldManager", "is required for apply patch")];
}

/** DeleteOptions from the body (if any) or the query; the body wins. */
export async function deleteOptions(req: IncomingRequest): Promise<{ options: DeleteOptions; dryRun: boolean }> {
  const q = req.query;
  const text = await readText(req);
  let body: Record<string, unknown> = {};
  if (text.trim()) {
    const parsed = parseBody(text, req.headers.get("content-type") ?? undefined).value;
    if (typeof parsed !== "object" || parsed === null) throw errors.badRequest("decoded object cannot be converted to DeleteOptions");
    body = parsed as Record<string, unknown>;
    if (body.kind !== undefined && body.kind !== "DeleteOptions") {
      throw errors.badRequest("decoded object cannot be converted to DeleteOptions");
    }
  }
  const dryRunValues = (body.dryRun as string[] | undefined) ?? q.getAll("dryRun");
  if (dryRunValues.some((d) => d !== "All")) {
    throw errors.invalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", [
      { type: "FieldValueNotSupported", field: "dryRun", value: dryRunValues, detail: 'supported values: "All"' },
    ]);
  }
  const options: DeleteOptions = {
    gracePeriodSeconds: (body.gracePeriodSeconds as number | undefined) ?? int(q, "gracePeriodSeconds"),
    propagationPolicy: (body.propagationPolicy as string | undefined) ?? q.get("propagationPolicy") ?? undefined,
    orphanDependents: (body.orphanDependents as boolean | undefined) ?? bool(q.get("orphanDependents")),
    preconditions: body.preconditions as DeleteOptions["preconditions"],
  };
  return { options, dryRun: dryRunValues.length > 0 };
}
