// metav1 types shared by every kind.
import * as v from "valibot";
import { atomicList, bool, int64, mapList, opt, rawJson, setList, str, stringMap, time } from "./schema.js";

export const OwnerReference = v.object({
  apiVersion: str(),
  kind: str(),
  name: str(),
  uid: str(),
  controller: opt(bool()),
  blockOwnerDeletion: opt(bool()),
});

export const ManagedFieldsEntry = v.object({
  manager: opt(str()),
  operation: opt(str()),
  apiVersion: opt(str()),
  time: opt(time()),
  fieldsType: opt(str()),
  fieldsV1: opt(rawJson()),
  subresource: opt(str()),
});

export const ObjectMeta = v.object({
  name: opt(str()),
  generateName: opt(str()),
  namespace: opt(str()),
  selfLink: opt(str()),
  uid: opt(str()),
  resourceVersion: opt(str()),
  generation: opt(int64()),
  creationTimestamp: opt(v.nullable(time())),
  deletionTimestamp: opt(time()),
  deletionGracePeriodSeconds: opt(int64()),
  labels: opt(stringMap()),
  annotations: opt(stringMap()),
  ownerReferences: opt(mapList(OwnerReference, ["uid"])),
  finalizers: opt(setList(str())),
  managedFields: opt(atomicList(ManagedFieldsEntry)),
});
export type ObjectMeta = v.InferOutput<typeof ObjectMeta>;

export const ListMeta = v.object({
  selfLink: opt(str()),
  resourceVersion: opt(str()),
  continue: opt(str()),
  remainingItemCount: opt(int64()),
});
export type ListMeta = v.InferOutput<typeof ListMeta>;

export const LabelSelectorRequirement = v.object({
  key: str(),
  operator: str(),
  values: opt(atomicList(str())),
});

export const LabelSelector = v.object({
  matchLabels: opt(stringMap()),
  matchExpressions: opt(atomicList(LabelSelectorRequirement)),
});
export type LabelSelector = v.InferOutput<typeof LabelSelector>;

export const LocalObjectReference = v.object({ name: opt(str()) });

export const ObjectReference = v.object({
  kind: opt(str()),
  namespace: opt(str()),
  name: opt(str()),
  uid: opt(str()),
  apiVersion: opt(str()),
  resourceVersion: opt(str()),
  fieldPath: opt(str()),
});

/** The common shape of `status.conditions[]` entries. */
export const Condition = v.object({
  type: str(),
  status: str(),
  observedGeneration: opt(int64()),
  lastTransitionTime: opt(time()),
  lastUpdateTime: opt(time()),
  lastHeartbeatTime: opt(time()),
  lastProbeTime: opt(time()),
  reason: opt(str()),
  message: opt(str()),
});

/** Every object: type metadata, object metadata and kind-specific fields. */
export const objectOf = <E extends v.ObjectEntries>(entries: E) =>
  v.object({ apiVersion: opt(str()), kind: opt(str()), metadata: opt(ObjectMeta, {}), ...entries });

/** The header of any object, enough for the generic machinery. */
export interface ObjectHeader {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}
