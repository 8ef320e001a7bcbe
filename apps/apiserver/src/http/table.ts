// Server-side printing (meta.k8s.io/v1 Table), which `kubectl get` asks for.
import type { ObjectHeader } from "@orch/api";
import { humanDuration } from "@orch/machinery";
import { memberText } from "@orch/machinery/serializer";
import type { KindDefinition } from "@orch/registry";
import { jsonBytes, openArrayMember } from "./respond.js";

export { humanDuration };

export const age = (obj: ObjectHeader): string => {
  const created = obj.metadata.creationTimestamp;
  return created ? humanDuration(Date.now() - Date.parse(created)) : "<unknown>";
};

/** The Name column comes first unless the kind places its own (Kubernetes' Events print it last, wide only). */
const ownsNameColumn = (kind: KindDefinition): boolean => !kind.custom && kind.printerColumns.some((c) => c.format === "name");

function columnDefinitions(kind: KindDefinition) {
  return [
    ...(ownsNameColumn(kind)
      ? []
      : [{ name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 }]),
    ...kind.printerColumns.map((c) => ({
      name: c.name,
      type: c.type === "date" && !kind.custom ? "string" : c.type,
      format: c.format ?? "",
      description: c.description ?? "",
      priority: c.priority ?? 0,
    })),
  ];
}

function cell(value: unknown, type: string): unknown {
  if (value === undefined || value === null) return type === "date" ? "<unknown>" : "<none>";
  if (type === "date" && typeof value === "string") return humanDuration(Date.now() - Date.parse(value));
  if (Array.isArray(value)) return value.join(",");
  if (typeof value === "object") return JSON.stringify(value);
  return value;
}

/**
 * An object (its stored JSON text) reduced to its metadata, as `as=PartialObjectMetadata` and a Table's
 * `includeObject=Metadata` send it: the metadata's text spliced as it is, not parsed and serialized again.
 */
export function partialObjectMetadata(text: string): string {
  const metadata = memberText(text, "metadata") ?? JSON.stringify((JSON.parse(text) as ObjectHeader).metadata);
  return `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":${metadata}}`;
}

/** One object's row, as JSON text: its cells, and the object or its metadata as `includeObject` asks. */
function row(kind: KindDefinition, text: string, includeObject: string): { json: string; object: ObjectHeader } {
  const object = JSON.parse(text) as ObjectHeader;
  // A custom resource's columns give finished cells; what is missing is null, as Kubernetes sends it.
  const cells = JSON.stringify([
    ...(ownsNameColumn(kind) ? [] : [object.metadata.name]),
    ...kind.printerColumns.map((c) => (kind.custom ? (c.value(object) ?? null) : cell(c.value(object), c.type))),
  ]);
  if (includeObject === "None") return { json: `{"cells":${cells}}`, object };
  const shown = includeObject === "Object" ? text : partialObjectMetadata(text);
  return { json: `{"cells":${cells},"object":${shown}}`, object };
}

/** A Table without its rows. */
const tableEnvelope = (kind: KindDefinition, listMeta: Record<string, unknown>) => ({
  kind: "Table",
  apiVersion: "meta.k8s.io/v1",
  metadata: listMeta,
  columnDefinitions: columnDefinitions(kind),
});

/** A list's Table, from the stored JSON of its objects, as bytes (see `jsonBytes`). */
export function listTable(
  kind: KindDefinition,
  texts: readonly string[],
  listMeta: Record<string, unknown>,
  includeObject = "Metadata",
): Buffer {
  return jsonBytes(
    tableEnvelope(kind, listMeta),
    "rows",
    texts.map((text) => row(kind, text, includeObject).json),
  );
}

/** One object's Table (a get, a write's answer, a watch event), as JSON text. */
export function objectTable(kind: KindDefinition, text: string, includeObject = "Metadata"): string {
  const { json, object } = row(kind, text, includeObject);
  return `${openArrayMember(tableEnvelope(kind, { resourceVersion: object.metadata.resourceVersion }), "rows")}${json}]}`;
}
