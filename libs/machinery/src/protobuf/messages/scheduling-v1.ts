// Protobuf field tables for k8s.io/api/scheduling/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const schedulingV1: MessageTable = {
  PriorityClass: `1:metadata:ObjectMeta 2:value:!int32 3:globalDefault:bool 4:description:string
    5:preemptionPolicy:?string`,
};
