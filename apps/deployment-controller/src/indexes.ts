// Informer indexes the controllers share: objects by namespace, and by the uid of their controller.
import type { Pod } from "@orch/api";
import { type Informer, type KubeObject, namespaceIndex } from "@orch/client";
import { type Owned, controllerRefOf } from "./ownership.js";

export const NAMESPACE_INDEX = "namespace";
export const CONTROLLER_UID_INDEX = "controller-uid";

export { namespaceIndex };

export const controllerUidIndex = (obj: KubeObject): string[] => {
  const ref = controllerRefOf(obj as Owned);
  return ref ? [ref.uid] : [];
};

/** The index key of a namespace's pods without a controller (no uid has a slash), as Kubernetes' OrphanPodIndexKeyForNamespace. */
const orphansOf = (namespace: string) => `orphan/${namespace}`;

/** Pods by the uid of their controller, and those without one under their namespace's orphan key (PodControllerUIDIndex). */
export const podControllerUidIndex = (pod: KubeObject): string[] => {
  const controller = controllerUidIndex(pod);
  return controller.length > 0 ? controller : [orphansOf(pod.metadata?.namespace ?? "")];
};

/**
 * FilterPodsByOwner: the pods `owner` controls and the orphans of its namespace, which it may adopt —
 * what a sync claims from, without reading every pod of the namespace (a second Deployment beside a
 * thousand pods would read them all at each of its syncs).
 */
export function podsOwnedOrOrphaned(pods: Informer<Pod>, owner: Owned): Pod[] {
  const namespace = owner.metadata.namespace ?? "";
  // A reference names no namespace: a pod elsewhere naming this uid is not this owner's.
  const owned = pods.byIndex(CONTROLLER_UID_INDEX, owner.metadata.uid ?? "").filter((pod) => pod.metadata.namespace === namespace);
  return owned.concat(pods.byIndex(CONTROLLER_UID_INDEX, orphansOf(namespace)));
}
