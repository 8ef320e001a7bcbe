// coordination.<domain>/v1 Lease: the lock controllers use for leader election, as in Kubernetes
// (k8s.io/api/coordination/v1/types.go).
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { int32, microTime, opt, str } from "../schema.js";

export const LeaseSpec = v.object({
  holderIdentity: opt(str()),
  leaseDurationSeconds: opt(int32()),
  acquireTime: opt(microTime()),
  renewTime: opt(microTime()),
  leaseTransitions: opt(int32()),
  strategy: opt(str()),
  preferredHolder: opt(str()),
});

export const Lease = objectOf({
  spec: opt(LeaseSpec, {}),
});
export type Lease = v.InferOutput<typeof Lease>;
