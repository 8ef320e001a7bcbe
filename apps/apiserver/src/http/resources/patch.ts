// JSON, merge and strategic merge patches (server-side apply is apply.ts): the patch is read once and
// applied to the current object inside the store's update, so a retried update patches the new state.
import {
  type Shape,
  StatusError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  errors,
  failure,
  fieldError,
  parseStrategicMergePatch,
  patchTypes,
} from "@orch/machinery";
import { TooDeepError, decodeJson } from "@orch/machinery/serializer";
import { type KindDefinition, StrictDecodingError, kindShape } from "@orch/registry";
import { parseMediaType } from "../negotiation.js";
import { apply } from "./apply.js";
import { readText } from "./body.js";
import { patchOptionErrors, writeOptions } from "./options.js";
import { renderWritten } from "./render.js";
import type { IncomingRequest, VerbHandler } from "./request.js";

export const patch: VerbHandler = async (r) => {
  const { req, kind, store, format, namespace, ok } = r;
  if (parseMediaType(req.headers.get("content-type") ?? "").type === patchTypes.apply) return apply(r);
  const { info, ctx } = req;
  const options = writeOptions(req, "PatchOptions", patchOptionErrors(req, false));
  const patcher = await readPatch(req, kind, kindShape(kind));
  const result = await store.update(namespace, info.name, info.subresource || undefined, ctx, options, (current) => {
    if (!current) throw errors.notFound({ group: kind.group, resource: kind.plural }, info.name);
    const patched = patcher(current);
    try {
      return store.decode({ value: patched }, ctx, options);
    } catch (e) {
      if (e instanceof StrictDecodingError) throw strictPatchError(patched, e.problems);
      throw e;
    }
  });
  return ok(result.code, renderWritten(kind, result, format));
};

/** Strict field validation of a patch: 422 on the patched document, with an empty kind and name. */
function strictPatchError(patched: unknown, problems: readonly string[]): StatusError {
  const err = errors.invalid({ group: "", kind: "" }, "", [
    fieldError.invalid("patch", JSON.stringify(patched), `strict decoding error: ${problems.join(", ")}`),
  ]);
  const { name: _n, kind: _k, ...details } = err.status.details ?? {};
  err.status.details = details;
  return err;
}

/** Reads a patch body; the result applies it to a document of `shape` (the kind's, or a Scale's). */
export async function readPatch(req: IncomingRequest, kind: KindDefinition, shape: Shape): Promise<(target: unknown) => unknown> {
  const type = parseMediaType(req.headers.get("content-type") ?? "").type;
  // Custom resources take no strategic merge patch (415), as Kubernetes' custom resource handler.
  const strategic = kind.custom ? undefined : (target: unknown, patch: unknown) => applyStrategicMergePatch(target, patch, shape);
  const applyPatch =
    type === patchTypes.merge
      ? applyMergePatch
      : type === patchTypes.json
        ? applyJsonPatch
        : type === patchTypes.strategic
          ? strategic
          : undefined;
  if (!applyPatch) {
    const accepted = kind.custom ? [patchTypes.json, patchTypes.merge] : [patchTypes.json, patchTypes.merge, patchTypes.strategic];
    throw errors.unsupportedMediaType([...accepted, patchTypes.apply]);
  }
  const text = await readText(req);
  let patch: unknown;
  try {
    patch = type === patchTypes.strategic ? parseStrategicMergePatch(text) : decodeJson(text);
  } catch (e) {
    if (e instanceof StatusError) throw e;
    if (e instanceof TooDeepError) throw errors.badRequest(e.message);
    throw errors.badRequest(type === patchTypes.json ? "invalid JSON patch" : "Invalid JSON Patch");
  }
  return (target) => {
    try {
      return applyPatch(target, patch);
    } catch (e) {
      // Kubernetes discards the patch library's text: a generic 422 with empty details. A patch refused
      // for its size keeps the limit it met as its cause.
      if (e instanceof StatusError && e.code === 422 && !e.status.details?.causes) {
        throw failure(422, "Invalid", "the server rejected our request due to an error in our request", {});
      }
      throw e;
    }
  };
}
