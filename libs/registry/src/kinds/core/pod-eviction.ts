// pods/eviction (policy/v1 Eviction): `POST .../pods/{name}/eviction` deletes the pod with the
// eviction's delete options, as Kubernetes' EvictionREST does (pkg/registry/core/pod/storage/eviction.go)
// when no PodDisruptionBudget covers the pod — orch serves none, so none ever refuses. Kubernetes also
// marks a running pod with a DisruptionTarget condition first; orch does not (yet).
import { Eviction, type ObjectHeader, type Pod } from "@orch/api";
import { errors, success } from "@orch/machinery";
import type { ActionDeleteOptions, ActionSubresource } from "../../generic/kind.js";

const present = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

export const evictionAction = (): ActionSubresource<Pod, Eviction> => ({
  group: "policy",
  version: "v1",
  kind: "Eviction",
  schema: Eviction,
  async answer(pod, eviction, _ctx, _cluster, self) {
    const name = pod.metadata.name ?? "";
    if (eviction.metadata.name !== name) throw errors.badRequest("name in URL does not match name in Eviction object");
    const o = eviction.deleteOptions ?? {};
    const dryRun = o.dryRun ?? [];
    if (dryRun.some((d) => d !== "All")) throw errors.badRequest(`unsupported dry run option: ${dryRun.join(", ")}`);
    const options: ActionDeleteOptions = {};
    if (present(o.gracePeriodSeconds)) options.gracePeriodSeconds = o.gracePeriodSeconds;
    if (present(o.propagationPolicy)) options.propagationPolicy = o.propagationPolicy;
    if (present(o.orphanDependents)) options.orphanDependents = o.orphanDependents;
    if (o.preconditions) {
      const { uid, resourceVersion } = o.preconditions;
      options.preconditions = { ...(present(uid) ? { uid } : {}), ...(present(resourceVersion) ? { resourceVersion } : {}) };
    }
    // A pod already going needs nothing more (the eviction still succeeds).
    if (!pod.metadata.deletionTimestamp) await self.delete(options, dryRun.length > 0);
    return { ...success(), code: 201 } as unknown as ObjectHeader;
  },
});
