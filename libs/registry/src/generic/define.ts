// Shared pieces for declaring kinds: `defineKind` (defaults for the declaration, the kind's object type
// from its schema) and the usual status subresource.
import type { AnySchema, ObjectHeader } from "@orch/api";
import { type LabelSelectorObject, labelSelectorFromObject, labelSelectorFromSet, labelSelectorString } from "@orch/machinery";
import type {
  ActionSubresource,
  KindDefinition,
  KindObject,
  PrinterColumn,
  ScaleMapping,
  Strategy,
  SubresourceStrategy,
  Verb,
} from "./kind.js";
import { readPath } from "./json-path.js";

export const ALL_VERBS: readonly Verb[] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

type Required = "group" | "version" | "kind" | "plural" | "namespaced" | "schema";

/** What a kind file writes: the required declaration and whatever else differs from the defaults. */
export type KindSpec<T extends ObjectHeader = ObjectHeader, S extends AnySchema = AnySchema> = Pick<
  KindDefinition<T>,
  Exclude<Required, "schema">
> &
  Partial<Omit<KindDefinition<T>, Required | "actions">> & {
    schema: S;
    /** Each action decodes a request type of its own: `never` admits them all. */
    actions?: Readonly<Record<string, ActionSubresource<T, never>>>;
  };

/**
 * A kind from its spec. Its object type `T` comes from the schema (`v.InferOutput`), so the strategy,
 * subresources, columns and selectable fields are written against the kind's own type.
 */
export function defineKind<S extends AnySchema>(spec: KindSpec<KindObject<S>, S>): KindDefinition {
  const kind: Omit<KindDefinition<KindObject<S>>, "actions"> & Pick<KindSpec<KindObject<S>, S>, "actions"> = {
    listKind: `${spec.kind}List`,
    singular: spec.kind.toLowerCase(),
    shortNames: [],
    categories: [],
    strategy: {},
    subresources: {},
    selectableFields: {},
    printerColumns: [AGE],
    verbs: ALL_VERBS,
    ...spec,
  };
  // The one widening of a kind's type: the registry and the store hold kinds of every type as
  // KindDefinition<ObjectHeader>, so the hooks typed with T are kept as hooks of any object (and each
  // action's request type as any object). Sound as the store uses them: it gives a kind's hooks only
  // objects its schema decoded (the request body, or the stored object, decoded when it was written),
  // and an action's hooks only the request its own schema decoded.
  return kind as KindDefinition;
}

export const AGE: PrinterColumn = {
  name: "Age",
  type: "date",
  value: (o) => o.metadata.creationTimestamp,
  description:
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.",
};

/** `a=b,c=d` as Kubernetes prints a label map, `<none>` when empty. */
export function formatLabels(labels: unknown): string {
  const entries = Object.entries((labels as Record<string, string> | undefined) ?? {});
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${v}`).join(",");
}

/** A metav1 LabelSelector as Kubernetes prints it. */
export function formatSelector(selector: unknown): string {
  const s = selector as
    | { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }
    | undefined;
  const parts = Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s?.matchExpressions ?? []) {
    const op = e.operator.toLowerCase();
    if (op === "exists") parts.push(e.key);
    else if (op === "doesnotexist") parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${op} (${(e.values ?? []).join(",")})`);
  }
  return parts.length ? parts.join(",") : "<none>";
}

/** `/scale` of a kind with `spec.replicas` and `status.replicas`; `selector` renders its label selector. */
export const replicasScale = (selector: (o: ObjectHeader) => string | undefined): ScaleMapping => ({
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
  selector,
});

/** A metav1 LabelSelector as a Scale carries it (`app=web,tier in (a,b)`). */
export const selectorString = (selector: unknown): string =>
  labelSelectorString(labelSelectorFromObject(selector as LabelSelectorObject | undefined));

/** Reads a dotted path (`status.readyReplicas`) from an object. */
export const at = readPath;

export const column = (name: string, type: PrinterColumn["type"], value: (o: ObjectHeader) => unknown, priority = 0): PrinterColumn => ({
  name,
  type,
  value,
  priority,
});

/**
 * The main endpoint of a kind with a `status` subresource ignores status (create starts without
 * one); `/status` changes nothing but status (and managedFields).
 */
export function statusSubresource<T extends ObjectHeader>(
  main: Strategy<T> = {},
  initialStatus?: (o: T) => unknown,
): { strategy: Strategy<T>; status: SubresourceStrategy<T> } {
  // Status is any object's field here: the type of `T`'s own status does not matter.
  const statusOf = (o: ObjectHeader) => o;
  const strategy: Strategy<T> = {
    ...main,
    prepareForCreate(obj, ctx) {
      if (initialStatus) statusOf(obj).status = initialStatus(obj);
      else delete statusOf(obj).status;
      main.prepareForCreate?.(obj, ctx);
    },
    prepareForUpdate(obj, old, ctx) {
      if (old.status === undefined) delete statusOf(obj).status;
      else statusOf(obj).status = old.status;
      main.prepareForUpdate?.(obj, old, ctx);
    },
  };
  const status: SubresourceStrategy<T> = {
    prepareForUpdate(o, old) {
      const obj: ObjectHeader = o;
      const status = obj.status;
      const managedFields = obj.metadata.managedFields;
      const resourceVersion = obj.metadata.resourceVersion;
      for (const key of Object.keys(obj)) delete obj[key];
      // The rest shares the current object's values, as the main endpoint shares its status: nothing
      // after this changes them in place, and the current object is the request's own parse. Metadata is
      // a copy of its own, since its fields are set next (and by the kinds that keep some of the request's).
      Object.assign(obj, old, { metadata: { ...old.metadata } });
      if (status === undefined) delete obj.status;
      else obj.status = status;
      obj.metadata.resourceVersion = resourceVersion;
      if (managedFields) obj.metadata.managedFields = managedFields;
    },
  };
  return { strategy, status };
}

/** `a/b` from `spec.replicas` and `status.readyReplicas` for the READY column. */
export const readyOf = (o: ObjectHeader) => `${at(o, "status.readyReplicas") ?? 0}/${at(o, "spec.replicas") ?? 0}`;

export const containerNames = (o: ObjectHeader) =>
  ((at(o, "spec.template.spec.containers") as { name?: string }[] | undefined) ?? []).map((c) => c.name).join(",");
export const containerImages = (o: ObjectHeader) =>
  ((at(o, "spec.template.spec.containers") as { image?: string }[] | undefined) ?? []).map((c) => c.image).join(",");

/** The columns Kubernetes prints for replica-managing kinds (ReplicaSet, ReplicationController). */
export const replicaColumns = (selector: (o: ObjectHeader) => string): PrinterColumn[] => [
  column("Desired", "integer", (o) => at(o, "spec.replicas") ?? 0),
  column("Current", "integer", (o) => at(o, "status.replicas") ?? 0),
  column("Ready", "integer", (o) => at(o, "status.readyReplicas") ?? 0),
  AGE,
  column("Containers", "string", containerNames, 1),
  column("Images", "string", containerImages, 1),
  column("Selector", "string", selector, 1),
];

/** A replication controller's selector map as a Scale carries it. */
export const setSelectorString = (selector: unknown): string =>
  labelSelectorString(labelSelectorFromSet((selector as Record<string, string> | undefined) ?? {}));
