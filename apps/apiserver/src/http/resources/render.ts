// Objects as the client asked for them: the stored JSON as is, a Table, or PartialObjectMetadata.
import type { ObjectHeader } from "@orch/api";
import type { KindDefinition, WriteResult } from "@orch/registry";
import type { ResponseFormat } from "../negotiation.js";
import { partialObjectMetadata, toTable } from "../table.js";

export const parseObjects = (items: { value: string }[]): ObjectHeader[] => items.map((i) => JSON.parse(i.value) as ObjectHeader);

/** Renders one object (as stored, JSON text) for the negotiated format. */
export function renderObject(kind: KindDefinition, text: string, format: ResponseFormat): unknown {
  if (!format.as) return text;
  const obj = JSON.parse(text) as ObjectHeader;
  if (format.as === "Table") return toTable(kind, [obj], { resourceVersion: obj.metadata.resourceVersion }, format.includeObject);
  return partialObjectMetadata(obj);
}

/** A write's object, from the JSON the write already made of it when there is one. */
export const renderWritten = (kind: KindDefinition, result: WriteResult, format: ResponseFormat): unknown =>
  renderObject(kind, result.text ?? JSON.stringify(result.object), format);
