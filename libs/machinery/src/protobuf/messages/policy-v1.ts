// Protobuf field tables for k8s.io/api/policy/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const policyV1: MessageTable = {
  PodDisruptionBudget: `1:metadata:ObjectMeta 2:spec:PodDisruptionBudgetSpec 3:status:PodDisruptionBudgetStatus`,
  PodDisruptionBudgetSpec: `1:minAvailable:IntOrString 2:selector:LabelSelector 3:maxUnavailable:IntOrString
    4:unhealthyPodEvictionPolicy:?string`,
  PodDisruptionBudgetStatus: `1:observedGeneration:int64 2:disruptedPods:map:Time 3:disruptionsAllowed:!int32
    4:currentHealthy:!int32 5:desiredHealthy:!int32 6:expectedPods:!int32 7:conditions:[]Condition`,
};
