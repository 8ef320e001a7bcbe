// Server-side printing (meta.k8s.io/v1 Table), which `kubectl get` asks for.
import type { ObjectHeader } from "@orch/api";
import { humanDuration } from "@orch/machinery";
import type { KindDefinition } from "@orch/registry";

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

/** An object reduced to its metadata, as `as=PartialObjectMetadata` and a Table's `includeObject=Metadata` send it. */
export const partialObjectMetadata = (obj: ObjectHeader) => ({
  kind: "PartialObjectMetadata",
  apiVersion: "meta.k8s.io/v1",
  metadata: obj.metadata,
});

function row(kind: KindDefinition, obj: ObjectHeader, includeObject: string) {
  // A custom resource's columns give finished cells; what is missing is null, as Kubernetes sends it.
  const cells = [
    ...(ownsNameColumn(kind) ? [] : [obj.metadata.name]),
    ...kind.printerColumns.map((c) => (kind.custom ? (c.value(obj) ?? null) : cell(c.value(obj), c.type))),
  ];
  const out: Record<string, unknown> = { cells };
  if (includeObject === "Object") out.object = obj;
  else if (includeObject !== "None") {
    out.object = partialObjectMetadata(obj);
  }
  return out;
}

export function toTable(
  kind: KindDefinition,
  objects: ObjectHeader[],
  listMeta: Record<string, unknown>,
  includeObject = "Metadata",
  withColumns = true,
) {
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta,
    ...(withColumns ? { columnDefinitions: columnDefinitions(kind) } : { columnDefinitions: null }),
    rows: objects.map((o) => row(kind, o, includeObject)),
  };
}
