// The establishing controller (apiextensions-apiserver pkg/controller/establish): once a CRD's names
// are accepted, it becomes Established, which is when the apiserver starts serving its kinds.
import { type ApiClient, type ResourceRef, isConflict, isNotFound } from "@orch/client";
import { writeStatus } from "@orch/controller";
import { type Crd, conditionTrue, setCondition } from "./crd.js";

export function establishingReconciler(
  client: Pick<ApiClient, "get" | "updateSubresource">,
  ref: ResourceRef,
  crds: { get(name: string): Crd | undefined },
) {
  return async (name: string): Promise<void> => {
    const crd = crds.get(name);
    if (!crd || !conditionTrue(crd, "NamesAccepted") || conditionTrue(crd, "Established")) return;
    try {
      await writeStatus(
        client,
        ref,
        crd,
        (copy) =>
          setCondition(copy, {
            type: "Established",
            status: "True",
            reason: "InitialNamesAccepted",
            message: "the initial names have been accepted",
          }),
        { attempts: 1 },
      );
    } catch (e) {
      // Deleted or changed meanwhile: the next event brings it back.
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
  };
}
