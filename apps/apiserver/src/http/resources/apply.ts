// Server-side apply (`application/apply-patch+yaml`, YAML or JSON): the configuration is merged into the
// object for its field manager — created when missing — with conflicts unless `force`.
import type { ObjectHeader } from "@orch/api";
import { applyConfiguration } from "@orch/fieldmanager";
import { cloneJson, errors, patchTypes } from "@orch/machinery";
import { apiVersionOf, kindShape } from "@orch/registry";
import { parseBody } from "../negotiation.js";
import { readText } from "./body.js";
import { forceRequested, patchOptionErrors, writeOptions } from "./options.js";
import { renderWritten } from "./render.js";
import type { VerbHandler } from "./request.js";

export const apply: VerbHandler = async ({ req, kind, store, format, namespace, ok }) => {
  const { info, ctx } = req;
  const options = { ...writeOptions(req, "PatchOptions", patchOptionErrors(req, true)), apply: true };
  const body = parseBody(await readText(req), patchTypes.apply);
  if (typeof body.value !== "object" || body.value === null || Array.isArray(body.value)) {
    throw errors.badRequest("error decoding patch: expected an object");
  }
  const duplicates = (body.duplicates ?? []).map((f) => `duplicate field "${f}"`);
  if (duplicates.length > 0 && options.fieldValidation === "Strict") {
    throw errors.badRequest(`error strict decoding patch: ${duplicates.join(", ")}`);
  }
  if (options.fieldValidation === "Warn") ctx.warnings.push(...duplicates);
  const config = body.value as ObjectHeader;
  const subresource = info.subresource || undefined;
  const intent = {
    manager: options.fieldManager,
    apiVersion: apiVersionOf(kind),
    kind: kind.kind,
    ...(subresource ? { subresource } : {}),
    force: forceRequested(req),
    hasStatusSubresource: kind.subresources.status !== undefined,
  };
  const result = await store.update(namespace, info.name, subresource, ctx, options, (current) => {
    const applied = applyConfiguration(current, cloneJson(config), kindShape(kind), intent);
    return store.decode({ value: applied }, ctx, options);
  });
  return ok(result.code, renderWritten(kind, result, format));
};
