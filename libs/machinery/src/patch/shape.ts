// The shape of a kind's data as the merge algorithms need it: which members an object has, how a list
// merges (atomic, set, map by keys) and how a strategic merge patch treats it. Built-in kinds derive it
// from their valibot schemas (@orch/api `shapeOf`), custom resources from their structural schema, so
// strategic merge, server-side apply and managed fields walk one description.

export type ListType = "atomic" | "set" | "map";
export type PatchStrategy = "merge" | "replace" | "retainKeys" | "merge,retainKeys";

export type Shape = ObjectShape | ListShape | MapShape | ScalarShape | UntypedShape;

/** A struct: named members. `field` answers undefined for a member the schema does not know. */
export interface ObjectShape {
  kind: "object";
  field(name: string): Shape | undefined;
  /** `atomic`: replaced whole by apply and merge (x-*-map-type: atomic). Default granular. */
  mapType?: "atomic" | "granular";
  /** Kubernetes' `patchStrategy=retainKeys` on a struct (a Deployment's `spec.strategy`). */
  retainKeys?: boolean;
  /** Members beyond the named ones are kept (x-*-preserve-unknown-fields); they are untyped. */
  preserveUnknown?: boolean;
  /** A member's schema default, if any: apply identifies list-map items that omit a defaulted key by it. */
  defaultOf?(name: string): unknown;
}

/** A list; its semantics drive apply (`listType`) and strategic merge (`patchStrategy`). */
export interface ListShape {
  kind: "list";
  item: Shape;
  listType: ListType;
  /** For `listType: map`: the members identifying an item. */
  listMapKeys?: readonly string[];
  /** Strategic merge's strategy when it differs from what `listType` implies. */
  patchStrategy?: PatchStrategy;
  patchMergeKey?: string;
}

/** A map from arbitrary string keys to values of one shape (Go map, additionalProperties). */
export interface MapShape {
  kind: "map";
  value: Shape;
  mapType?: "atomic" | "granular";
}

export interface ScalarShape {
  kind: "scalar";
}

/** Anything (RawExtension, preserved unknown fields): merged as JSON, owned as a whole by apply. */
export interface UntypedShape {
  kind: "untyped";
}

export const scalarShape: ScalarShape = { kind: "scalar" };
export const untypedShape: UntypedShape = { kind: "untyped" };

/** The shape of `name` inside an object or map shape; untyped where the shape says nothing. */
export function memberShape(shape: Shape, name: string): Shape {
  if (shape.kind === "object") return shape.field(name) ?? untypedShape;
  if (shape.kind === "map") return shape.value;
  return untypedShape;
}

/** Strategic merge's effective strategy for a list: Kubernetes' tag, else what its list type means. */
export function listPatchStrategy(list: ListShape): { merge: boolean; retainKeys: boolean; mergeKey?: string } {
  const strategy = list.patchStrategy ?? (list.listType === "atomic" ? "replace" : "merge");
  const merge = strategy.includes("merge");
  const mergeKey = list.patchMergeKey ?? list.listMapKeys?.[0];
  return { merge, retainKeys: strategy.includes("retainKeys"), ...(merge && mergeKey ? { mergeKey } : {}) };
}
