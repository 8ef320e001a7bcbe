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
  // The stored JSON goes out as is: no parse and re-serialize of every item.
  const head = JSON.stringify({ kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata: listMeta });
  return ok(200, `${head.slice(0, -1)},"items":[${result.items.map((i) => i.value).join(",")}]}`);
};
