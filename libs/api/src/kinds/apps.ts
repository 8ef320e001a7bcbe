// apps/v1 kinds orch serves: Deployment and the ReplicaSets it manages.
// Mirrors k8s.io/api/apps/v1/types.go; defaults from pkg/apis/apps/v1/defaults.go.
import * as v from "valibot";
import { LabelSelector, objectOf } from "../meta.js";
import { bool, int32, int64, intOrString, mapList, opt, str } from "../schema.js";
import { PodTemplateSpec, defaultPodTemplateSpec } from "./core.js";
import { ConditionFields } from "./fields.js";
import { listOf } from "./meta-list.js";
import { withStructSemantics } from "../shape.js";

export const RollingUpdateDeployment = v.object({
  maxUnavailable: opt(intOrString()),
  maxSurge: opt(intOrString()),
});

/**
 * `spec.strategy` carries `patchStrategy=retainKeys` in Kubernetes: a strategic merge patch that sets
 * `type: Recreate` clears `rollingUpdate`.
 */
export const DeploymentStrategy = withStructSemantics(
  v.object({
    type: opt(str(), "RollingUpdate"),
    // Defaulted (25%/25%) by defaultDeployment, only when type is RollingUpdate.
    rollingUpdate: opt(RollingUpdateDeployment),
  }),
  { retainKeys: true },
);

// `selector` and `template` are required by Kubernetes' validation (422), not by its decoder: a body
// without them decodes, as in Go, and the strategy reports `spec.selector: Required value`.
export const DeploymentSpec = v.object({
  replicas: opt(int32(), 1),
  selector: opt(LabelSelector),
  template: opt(PodTemplateSpec, {}),
  strategy: opt(DeploymentStrategy, {}),
  // Not defaulted by Kubernetes: 0 is its zero value and is omitted on the wire.
  minReadySeconds: opt(int32()),
  revisionHistoryLimit: opt(int32(), 10),
  paused: opt(bool()),
  progressDeadlineSeconds: opt(int32(), 600),
});

export const DeploymentCondition = v.pick(ConditionFields, ["type", "status", "lastUpdateTime", "lastTransitionTime", "reason", "message"]);

export const DeploymentStatus = v.object({
  observedGeneration: opt(int64()),
  replicas: opt(int32()),
  updatedReplicas: opt(int32()),
  readyReplicas: opt(int32()),
  availableReplicas: opt(int32()),
  unavailableReplicas: opt(int32()),
  terminatingReplicas: opt(int32()),
  conditions: opt(mapList(DeploymentCondition, ["type"])),
  collisionCount: opt(int32()),
});

export const Deployment = objectOf({
  spec: DeploymentSpec,
  status: opt(DeploymentStatus, {}),
});
export type Deployment = v.InferOutput<typeof Deployment>;
export const DeploymentList = listOf(Deployment);

export const ReplicaSetSpec = v.object({
  replicas: opt(int32(), 1),
  minReadySeconds: opt(int32()),
  selector: opt(LabelSelector),
  template: opt(PodTemplateSpec, {}),
});

export const ReplicaSetCondition = v.pick(ConditionFields, ["type", "status", "lastTransitionTime", "reason", "message"]);

export const ReplicaSetStatus = v.object({
  replicas: opt(int32(), 0),
  fullyLabeledReplicas: opt(int32()),
  readyReplicas: opt(int32()),
  availableReplicas: opt(int32()),
  terminatingReplicas: opt(int32()),
  observedGeneration: opt(int64()),
  conditions: opt(mapList(ReplicaSetCondition, ["type"])),
});

export const ReplicaSet = objectOf({
  spec: ReplicaSetSpec,
  status: opt(ReplicaSetStatus, {}),
});
export type ReplicaSet = v.InferOutput<typeof ReplicaSet>;
export const ReplicaSetList = listOf(ReplicaSet);

/** SetDefaults_Deployment's conditional part: the rolling update parameters, and the pod template. */
export function defaultDeployment(deployment: Deployment): void {
  const strategy = deployment.spec.strategy;
  if (!strategy.type) strategy.type = "RollingUpdate";
  if (strategy.type === "RollingUpdate") {
    strategy.rollingUpdate ??= {};
    strategy.rollingUpdate.maxUnavailable ??= "25%";
    strategy.rollingUpdate.maxSurge ??= "25%";
  }
  defaultPodTemplateSpec(deployment.spec.template);
}

export function defaultReplicaSet(replicaSet: ReplicaSet): void {
  defaultPodTemplateSpec(replicaSet.spec.template);
}
