// One pod-managing controller for every kind that keeps N copies of a pod template: ReplicaSet and
// ReplicationController differ only in how their fields are read (see kinds.ts). After Kubernetes'
// pkg/controller/replicaset/replica_set.go (the ReplicationController manager there is the same code
// behind conversion adapters, too).
import type { Pod, PodTemplateSpec } from "@orch/api";
import { ApiError, type ApiClient, type Informer, type ResourceRef, isNotFound, keyOf, podsResource } from "@orch/client";
import { type ControllerAppContext, type EventRecorder, type Logger, writeStatus } from "@orch/controller";
import { type LabelSelector, cloneJson, labelSelectorMatches, rfc3339 } from "@orch/machinery";
import { PodExpectations } from "../expectations.js";
import { CONTROLLER_UID_INDEX, NAMESPACE_INDEX, podsOwnedOrOrphaned } from "../indexes.js";
import { type Owned, type OwnerRef, claim, controllerRefOf, newControllerRef } from "../ownership.js";
import { isPodActive, isPodAvailable, isPodReady, podsToDelete, untilNextAvailable } from "../pods.js";

export interface ReplicaStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  /** Pods being deleted that have not finished (Kubernetes 1.33); ReplicationControllers do not report it. */
  terminatingReplicas?: number;
  observedGeneration?: number;
  conditions?: Array<{ type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }>;
}

/** How the shared controller reads one kind. */
export interface ReplicaKind<T extends Owned> {
  /** Names the controller and its log lines: `replicaset`, `replicationcontroller`. */
  name: string;
  /** The source of its events, as Kubernetes names the controller: `replicaset-controller`, `replication-controller`. */
  component: string;
  apiVersion: string;
  kind: string;
  resource: ResourceRef;
  replicas(obj: T): number;
  minReadySeconds(obj: T): number;
  /** Throws when the selector cannot be parsed (then the object is left alone, as Kubernetes does). */
  selector(obj: T): LabelSelector;
  template(obj: T): PodTemplateSpec | undefined;
  status(obj: T): ReplicaStatus;
  setStatus(obj: T, status: ReplicaStatus): void;
}

/** Kubernetes' BurstReplicas: pods created or deleted per sync at most. */
const BURST_REPLICAS = 500;
/** SlowStartInitialBatchSize: creations go 1, 2, 4, … and stop at the first failing batch. */
const SLOW_START_INITIAL_BATCH = 1;

export interface ReplicaControllerOptions<T extends Owned> {
  app: Pick<ControllerAppContext, "client" | "log" | "runController" | "signal" | "eventRecorder">;
  kind: ReplicaKind<T>;
  owners: Informer<T>;
  pods: Informer<Pod>;
  /** `controller.<domain>/pod-deletion-cost`. */
  podDeletionCostAnnotation: string;
  now?: () => number;
}

/** Starts the controller for `kind`; the app stops it. */
export function runReplicaController<T extends Owned>(options: ReplicaControllerOptions<T>): void {
  const { app, kind, owners, pods } = options;
  const manager = new ReplicaManager(options);
  const podKeys = (pod: Pod): string[] => manager.controllersOf(pod);
  const controller = app.runController({
    name: kind.name,
    sources: [owners, { informer: pods, toKeys: podKeys }],
    reconciler: (key) => manager.sync(key),
  });
  // A pod that changed owner or labels may leave a controller that now has too few: tell that one too.
  const off = pods.addEventHandler({
    onUpdate: (old, pod) => {
      if (old === pod) return;
      const before = podKeys(old);
      for (const key of before) if (!podKeys(pod).includes(key)) controller.queue.add(key);
    },
  });
  app.signal.addEventListener("abort", off, { once: true });
}

class ReplicaManager<T extends Owned> {
  private readonly client: ApiClient;
  private readonly log: Logger;
  private readonly kind: ReplicaKind<T>;
  private readonly owners: Informer<T>;
  private readonly pods: Informer<Pod>;
  private readonly expectations: PodExpectations;
  private readonly costAnnotation: string;
  private readonly now: () => number;
  private readonly recorder: EventRecorder;

  constructor(options: ReplicaControllerOptions<T>) {
    this.client = options.app.client;
    this.log = options.app.log.child(options.kind.name);
    this.kind = options.kind;
    this.owners = options.owners;
    this.pods = options.pods;
    this.costAnnotation = options.podDeletionCostAnnotation;
    this.now = options.now ?? Date.now;
    this.expectations = new PodExpectations(options.pods, this.now);
    this.recorder = options.app.eventRecorder(options.kind.component);
  }

  /** An event about `owner`, as RealPodControl records them. */
  private event(owner: T, type: "Normal" | "Warning", reason: string, message: string): void {
    this.recorder.event({ apiVersion: this.kind.apiVersion, kind: this.kind.kind, metadata: owner.metadata }, type, reason, message);
  }

