// autoscaling/v1 Scale, served by the /scale subresource of deployments, replica sets, replication
// controllers and custom resources. Mirrors k8s.io/api/autoscaling/v1/types.go.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { int32, opt, str } from "../schema.js";

export const ScaleSpec = v.object({
  replicas: opt(int32()),
});

export const ScaleStatus = v.object({
  replicas: opt(int32(), 0),
  /** A serialized label selector, e.g. `app=web,tier in (fe)`. */
  selector: opt(str()),
});

export const Scale = objectOf({
  spec: opt(ScaleSpec, {}),
  status: opt(ScaleStatus, {}),
});
export type Scale = v.InferOutput<typeof Scale>;
