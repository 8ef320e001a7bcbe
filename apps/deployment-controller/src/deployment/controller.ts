// The deployment controller: keeps a Deployment's ReplicaSets in step with its spec — a new one for each
// pod template, rolled out by RollingUpdate or Recreate, resized on scaling, pruned to
// revisionHistoryLimit — and reports the rollout in its status. After Kubernetes'
// pkg/controller/deployment/{deployment_controller,sync,rolling,recreate,progress}.go; the arithmetic is
// in util.ts and status.ts.
import type { Deployment, Pod, ReplicaSet } from "@orch/api";
import { ApiError, type ApiClient, type Informer, isAlreadyExists, isNotFound, keyOf } from "@orch/client";
import { type ControllerAppContext, type EventRecorder, type Logger, writeStatus } from "@orch/controller";
import { type LabelSelector, jsonEqual, labelSelectorFromObject, labelSelectorIsEverything, labelSelectorMatches } from "@orch/machinery";
import { NAMESPACE_INDEX } from "../indexes.js";
import { claim, controllerRefOf, newControllerRef } from "../ownership.js";
import { POD_TEMPLATE_HASH_LABEL, type WellKnownNames, deploymentsResource, replicaSetsResource } from "../resources.js";
import {
  Reason,
  getCondition,
  newCondition,
  rolloutStatus,
  calculateStatus,
  setCondition,
  untilProgressDeadline,
  deploymentComplete,
} from "./status.js";
import {
  actualReplicas,
  activeReplicaSets,
  byRevision,
  cleanupUnhealthyReplicas,
  computeHash,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  isSaturated,
  maxRevision,
  maxScaledDown,
  maxSurge,
  newRSNewReplicas,
  proportionalSizes,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  scaleDownOldForRollingUpdate,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  specReplicas,
} from "./util.js";

type Result = { requeueAfter: number } | void;

export interface DeploymentControllerOptions {
  app: Pick<ControllerAppContext, "client" | "log" | "runController">;
  deployments: Informer<Deployment>;
  replicaSets: Informer<ReplicaSet>;
  pods: Informer<Pod>;
  names: WellKnownNames;
  /** Events about deployments (source `deployment-controller`). */
  recorder: EventRecorder;
  now?: () => number;
}

export function runDeploymentController(options: DeploymentControllerOptions): void {
  const { deployments, replicaSets, pods } = options;
  const log = options.app.log.child("deployment");
  const now = options.now ?? Date.now;

  /** getDeploymentsForReplicaSet: the owner, or for an orphan every deployment whose selector matches. */
  const deploymentsOf = (rs: ReplicaSet): string[] => {
    const namespace = rs.metadata.namespace ?? "";
    const ref = controllerRefOf(rs);
    if (ref) {
      if (ref.kind !== "Deployment") return [];
      const d = deployments.get(ref.name, namespace);
      return d && d.metadata.uid === ref.uid ? [keyOf(d)] : [];
    }
    return deployments
      .byIndex(NAMESPACE_INDEX, namespace)
      .filter((d) => selects(d, rs.metadata.labels ?? {}))
      .map(keyOf);
  };
  /** A Recreate rollout waits for the old pods to be gone: their deletion is its cue. */
  const deploymentOfPod = (pod: Pod): string[] => {
    const ref = controllerRefOf(pod);
    const rs = ref?.kind === "ReplicaSet" ? replicaSets.get(ref.name, pod.metadata.namespace) : undefined;
    return rs && rs.metadata.uid === ref?.uid ? deploymentsOf(rs) : [];
  };

  options.app.runController({
    name: "deployment",
    sources: [
      deployments,
      { informer: replicaSets, toKeys: deploymentsOf },
      { informer: pods, toKeys: deploymentOfPod, filter: (e) => e.type === "delete" },
    ],
    reconciler: async (key) => {
      const cached = deployments.getByKey(key);
      if (!cached) return;
      return new DeploymentSync(options.app.client, log, options.recorder, options.names, replicaSets, pods, cached, now()).run();
    },
  });
}

