// The patch types the apiserver accepts before strategic merge and apply arrive.
import fastJsonPatch from "fast-json-patch";
import { StatusError, errors, failure } from "../errors.js";
import { cloneJson } from "../values/clone.js";

export const patchTypes = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
  applyCbor: "application/apply-patch+cbor",
} as const;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

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

/** Kubernetes' maxJSONPatchOperations: a longer patch is a 413. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/**
 * Kubernetes' JSONPatchMaxCopyBytes: what all `copy` operations of one patch may add, in bytes of JSON.
 * Without it a kilobyte of copies doubling a subtree grows the object exponentially.
 */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

/**
 * Array elements a patch's inserts and removals may shift in all: each costs the length of the array it
 * edits. Kubernetes has no such bound; without it ten thousand inserts at the head of a million-element
 * array hold the server for seconds. Within it a patch runs in tens of milliseconds.
 */
export const MAX_JSON_PATCH_SHIFTED_ELEMENTS = 64 * 1024 * 1024;

/** RFC 6902 JSON patch (including `test`); a failed or malformed operation is a 422 as in Kubernetes. */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) {
    throw errors.badRequest("json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp");
  }
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw errors.tooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`);
  }
  let document = cloneJson(target);
  let copied = 0;
  let shifted = 0;
  try {
    for (const [index, operation] of (patch as fastJsonPatch.Operation[]).entries()) {
      shifted += shiftCost(document, operation);
      if (shifted > MAX_JSON_PATCH_SHIFTED_ELEMENTS) {
        throw limitExceeded(
          `Unable to complete the patch, its operations shift more than ${MAX_JSON_PATCH_SHIFTED_ELEMENTS} array elements`,
        );
      }
      if (operation?.op === "copy") {
        copied += copySize(document, operation.from);
        if (copied > MAX_JSON_PATCH_COPY_BYTES) {
          throw limitExceeded(
            `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MAX_JSON_PATCH_COPY_BYTES}`,
          );
        }
      }
      document = fastJsonPatch.applyOperation(document, operation, true, true, true, index).newDocument;
    }
    return document;
  } catch (e) {
    if (e instanceof StatusError) throw e;
    const err = e as { name?: string; message?: string };
    const message = (err.message ?? String(e)).split("\n")[0];
    if (err.name === "TEST_OPERATION_FAILED") {
      throw errors.invalidPatch("the server rejected our request due to an error in our request: test operation failed");
    }
    throw errors.invalidPatch(message ?? "invalid patch");
  }
}

/**
 * Kubernetes words a failed patch as a generic 422; a patch refused for the work it would do also says
 * which limit it met, as the one cause.
 */
const limitExceeded = (message: string) =>
  failure(422, "Invalid", "the server rejected our request due to an error in our request", { causes: [{ message }] });

/** The JSON size of what a `copy` from `from` adds; 0 when `from` names nothing (the operation then fails). */
function copySize(document: unknown, from: unknown): number {
  const value = valueAt(document, from);
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/** The length of each array an operation inserts into or removes from. */
function shiftCost(document: unknown, operation: Partial<fastJsonPatch.Operation> | undefined): number {
  const lengthAt = (pointer: unknown) => {
    if (typeof pointer !== "string") return 0;
    const parent = valueAt(document, pointer.slice(0, pointer.lastIndexOf("/")));
    return Array.isArray(parent) ? parent.length : 0;
  };
  switch (operation?.op) {
    case "add":
    case "remove":
    case "copy":
      return lengthAt(operation.path);
    case "move":
      return lengthAt(operation.path) + lengthAt((operation as { from?: unknown }).from);
    default:
      return 0;
  }
}

function valueAt(document: unknown, pointer: unknown): unknown {
  if (typeof pointer !== "string") return undefined;
  try {
    return fastJsonPatch.getValueByPointer(document, pointer);
  } catch {
    return undefined;
  }
}
