// scheduling.{api_domain}/v1 kinds orch serves: PriorityClass.
// Mirrors k8s.io/api/scheduling/v1/types.go; defaults from pkg/apis/scheduling/v1/defaults.go.
import type * as v from "valibot";
import { objectOf } from "../meta.js";
import { bool, int32, opt, str } from "../schema.js";
import { listOf } from "./meta-list.js";

export const PriorityClass = objectOf({
  // Required by the spec; a missing value is the strategy's 422, not a decode error.
  value: opt(int32()),
  globalDefault: opt(bool()),
  description: opt(str()),
  preemptionPolicy: opt(str(), "PreemptLowerPriority"),
});
export type PriorityClass = v.InferOutput<typeof PriorityClass>;
export const PriorityClassList = listOf(PriorityClass);
