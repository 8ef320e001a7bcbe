// The CRD finalizer (apiextensions-apiserver pkg/controller/finalizer/crd_finalizer.go): a deleted CRD
// keeps its clean-up finalizer until every instance is gone. Instances are deleted through the API (so
// their own finalizers and the garbage collector apply), then the finalizer goes and with it the CRD.
import { type ApiClient, type KubeObject, type ResourceRef, isConflict, isNotFound } from "@orch/client";
import { type ControllerEvent, type Result, writeStatus } from "@orch/controller";
import { jsonEqual } from "@orch/machinery";
import { type Crd, type DesiredCondition, conditionTrue, setCondition } from "./crd.js";

/** How long instances may take to disappear before the wait counts as failed (Kubernetes polls 1 min). */
const WAIT_FOR_INSTANCES_MS = 60_000;
/** Kubernetes' poll interval while instances remain. */
const POLL_MS = 5_000;

export interface FinalizerDeps {
  client: Pick<ApiClient, "get" | "updateSubresource" | "update" | "listAll" | "delete">;
  ref: ResourceRef;
  crds: { get(name: string): Crd | undefined };
  /** `customresourcecleanup.apiextensions.<domain>` */
  finalizer: string;
}

const pending = (crd: Crd | undefined, finalizer: string): crd is Crd =>
  !!crd?.metadata?.deletionTimestamp && (crd.metadata.finalizers ?? []).includes(finalizer);

/** The CRD without what this controller itself changes (its Terminating condition and resourceVersion). */
function withoutOwnChanges(crd: Crd): unknown {
  const { resourceVersion: _rv, ...meta } = crd.metadata ?? {};
  const conditions = (crd.status?.conditions ?? []).filter((c) => c.type !== "Terminating");
  return { ...crd, metadata: meta, status: { ...crd.status, conditions } };
}

/**
 * Which events count: deleted CRDs still holding the finalizer; an update that changed only the
 * Terminating condition is this controller's own write and would only loop.
 */
export const finalizerFilter =
  (finalizer: string) =>
  (event: ControllerEvent<Crd>): boolean => {
    if (!pending(event.object, finalizer)) return false;
    if (event.type !== "update" || event.old.metadata?.resourceVersion === event.object.metadata?.resourceVersion) return true;
    return !jsonEqual(withoutOwnChanges(event.old), withoutOwnChanges(event.object));
  };

export class CrdFinalizer {
  /** When this process started waiting for a CRD's instances to go. */
  private readonly waitingSince = new Map<string, number>();

  constructor(private readonly deps: FinalizerDeps) {}

  reconcile = async (name: string): Promise<Result> => {
    const { client, ref, crds, finalizer } = this.deps;
    const cached = crds.get(name);
    if (!pending(cached, finalizer)) {
      this.waitingSince.delete(name);
      return;
    }
    // This clean-up could take a while: say so first.
    let crd = await this.writeCondition(cached, {
      type: "Terminating",
      status: "True",
      reason: "InstanceDeletionInProgress",
      message: "CustomResource deletion is in progress",
    });
    if (!crd) return;

    let outcome: DesiredCondition;
    if (conditionTrue(crd, "Established")) {
      const result = await this.deleteInstances(crd);
      if ("requeueAfter" in result) return result;
      outcome = result.condition;
      if (result.error) {
        await this.writeCondition(crd, outcome);
        throw result.error;
      }
    } else {
      outcome = { type: "Terminating", status: "False", reason: "NeverEstablished", message: "resource was never established" };
    }
    crd = await this.writeCondition(crd, outcome);
    if (!crd) return;
    this.waitingSince.delete(name);
    // The finalizer is metadata, which /status does not change; the update carries the resourceVersion
    // just written, so a CRD changed meanwhile is looked at again instead of overwritten.
    const finalizers = (crd.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
    try {
      await client.update(ref, { ...crd, metadata: { ...crd.metadata, finalizers } });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
  };

  /** Writes one condition through /status; undefined when the CRD changed or went meanwhile. */
  private async writeCondition(crd: Crd, condition: DesiredCondition): Promise<Crd | undefined> {
    try {
      return await writeStatus(this.deps.client, this.deps.ref, crd, (copy) => setCondition(copy, condition), { attempts: 1 });
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Deletes every instance, then checks that none is left (instances with finalizers take their time). */
  private async deleteInstances(crd: Crd): Promise<{ condition: DesiredCondition; error?: Error } | { requeueAfter: number }> {
    const name = crd.metadata!.name!;
    const failed = (message: string, error: Error) => ({
      condition: { type: "Terminating", status: "True", reason: "InstanceDeletionFailed", message },
      error,
    });
    const instances = instanceResource(crd);
    if (!instances) {
      const error = new Error(`unable to find a custom resource client for ${crd.spec.names.plural}.${crd.spec.group}: no served version`);
      return failed(`could not list instances: ${error.message}`, error);
    }
    const client = this.deps.client;
    let items: KubeObject[];
    try {
      items = (await client.listAll(instances)).items;
    } catch (e) {
      return failed(`could not list instances: ${(e as Error).message}`, e as Error);
    }
    const errors: string[] = [];
    for (const item of items) {
      if (item.metadata?.deletionTimestamp) continue;
      try {
        await client.delete(instances, item.metadata!.name!, { namespace: item.metadata?.namespace });
      } catch (e) {
        if (!isNotFound(e)) errors.push((e as Error).message);
      }
    }
    if (errors.length > 0) {
      const message = errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
      return failed(`could not issue all deletes: ${message}`, new Error(message));
    }
    const remaining = (await client.listAll(instances)).items.length;
    if (remaining === 0) {
      return { condition: { type: "Terminating", status: "False", reason: "InstanceDeletionCompleted", message: "removed all instances" } };
    }
    const since = this.waitingSince.get(name) ?? Date.now();
    this.waitingSince.set(name, since);
    if (Date.now() - since < WAIT_FOR_INSTANCES_MS) return { requeueAfter: POLL_MS };
    this.waitingSince.delete(name);
    const error = new Error("timed out waiting for the condition");
    return {
      condition: {
        type: "Terminating",
        status: "True",
        reason: "InstanceDeletionCheck",
        message: `could not confirm zero CustomResources remaining: ${error.message}`,
      },
      error,
    };
  }
}

/** The instances' resource in a served version (the storage version when it is served). */
function instanceResource(crd: Crd): ResourceRef | undefined {
  const served = crd.spec.versions.filter((v) => v.served);
  const version = served.find((v) => v.storage) ?? served[0];
  if (!version) return undefined;
  return {
    group: crd.spec.group,
    version: version.name,
    plural: crd.status?.acceptedNames?.plural || crd.spec.names.plural,
    namespaced: crd.spec.scope === "Namespaced",
  };
}
