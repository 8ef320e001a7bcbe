// get and list.
import { apiVersionOf } from "@orch/registry";
import { partialObjectMetadata, toTable } from "../table.js";
import { listOptions } from "./options.js";
import { parseObjects, renderObject } from "./render.js";
import type { VerbHandler } from "./request.js";

export const get: VerbHandler = async ({ req, kind, store, format, namespace, ok }) => {
  const stored = await store.get(namespace, req.info.name);
  return ok(200, renderObject(kind, stored.value, format));
};

export const list: VerbHandler = async ({ req, kind, store, format, ok }) => {
  const result = await store.list(listOptions(req));
  const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) listMeta.continue = result.continue;
  if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
  if (format.as === "Table") return ok(200, toTable(kind, parseObjects(result.items), listMeta, format.includeObject));
  if (format.as) {
    const items = parseObjects(result.items).map(partialObjectMetadata);
    return ok(200, { kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1", metadata: listMeta, items });
  }
  const head = JSON.stringify({ kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata: listMeta });
  return ok(200, listBytes(`${head.slice(0, -1)},"items":[`, result.items));
};

/**
 * The list as UTF-8, each stored item's JSON written into one buffer as it is: no parse and re-serialize
 * of every item, and no one large string (joining 10,000 items, then encoding the result, costs several
 * times more than writing each item once).
 */
function listBytes(head: string, items: readonly { value: string }[]): Buffer {
  // The head, the items with a comma between each two, and "]}".
  let length = Buffer.byteLength(head) + Math.max(items.length - 1, 0) + 2;
  for (const item of items) length += Buffer.byteLength(item.value);
  const bytes = Buffer.allocUnsafe(length);
  let at = bytes.write(head);
  items.forEach((item, i) => {
    if (i > 0) at = bytes.writeUInt8(COMMA, at);
    at += bytes.write(item.value, at);
  });
  bytes.write("]}", at);
  return bytes;
}

const COMMA = 0x2c;