  /** The controllers a pod event concerns: its owner of this kind, or for an orphan every one whose selector matches. */
  controllersOf(pod: Pod): string[] {
    const ref = controllerRefOf(pod);
    const namespace = pod.metadata.namespace ?? "";
    if (ref) {
      if (ref.kind !== this.kind.kind) return [];
      const owner = this.owners.get(ref.name, namespace);
      return owner && owner.metadata.uid === ref.uid ? [keyOf(owner)] : [];
    }
    return this.owners
      .byIndex(NAMESPACE_INDEX, namespace)
      .filter((o) => this.selects(o, pod))
      .map(keyOf);
  }

  private selects(owner: T, pod: Pod): boolean {
    try {
      return labelSelectorMatches(this.kind.selector(owner), pod.metadata.labels ?? {});
    } catch {
      return false;
    }
  }

  async sync(key: string): Promise<{ requeueAfter: number } | void> {
    const owner = this.owners.getByKey(key);
    if (!owner) {
      this.expectations.forget(key);
      return;
    }
    let selector: LabelSelector;
    try {
      selector = this.kind.selector(owner);
    } catch (e) {
      this.log.error(`${key}: invalid selector`, e);
      return;
    }
    // Its own pods, matching or not (an owned pod whose labels changed is released), and the orphans it may adopt.
    const active = podsOwnedOrOrphaned(this.pods, owner).filter(isPodActive);
    const owned = await claim(active, {
      client: this.client,
      ref: podsResource,
      owner,
      ownerResource: this.kind.resource,
      controllerRef: this.controllerRef(owner),
      matches: (pod) => labelSelectorMatches(selector, pod.metadata.labels ?? {}),
    });

    // Until the cache shows our last writes, counting pods would count wrong; the events of those
    // writes bring this key back.
    const inSync = this.expectations.satisfied(key);
    let manageError: Error | undefined;
    let current = owned;
    if (inSync && !owner.metadata.deletionTimestamp) {
      const result = await this.manageReplicas(key, owner, owned);
      manageError = result.error;
      current = owned.filter((pod) => !result.deleted.has(pod));
    }

    const status = this.calculateStatus(owner, current, owned.length, manageError);
    status.terminatingReplicas = this.terminatingPods(owner, selector);
    // observedGeneration says "the pods match this spec": only true once this sync managed them.
    if (inSync) status.observedGeneration = owner.metadata.generation;
    let stored: T;
    try {
      stored = await writeStatus(this.client, this.kind.resource, owner, (obj) => {
        this.kind.setStatus(obj, status);
      });
    } catch (e) {
      // Deleted since the cache saw it: its delete event ends the story.
      if (isNotFound(e)) return;
      throw e;
    }
    if (manageError) throw manageError;
    const wait = untilNextAvailable(current, this.kind.minReadySeconds(stored), this.now());
    return wait === undefined ? undefined : { requeueAfter: wait };
  }

  private controllerRef(owner: T): OwnerRef {
    return newControllerRef(owner, this.kind.apiVersion, this.kind.kind);
  }

