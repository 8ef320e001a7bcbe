// Protobuf field tables for k8s.io/api/coordination/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const coordinationV1: MessageTable = {
  Lease: `1:metadata:ObjectMeta 2:spec:LeaseSpec`,
  LeaseSpec: `1:holderIdentity:?string 2:leaseDurationSeconds:?int32 3:acquireTime:MicroTime 4:renewTime:MicroTime
    5:leaseTransitions:?int32 6:strategy:?string 7:preferredHolder:?string`,
};
