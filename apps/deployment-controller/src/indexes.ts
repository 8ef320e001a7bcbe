// Informer indexes the controllers share: objects by namespace, and by the uid of their controller.
import { type KubeObject, namespaceIndex } from "@orch/client";
import { type Owned, controllerRefOf } from "./ownership.js";

export const NAMESPACE_INDEX = "namespace";
export const CONTROLLER_UID_INDEX = "controller-uid";

export { namespaceIndex };

export const controllerUidIndex = (obj: KubeObject): string[] => {
  const ref = controllerRefOf(obj as Owned);
  return ref ? [ref.uid] : [];
};