function selects(d: Deployment, labels: Record<string, string>): boolean {
  try {
    const selector = labelSelectorFromObject(d.spec.selector);
    return !labelSelectorIsEverything(selector) && labelSelectorMatches(selector, labels);
  } catch {
    return false;
  }
}

/** One sync of one deployment (syncDeployment), on a working copy of it. */
class DeploymentSync {
  /** The working copy: status and annotations change in memory, then are written. */
  private readonly d: Deployment;
  /** The deployment as last read or written: what writes are based on. */
  private stored: Deployment;

  constructor(
    private readonly client: ApiClient,
    private readonly log: Logger,
    private readonly recorder: EventRecorder,
    private readonly names: WellKnownNames,
    private readonly replicaSets: Informer<ReplicaSet>,
    private readonly pods: Informer<Pod>,
    cached: Deployment,
    private readonly now: number,
  ) {
    this.stored = cached;
    this.d = structuredClone(cached);
  }

  private get key(): string {
    return keyOf(this.d);
  }

  /** An event about this deployment, as Kubernetes' deployment controller records it. */
  private event(type: "Normal" | "Warning", reason: string, message: string): void {
    this.recorder.event({ apiVersion: "apps/v1", kind: "Deployment", metadata: this.stored.metadata }, type, reason, message);
  }

