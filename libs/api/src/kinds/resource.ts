// resource.{api_domain}/v1 kinds orch serves: DeviceClass. Mirrors k8s.io/api/resource/v1/types.go.
// Required members decode when missing (Go's decoder leaves them zero); the DeviceClass strategy
// refuses them with 422, as Kubernetes' validation does.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, opt, rawJson, str } from "../schema.js";
import { listOf } from "./meta-list.js";

export const CELDeviceSelector = v.object({
  expression: opt(str()),
});

/** Exactly one member must be set (validation's job). */
export const DeviceSelector = v.object({
  cel: opt(CELDeviceSelector),
});

export const OpaqueDeviceConfiguration = v.object({
  driver: opt(str()),
  /** Driver-defined data (RawExtension), kept as sent. */
  parameters: opt(rawJson()),
});

/** DeviceClassConfiguration inlines DeviceConfiguration; exactly one member must be set. */
export const DeviceClassConfiguration = v.object({
  opaque: opt(OpaqueDeviceConfiguration),
});

export const DeviceClassSpec = v.object({
  selectors: opt(atomicList(DeviceSelector)),
  config: opt(atomicList(DeviceClassConfiguration)),
  extendedResourceName: opt(str()),
});

/** `spec` is required (spec 2.7): a class without one is refused by validation, not defaulted. */
export const DeviceClass = objectOf({
  spec: opt(DeviceClassSpec),
});
export type DeviceClass = v.InferOutput<typeof DeviceClass>;
export const DeviceClassList = listOf(DeviceClass);
