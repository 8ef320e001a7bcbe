// The patch types the apiserver accepts before strategic merge and apply arrive.
import fastJsonPatch from "fast-json-patch";
import { errors } from "./errors.js";

export const patchTypes = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
  applyCbor: "application/apply-patch+cbor",
} as const;

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/** RFC 7386 JSON merge patch: objects merge recursively, `null` removes, everything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** RFC 6902 JSON patch (including `test`); a failed or malformed operation is a 422 as in Kubernetes. */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) {
    throw errors.badRequest("json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp");
  }
  try {
    return fastJsonPatch.applyPatch(structuredClone(target), patch as fastJsonPatch.Operation[], true, true)
      .newDocument;
  } catch (e) {
    const err = e as { name?: string; message?: string };
    const message = (err.message ?? String(e)).split("\n")[0];
    if (err.name === "TEST_OPERATION_FAILED") {
      throw errors.invalidPatch("the server rejected our request due to an error in our request: test operation failed");
    }
    throw errors.invalidPatch(message ?? "invalid patch");
  }
}
