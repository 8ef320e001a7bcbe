// get and list.
import { apiVersionOf } from "@orch/registry";
import { jsonBytes } from "../respond.js";
import { listTable, partialObjectMetadata } from "../table.js";
import { listOptions } from "./options.js";
import { renderObject } from "./render.js";
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
  const texts = result.items.map((item) => item.value);
  if (format.as === "Table") return ok(200, listTable(kind, texts, listMeta, format.includeObject));
  if (format.as) {
    const items = texts.map((text) => partialObjectMetadata(text));
    return ok(200, jsonBytes({ kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1", metadata: listMeta }, "items", items));
  }
  return ok(200, jsonBytes({ kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata: listMeta }, "items", texts));
};