  async run(): Promise<Result> {
    const d = this.d;
    let selector: LabelSelector;
    try {
      selector = labelSelectorFromObject(d.spec.selector);
    } catch (e) {
      this.log.error(`${this.key}: invalid selector`, e);
      return;
    }
    // A deployment selecting every pod would fight every other controller: it is only observed.
    if (labelSelectorIsEverything(selector)) {
      this.log.error(`${this.key}: this deployment selects all pods; a non-empty selector is required`);
      this.event("Warning", "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.");
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        d.status = { ...d.status, observedGeneration: d.metadata.generation };
        await this.updateStatus();
      }
      return;
    }
    const rsList = await this.claimReplicaSets(selector);
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly(rsList);
    await this.checkPausedConditions();
    if (d.spec.paused) return this.sync(rsList);
    if (await this.isScalingEvent(rsList)) return this.sync(rsList);
    if (d.spec.strategy?.type === "Recreate") return this.rolloutRecreate(rsList, this.podMap(selector, rsList));
    return this.rolloutRolling(rsList);
  }

  // ---- ownership ---------------------------------------------------------------------------------

  /** getReplicaSetsForDeployment: adopt matching orphans, release owned ones that stopped matching. */
  private claimReplicaSets(selector: LabelSelector): Promise<ReplicaSet[]> {
    return claim(this.replicaSets.byIndex(NAMESPACE_INDEX, this.d.metadata.namespace ?? ""), {
      client: this.client,
      ref: replicaSetsResource,
      owner: this.d,
      ownerResource: deploymentsResource,
      controllerRef: newControllerRef(this.d, "apps/v1", "Deployment"),
      matches: (rs) => labelSelectorMatches(selector, rs.metadata.labels ?? {}),
    });
  }

  /** getPodMapForDeployment: the selected pods by the uid of the replica set controlling them. */
  private podMap(selector: LabelSelector, rsList: ReplicaSet[]): Map<string, Pod[]> {
    const map = new Map<string, Pod[]>(rsList.map((rs) => [rs.metadata.uid ?? "", []]));
    for (const pod of this.pods.byIndex(NAMESPACE_INDEX, this.d.metadata.namespace ?? "")) {
      if (!labelSelectorMatches(selector, pod.metadata.labels ?? {})) continue;
      const uid = controllerRefOf(pod)?.uid;
      if (uid !== undefined) map.get(uid)?.push(pod);
    }
    return map;
  }

  // ---- writes ------------------------------------------------------------------------------------

  /** Writes the working copy's status through `/status`. */
  private async updateStatus(): Promise<void> {
    const status = structuredClone(this.d.status ?? {});
    this.stored = await writeStatus(this.client, deploymentsResource, this.stored, (obj) => {
      obj.status = structuredClone(status);
    });
    this.d.metadata.resourceVersion = this.stored.metadata.resourceVersion;
  }

  /**
   * SetDeploymentRevision. Written through /status, as Kubernetes does: a Deployment's /status keeps
   * annotations, and a status write does not bump the generation. Under a profile whose names are not
   * kubectl's, the same patch mirrors the revision under kubectl's name (`rollout status --revision`
   * reads it) and drops the replica-set-only annotations `rollout undo` copied over (kubectl skips them
   * by Kubernetes' names only).
   */
  private async setDeploymentRevision(revision: string): Promise<void> {
    const current = this.d.metadata.annotations ?? {};
    const annotations: Record<string, string | null> = {};
    if (current[this.names.revision] !== revision) annotations[this.names.revision] = revision;
    const mirror = this.names.kubectlRevision;
    if (mirror) {
      if (current[mirror] !== revision) annotations[mirror] = revision;
      for (const key of [this.names.revisionHistory, this.names.desiredReplicas, this.names.maxReplicas]) {
        if (key in current) annotations[key] = null;
      }
    }
    if (Object.keys(annotations).length === 0) return;
    this.stored = await this.client.patch<Deployment>(
      deploymentsResource,
      this.d.metadata.name ?? "",
      // Preconditions: the deployment this sync read.
      { metadata: { uid: this.d.metadata.uid, resourceVersion: this.stored.metadata.resourceVersion, annotations } },
      { namespace: this.d.metadata.namespace, subresource: "status" },
    );
    this.d.metadata.annotations = { ...this.stored.metadata.annotations };
    this.d.metadata.resourceVersion = this.stored.metadata.resourceVersion;
  }

  /** scaleReplicaSet: the size and the replica annotations in one update. True when the size changed. */
  private async scaleReplicaSet(rs: ReplicaSet, replicas: number): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    const d = this.d;
    const sizeChanges = replicasOf(rs) !== replicas;
    const max = replicasOf(d) + maxSurge(d);
    if (!sizeChanges && !replicasAnnotationsNeedUpdate(rs, replicasOf(d), max, this.names)) return { scaled: false, rs };
    const copy = structuredClone(rs);
    copy.spec.replicas = replicas;
    setReplicasAnnotations(copy, replicasOf(d), max, this.names);
    const updated = await this.client.update<ReplicaSet>(replicaSetsResource, copy);
    if (sizeChanges) {
      const direction = replicasOf(rs) < replicas ? "up" : "down";
      this.event(
        "Normal",
        "ScalingReplicaSet",
        `Scaled ${direction} replica set ${rs.metadata.name} from ${replicasOf(rs)} to ${replicas}`,
      );
    }
    return { scaled: sizeChanges, rs: updated };
  }

  /** scaleReplicaSetAndRecordEvent: nothing to do at the same size. */
  private scaleIfNeeded(rs: ReplicaSet, replicas: number): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    return replicasOf(rs) === replicas ? Promise.resolve({ scaled: false, rs }) : this.scaleReplicaSet(rs, replicas);
  }

  // ---- replica sets ------------------------------------------------------------------------------

  /** getAllReplicaSetsAndSyncRevision. */
  private async replicaSetsAndRevision(
    rsList: ReplicaSet[],
    createIfMissing: boolean,
  ): Promise<{ newRS?: ReplicaSet; oldRSs: ReplicaSet[] }> {
    const { allOld } = findOldReplicaSets(this.d, rsList);
    const newRS = await this.newReplicaSet(rsList, allOld, createIfMissing);
    return { newRS, oldRSs: allOld };
  }

  /** getNewReplicaSet: find the replica set of the current template (syncing its annotations), or create it. */
  private async newReplicaSet(rsList: ReplicaSet[], oldRSs: ReplicaSet[], createIfMissing: boolean): Promise<ReplicaSet | undefined> {
    const d = this.d;
    const existing = findNewReplicaSet(d, rsList);
    const newRevision = maxRevision(oldRSs, this.names) + 1;

    if (existing) {
      const copy = structuredClone(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true, this.names);
      const minReadySeconds = d.spec.minReadySeconds ?? 0;
      if (annotationsChanged || (copy.spec.minReadySeconds ?? 0) !== minReadySeconds) {
        if (minReadySeconds) copy.spec.minReadySeconds = minReadySeconds;
        else delete copy.spec.minReadySeconds;
        return this.client.update<ReplicaSet>(replicaSetsResource, copy);
      }
      await this.setDeploymentRevision(copy.metadata.annotations?.[this.names.revision] ?? "");
      if (hasProgressDeadline(d) && !getCondition(d.status, "Progressing")) {
        d.status ??= {};
        setCondition(
          d.status,
          newCondition("Progressing", "True", Reason.foundNewReplicaSet, `Found new replica set "${copy.metadata.name}"`, this.now),
        );
        await this.updateStatus();
      }
      return copy;
    }
    if (!createIfMissing) return undefined;

    const template = structuredClone(d.spec.template);
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash } };
    const selector = structuredClone(d.spec.selector ?? {});
    selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash };
    const name = `${d.metadata.name}-${hash}`;
    const rs: ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        // Deterministic, so that a sync repeated on a stale cache finds it instead of creating another.
        name,
        namespace: d.metadata.namespace,
        ownerReferences: [newControllerRef(d, "apps/v1", "Deployment")],
        labels: { ...template.metadata.labels },
      },
      spec: { replicas: 0, selector, template, ...(d.spec.minReadySeconds ? { minReadySeconds: d.spec.minReadySeconds } : {}) },
      status: { replicas: 0 },
    };
    const replicas = newRSNewReplicas(d, [...oldRSs, rs], rs);
    rs.spec.replicas = replicas;
    setNewReplicaSetAnnotations(d, rs, newRevision, false, this.names);

    let created: ReplicaSet;
    let alreadyExisted = false;
    try {
      created = await this.client.create<ReplicaSet>(replicaSetsResource, rs);
    } catch (e) {
      if (isAlreadyExists(e)) {
        const found = await this.client.get<ReplicaSet>(replicaSetsResource, name, { namespace: d.metadata.namespace });
        if (controllerRefOf(found)?.uid === d.metadata.uid && findNewReplicaSet(d, [found])) {
          created = found;
          alreadyExisted = true;
        } else {
          // A different replica set has this name: a hash collision. The next sync hashes with the new count.
          d.status = { ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
          await this.updateStatus();
          this.log.info(`${this.key}: hash collision on ${name}; collisionCount is now ${d.status.collisionCount}`);
          throw e;
        }
      } else if (e instanceof ApiError && e.causes.some((c) => c.reason === "NamespaceTerminating")) {
        throw e;
      } else {
        const message = `Failed to create new replica set "${name}": ${e instanceof Error ? e.message : String(e)}`;
        if (hasProgressDeadline(d)) {
          d.status ??= {};
          setCondition(d.status, newCondition("Progressing", "False", Reason.failedReplicaSetCreate, message, this.now));
          await this.updateStatus().catch(() => undefined);
        }
        this.event("Warning", Reason.failedReplicaSetCreate, message);
        throw e;
      }
    }
    if (!alreadyExisted && replicas > 0) this.event("Normal", "ScalingReplicaSet", `Scaled up replica set ${name} from 0 to ${replicas}`);
    await this.setDeploymentRevision(String(newRevision));
    if (!alreadyExisted && hasProgressDeadline(d)) {
      d.status ??= {};
      setCondition(
        d.status,
        newCondition("Progressing", "True", Reason.newReplicaSetCreated, `Created new replica set "${created.metadata.name}"`, this.now),
      );
      await this.updateStatus();
    }
    return created;
  }

  /** cleanupDeployment: delete the oldest old replica sets beyond revisionHistoryLimit, if fully scaled down. */
  private async cleanupDeployment(oldRSs: ReplicaSet[]): Promise<void> {
    const d = this.d;
    if (!hasRevisionHistoryLimit(d)) return;
    const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
    const excess = cleanable.length - (d.spec.revisionHistoryLimit ?? 0);
    if (excess <= 0) return;
    cleanable.sort(byRevision(this.names));
    for (const rs of cleanable.slice(0, excess)) {
      const stillScaling =
        (rs.status?.replicas ?? 0) !== 0 || replicasOf(rs) !== 0 || (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0);
      if (stillScaling) continue;
      try {
        await this.client.delete(replicaSetsResource, rs.metadata.name ?? "", { namespace: rs.metadata.namespace });
        this.log.info(`${this.key}: deleted old replica set ${rs.metadata.name} (revisionHistoryLimit ${d.spec.revisionHistoryLimit})`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  // ---- paths of syncDeployment -------------------------------------------------------------------

  /** checkPausedConditions: `Progressing` is Unknown while paused, and says so when resumed. */
  private async checkPausedConditions(): Promise<void> {
    const d = this.d;
    if (!hasProgressDeadline(d)) return;
    const condition = getCondition(d.status, "Progressing");
    // A reported lack of progress is not overwritten by a pause.
    if (condition?.reason === Reason.timedOut) return;
    const pausedReported = condition?.reason === Reason.paused;
    let next: ReturnType<typeof newCondition> | undefined;
    if (d.spec.paused && !pausedReported) next = newCondition("Progressing", "Unknown", Reason.paused, "Deployment is paused", this.now);
    else if (!d.spec.paused && pausedReported)
      next = newCondition("Progressing", "Unknown", Reason.resumed, "Deployment is resumed", this.now);
    if (!next) return;
    d.status ??= {};
    setCondition(d.status, next);
    await this.updateStatus();
  }

  /** isScalingEvent: an active replica set was sized for another `spec.replicas`. */
  private async isScalingEvent(rsList: ReplicaSet[]): Promise<boolean> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(rsList, false);
    return activeReplicaSets([...oldRSs, newRS]).some((rs) => {
      const desired = rs.metadata.annotations?.[this.names.desiredReplicas];
      return desired !== undefined && /^[0-9]+$/.test(desired) && Number(desired) !== replicasOf(this.d);
    });
  }

  /** sync: scaling (and, when paused, clean-up), without rolling anything out. */
  private async sync(rsList: ReplicaSet[]): Promise<Result> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(rsList, false);
    await this.scale(newRS, oldRSs);
    if (this.d.spec.paused) await this.cleanupDeployment(oldRSs);
    return this.syncDeploymentStatus([...oldRSs, ...(newRS ? [newRS] : [])], newRS);
  }

  /** syncStatusOnly: a deployment being deleted only reports. */
  private async syncStatusOnly(rsList: ReplicaSet[]): Promise<Result> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(rsList, false);
    return this.syncDeploymentStatus([...oldRSs, ...(newRS ? [newRS] : [])], newRS);
  }

  /** scale: one active replica set takes the whole size; a saturated new one empties the old; otherwise proportionally. */
  private async scale(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): Promise<void> {
    const d = this.d;
    const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
    if (activeOrLatest) {
      if (replicasOf(activeOrLatest) !== replicasOf(d)) await this.scaleIfNeeded(activeOrLatest, replicasOf(d));
      return;
    }
    if (isSaturated(d, newRS, this.names)) {
      for (const old of activeReplicaSets(oldRSs)) await this.scaleIfNeeded(old, 0);
      return;
    }
    if (d.spec.strategy?.type !== "RollingUpdate") return;
    for (const { rs, replicas } of proportionalSizes(d, newRS, oldRSs, this.names)) await this.scaleReplicaSet(rs, replicas);
  }

  private async syncDeploymentStatus(allRSs: ReplicaSet[], newRS: ReplicaSet | undefined): Promise<Result> {
    const status = calculateStatus(allRSs, newRS, this.d, this.now);
    if (jsonEqual(status, this.d.status ?? {})) return;
    this.d.status = status;
    await this.updateStatus();
  }

  /** syncRolloutStatus: the status, and when nothing moves, a look again at the progress deadline. */
  private async syncRolloutStatus(allRSs: ReplicaSet[], newRS: ReplicaSet | undefined): Promise<Result> {
    const status = rolloutStatus(allRSs, newRS, this.d, this.now);
    if (jsonEqual(status, this.d.status ?? {})) {
      const wait = untilProgressDeadline(this.d, status, this.now);
      return wait === undefined ? undefined : { requeueAfter: wait };
    }
    this.d.status = status;
    await this.updateStatus();
  }

  /** rolloutRolling: scale the new replica set up within maxSurge, else the old ones down within maxUnavailable. */
  private async rolloutRolling(rsList: ReplicaSet[]): Promise<Result> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(rsList, true);
    if (!newRS) throw new Error(`${this.key}: no new replica set`);
    const allRSs = [...oldRSs, newRS];
    if (await this.reconcileNewReplicaSet(allRSs, newRS)) return this.syncRolloutStatus(allRSs, newRS);
    if (await this.reconcileOldReplicaSets(allRSs, activeReplicaSets(oldRSs), newRS)) return this.syncRolloutStatus(allRSs, newRS);
    if (deploymentComplete(this.d, this.d.status ?? {})) await this.cleanupDeployment(oldRSs);
    return this.syncRolloutStatus(allRSs, newRS);
  }

  private async reconcileNewReplicaSet(allRSs: ReplicaSet[], newRS: ReplicaSet): Promise<boolean> {
    const d = this.d;
    if (replicasOf(newRS) === replicasOf(d)) return false;
    const target = replicasOf(newRS) > replicasOf(d) ? replicasOf(d) : newRSNewReplicas(d, allRSs, newRS);
    return (await this.scaleIfNeeded(newRS, target)).scaled;
  }

  private async reconcileOldReplicaSets(allRSs: ReplicaSet[], oldRSs: ReplicaSet[], newRS: ReplicaSet): Promise<boolean> {
    if (specReplicas(oldRSs) === 0) return false;
    // Availability is read from the replica sets' status: one that has not yet caught up with its last
    // resize still counts pods that are gone, and scaling down on that would overshoot maxUnavailable.
    if (allRSs.some((rs) => (rs.status?.observedGeneration ?? 0) < (rs.metadata.generation ?? 0))) return false;
    const limit = maxScaledDown(this.d, allRSs, newRS);
    if (limit <= 0) return false;
    const cleanup = cleanupUnhealthyReplicas(oldRSs, limit);
    // Later steps write on top of what these writes returned, not on the cached versions.
    const written = new Map<string, ReplicaSet>();
    for (const { rs, replicas } of cleanup.resizes) written.set(rs.metadata.uid ?? "", (await this.scaleIfNeeded(rs, replicas)).rs);
    const scaleDown = scaleDownOldForRollingUpdate(this.d, [...cleanup.oldRSs, newRS], cleanup.oldRSs);
    for (const { rs, replicas } of scaleDown.resizes) await this.scaleIfNeeded(written.get(rs.metadata.uid ?? "") ?? rs, replicas);
    return cleanup.total + scaleDown.total > 0;
  }

  /** rolloutRecreate: all old pods gone first, then the new replica set at full size. */
  private async rolloutRecreate(rsList: ReplicaSet[], podMap: Map<string, Pod[]>): Promise<Result> {
    let { newRS, oldRSs } = await this.replicaSetsAndRevision(rsList, false);
    let allRSs = [...oldRSs, ...(newRS ? [newRS] : [])];
    let scaledDown = false;
    for (const rs of activeReplicaSets(oldRSs)) if ((await this.scaleIfNeeded(rs, 0)).scaled) scaledDown = true;
    if (scaledDown) return this.syncRolloutStatus(allRSs, newRS);
    if (this.oldPodsRunning(newRS, oldRSs, podMap)) return this.syncRolloutStatus(allRSs, newRS);
    if (!newRS) {
      ({ newRS, oldRSs } = await this.replicaSetsAndRevision(rsList, true));
      allRSs = [...oldRSs, ...(newRS ? [newRS] : [])];
    }
    if (newRS) await this.scaleIfNeeded(newRS, replicasOf(this.d));
    if (deploymentComplete(this.d, this.d.status ?? {})) await this.cleanupDeployment(oldRSs);
    return this.syncRolloutStatus(allRSs, newRS);
  }

  /** oldPodsRunning: an old replica set still has pods, or a pod of one is not finished. */
  private oldPodsRunning(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[], podMap: Map<string, Pod[]>): boolean {
    if (actualReplicas(oldRSs) > 0) return true;
    for (const [uid, pods] of podMap) {
      if (newRS && newRS.metadata.uid === uid) continue;
      if (pods.some((p) => p.status?.phase !== "Failed" && p.status?.phase !== "Succeeded")) return true;
    }
    return false;
  }
}
