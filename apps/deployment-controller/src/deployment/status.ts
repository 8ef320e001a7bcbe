// A deployment's status and its two conditions, computed from its replica sets (sync.go calculateStatus,
// progress.go syncRolloutStatus, and the condition helpers of deployment_util.go), without I/O.
import type { Deployment, ReplicaSet } from "@orch/api";
import { rfc3339 } from "@orch/machinery";
import { timeOf } from "../pods.js";
import {
  actualReplicas,
  availableReplicas,
  hasProgressDeadline,
  maxUnavailable,
  readyReplicas,
  replicasOf,
  specReplicas,
  terminatingReplicas,
} from "./util.js";

export type DeploymentStatus = NonNullable<Deployment["status"]>;
export type DeploymentCondition = NonNullable<DeploymentStatus["conditions"]>[number];

export const Reason = {
  /** Progressing */
  replicaSetUpdated: "ReplicaSetUpdated",
  failedReplicaSetCreate: "ReplicaSetCreateError",
  newReplicaSetCreated: "NewReplicaSetCreated",
  foundNewReplicaSet: "FoundNewReplicaSet",
  newReplicaSetAvailable: "NewReplicaSetAvailable",
  timedOut: "ProgressDeadlineExceeded",
  paused: "DeploymentPaused",
  resumed: "DeploymentResumed",
  /** Available */
  minimumReplicasAvailable: "MinimumReplicasAvailable",
  minimumReplicasUnavailable: "MinimumReplicasUnavailable",
} as const;

export function newCondition(
  type: string,
  status: "True" | "False" | "Unknown",
  reason: string,
  message: string,
  now: number,
): DeploymentCondition {
  const time = rfc3339(new Date(now));
  return { type, status, lastUpdateTime: time, lastTransitionTime: time, reason, message };
}

export function getCondition(status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * SetDeploymentCondition: nothing changes when a condition of that status and reason is there already;
 * lastTransitionTime is kept when only the reason changes. The condition goes to the end of the list.
 */
export function setCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

/** Kubernetes writes these counts with omitempty: a zero is absent. */
function count(
  status: DeploymentStatus,
  field: "observedGeneration" | "replicas" | "updatedReplicas" | "readyReplicas" | "availableReplicas" | "unavailableReplicas",
  value: number,
): void {
  if (value) status[field] = value;
  else delete status[field];
}

/** calculateStatus: the counts of all replica sets, and `Available` from replicas - maxUnavailable. */
export function calculateStatus(
  allRSs: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  now: number,
): DeploymentStatus {
  const available = availableReplicas(allRSs);
  const unavailable = Math.max(0, specReplicas(allRSs) - available);
  const status: DeploymentStatus = {};
  count(status, "observedGeneration", d.metadata.generation ?? 0);
  count(status, "replicas", actualReplicas(allRSs));
  count(status, "updatedReplicas", actualReplicas([newRS]));
  count(status, "readyReplicas", readyReplicas(allRSs));
  count(status, "availableReplicas", available);
  count(status, "unavailableReplicas", unavailable);
  const terminating = terminatingReplicas(allRSs);
  if (terminating !== undefined) status.terminatingReplicas = terminating;
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (d.status?.conditions) status.conditions = d.status.conditions.map((c) => ({ ...c }));
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(status, newCondition("Available", "True", Reason.minimumReplicasAvailable, "Deployment has minimum availability.", now));
  } else {
    setCondition(
      status,
      newCondition("Available", "False", Reason.minimumReplicasUnavailable, "Deployment does not have minimum availability.", now),
    );
  }
  return status;
}

/** DeploymentComplete: every replica updated and no old one left, with minimum availability, at this generation. */
export function deploymentComplete(d: Deployment, status: DeploymentStatus): boolean {
  const replicas = replicasOf(d);
  return (
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) >= replicas - maxUnavailable(d) &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

/** DeploymentProgressing: more updated or available pods, or fewer old ones, than the last status said. */
export function deploymentProgressing(d: Deployment, status: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** DeploymentTimedOut: no progress reported for progressDeadlineSeconds (or already reported as timed out). */
export function deploymentTimedOut(d: Deployment, status: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const condition = getCondition(status, "Progressing");
  if (!condition) return false;
  if (condition.reason === Reason.timedOut) return true;
  const from = timeOf(condition.lastUpdateTime);
  return from !== undefined && from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 < now;
}

/**
 * syncRolloutStatus's computation: the status with `Progressing` brought up to date — complete, still
 * progressing (lastUpdateTime moves, lastTransitionTime stays), or past its deadline.
 */
export function rolloutStatus(allRSs: readonly ReplicaSet[], newRS: ReplicaSet | undefined, d: Deployment, now: number): DeploymentStatus {
  const status = calculateStatus(allRSs, newRS, d, now);
  if (!hasProgressDeadline(d)) removeCondition(status, "Progressing");
  const current = getCondition(d.status, "Progressing");
  const complete = status.replicas === status.updatedReplicas && current?.reason === Reason.newReplicaSetAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const subject = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
    if (deploymentComplete(d, status)) {
      setCondition(
        status,
        newCondition("Progressing", "True", Reason.newReplicaSetAvailable, `${subject} has successfully progressed.`, now),
      );
    } else if (deploymentProgressing(d, status)) {
      const condition = newCondition("Progressing", "True", Reason.replicaSetUpdated, `${subject} is progressing.`, now);
      if (current) {
        if (current.status === "True") condition.lastTransitionTime = current.lastTransitionTime;
        removeCondition(status, "Progressing");
      }
      setCondition(status, condition);
    } else if (deploymentTimedOut(d, status, now)) {
      setCondition(status, newCondition("Progressing", "False", Reason.timedOut, `${subject} has timed out progressing.`, now));
    }
  }
  // A replica set that cannot create or delete pods says so; the new one's failure goes first.
  const failure = [newRS, ...allRSs].flatMap((rs) => rs?.status?.conditions ?? []).find((c) => c.type === "ReplicaFailure");
  if (failure) {
    const time = failure.lastTransitionTime;
    setCondition(status, {
      type: failure.type,
      status: failure.status,
      lastTransitionTime: time,
      lastUpdateTime: time,
      reason: failure.reason,
      message: failure.message,
    });
  } else removeCondition(status, "ReplicaFailure");
  return status;
}

/**
 * requeueStuckDeployment: when a rollout shows no progress, the moment its deadline passes (no event
 * will come then). Undefined when there is nothing to wait for.
 */
export function untilProgressDeadline(d: Deployment, status: DeploymentStatus, now: number): number | undefined {
  const current = getCondition(d.status, "Progressing");
  if (!hasProgressDeadline(d) || !current) return undefined;
  if (deploymentComplete(d, status) || current.reason === Reason.timedOut) return undefined;
  const from = timeOf(current.lastUpdateTime) ?? now;
  return Math.max(0, from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 - now) + 1000;
}
