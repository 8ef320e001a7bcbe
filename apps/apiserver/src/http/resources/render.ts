// Objects as the client asked for them: the stored JSON as is, a Table, or PartialObjectMetadata.
import type { KindDefinition, WriteResult } from "@orch/registry";
import type { ResponseFormat } from "../negotiation.js";
import { objectTable, partialObjectMetadata } from "../table.js";

/** Renders one object (as stored, JSON text) for the negotiated format. */
export function renderObject(kind: KindDefinition, text: string, format: ResponseFormat): string {
  if (!format.as) return text;
  if (format.as === "Table") return objectTable(kind, text, format.includeObject);
  return partialObjectMetadata(text);
}

/** A write's object, from the JSON the write already made of it when there is one. */
export const renderWritten = (kind: KindDefinition, result: WriteResult, format: ResponseFormat): string =>
  renderObject(kind, result.text ?? JSON.stringify(result.object), format);