  private async manageReplicas(key: string, owner: T, owned: Pod[]): Promise<{ error?: Error; deleted: Set<Pod> }> {
    const deleted = new Set<Pod>();
    const diff = owned.length - this.kind.replicas(owner);
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      const error = await this.createPods(key, owner, count);
      return { error, deleted };
    }
    if (diff > 0) {
      const count = Math.min(diff, BURST_REPLICAS);
      const victims = podsToDelete(owned, this.relatedPods(owner), count, this.costAnnotation, this.now());
      const results = await Promise.allSettled(
        victims.map(async (pod) => {
          try {
            await this.client.delete(podsResource, pod.metadata.name ?? "", { namespace: pod.metadata.namespace });
            this.event(owner, "Normal", "SuccessfulDelete", `Deleted pod: ${pod.metadata.name}`);
          } catch (e) {
            if (!isNotFound(e)) {
              this.event(owner, "Warning", "FailedDelete", `Error deleting: ${asError(e).message}`);
              throw e;
            }
          }
          this.expectations.deleted(key, pod);
          deleted.add(pod);
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      return { error: failed ? asError(failed.reason) : undefined, deleted };
    }
    return { deleted };
  }

  /** Creates `count` pods in slow-start batches (slowStartBatch); returns the first failure. */
  private async createPods(key: string, owner: T, count: number): Promise<Error | undefined> {
    const template = this.kind.template(owner);
    let remaining = count;
    for (let batch = Math.min(remaining, SLOW_START_INITIAL_BATCH); batch > 0; batch = Math.min(2 * batch, remaining)) {
      const results = await Promise.allSettled(Array.from({ length: batch }, () => this.createPod(owner, template)));
      for (const r of results) if (r.status === "fulfilled" && r.value) this.expectations.created(key, r.value);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) return asError(failed.reason);
      remaining -= batch;
    }
    return undefined;
  }

  /** GetPodFromTemplate: the template's labels, annotations, finalizers and spec, named after the owner. */
  private async createPod(owner: T, template: PodTemplateSpec | undefined): Promise<Pod | undefined> {
    const meta = template?.metadata;
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        generateName: `${owner.metadata.name}-`,
        namespace: owner.metadata.namespace,
        ...(meta?.labels ? { labels: { ...meta.labels } } : {}),
        ...(meta?.annotations ? { annotations: { ...meta.annotations } } : {}),
        ...(meta?.finalizers ? { finalizers: [...meta.finalizers] } : {}),
        ownerReferences: [this.controllerRef(owner)],
      },
      spec: cloneJson(template?.spec),
    };
    try {
      const created = await this.client.create<Pod>(podsResource, pod as Pod);
      this.event(owner, "Normal", "SuccessfulCreate", `Created pod: ${created.metadata.name}`);
      return created;
    } catch (e) {
      // Nothing can be created in a namespace being deleted, and nothing needs to be.
      if (e instanceof ApiError && e.causes.some((c) => c.reason === "NamespaceTerminating")) return undefined;
      this.event(owner, "Warning", "FailedCreate", `Error creating: ${asError(e).message}`);
      throw e;
    }
  }

  /**
   * FilterTerminatingPods and FilterClaimedPods: pods of this owner being deleted and not finished. They
   * no longer count as replicas, but still run until their grace period ends.
   */
  private terminatingPods(owner: T, selector: LabelSelector): number {
    let count = 0;
    for (const pod of this.pods.byIndex(CONTROLLER_UID_INDEX, owner.metadata.uid ?? "")) {
      const phase = pod.status?.phase;
      if (!pod.metadata.deletionTimestamp || phase === "Succeeded" || phase === "Failed") continue;
      if (pod.metadata.namespace === owner.metadata.namespace && labelSelectorMatches(selector, pod.metadata.labels ?? {})) count++;
    }
    return count;
  }

  /** Active pods of this owner and of the owners sharing its controller (getIndirectlyRelatedPods). */
  private relatedPods(owner: T): Pod[] {
    const ref = controllerRefOf(owner);
    const siblings = ref
      ? this.owners.byIndex(CONTROLLER_UID_INDEX, ref.uid).filter((o) => o.metadata.namespace === owner.metadata.namespace)
      : [owner];
    const seen = new Set<string>();
    const related: Pod[] = [];
    for (const sibling of siblings) {
      for (const pod of this.pods.byIndex(NAMESPACE_INDEX, owner.metadata.namespace ?? "")) {
        const uid = pod.metadata.uid ?? keyOf(pod);
        if (seen.has(uid) || !this.selects(sibling, pod)) continue;
        seen.add(uid);
        related.push(pod);
      }
    }
    return related;
  }

  /**
   * The status the pods give (calculateStatus). `before` is how many pods the sync started with: a
   * failure is a FailedCreate when there were too few, a FailedDelete when too many.
   */
  private calculateStatus(owner: T, pods: Pod[], before: number, manageError: Error | undefined): ReplicaStatus {
    const status = cloneJson(this.kind.status(owner));
    const templateLabels = this.kind.template(owner)?.metadata?.labels ?? {};
    const minReadySeconds = this.kind.minReadySeconds(owner);
    const now = this.now();
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    for (const pod of pods) {
      const labels = pod.metadata.labels ?? {};
      if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
      if (isPodReady(pod)) {
        ready++;
        if (isPodAvailable(pod, minReadySeconds, now)) available++;
      }
    }
    const failure = status.conditions?.find((c) => c.type === "ReplicaFailure");
    if (manageError && !failure) {
      const diff = before - this.kind.replicas(owner);
      const reason = diff < 0 ? "FailedCreate" : diff > 0 ? "FailedDelete" : "";
      status.conditions = [
        ...(status.conditions ?? []),
        { type: "ReplicaFailure", status: "True", lastTransitionTime: rfc3339(new Date(now)), reason, message: manageError.message },
      ];
    } else if (!manageError && failure) {
      status.conditions = status.conditions?.filter((c) => c.type !== "ReplicaFailure");
      if (status.conditions?.length === 0) delete status.conditions;
    }
    status.replicas = pods.length;
    // omitempty in Kubernetes: zero counts are not written.
    setOrOmit(status, "fullyLabeledReplicas", fullyLabeled);
    setOrOmit(status, "readyReplicas", ready);
    setOrOmit(status, "availableReplicas", available);
    return status;
  }
}

function setOrOmit(status: ReplicaStatus, field: "fullyLabeledReplicas" | "readyReplicas" | "availableReplicas", value: number): void {
  if (value) status[field] = value;
  else delete status[field];
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
