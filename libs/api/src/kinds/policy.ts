// policy/v1 Eviction, the body of the pods/eviction subresource. Mirrors k8s.io/api/policy/v1/types.go
// (its DeleteOptions is meta/v1's). orch serves no PodDisruptionBudget, so every eviction is allowed.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, bool, int64, opt, str } from "../schema.js";

export const EvictionDeleteOptions = v.object({
  apiVersion: opt(str()),
  kind: opt(str()),
  gracePeriodSeconds: opt(v.nullable(int64())),
  preconditions: opt(v.nullable(v.object({ uid: opt(v.nullable(str())), resourceVersion: opt(v.nullable(str())) }))),
  orphanDependents: opt(v.nullable(bool())),
  propagationPolicy: opt(v.nullable(str())),
  dryRun: opt(v.nullable(atomicList(str()))),
  ignoreStoreReadErrorWithClusterBreakingPotential: opt(v.nullable(bool())),
});

export const Eviction = objectOf({
  deleteOptions: opt(v.nullable(EvictionDeleteOptions)),
});
export type Eviction = v.InferOutput<typeof Eviction>;
