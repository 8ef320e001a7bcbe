// resource.{api_domain}/v1 kinds orch serves: DeviceClass. Mirrors k8s.io/api/resource/v1/types.go.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, opt, rawJson, str } from "../schema.js";
import { listOf } from "./meta-list.js";

export const CELDeviceSelector = v.object({
  expression: str(),
});

/** Exactly one member must be set (validation's job). */
export const DeviceSelector = v.object({
  cel: opt(CELDeviceSelector),
});

export const OpaqueDeviceConfiguration = v.object({
  driver: str(),
  /** Driver-defined data (RawExtension), kept as sent. */
  parameters: rawJson(),
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

export const DeviceClass = objectOf({
  spec: opt(DeviceClassSpec, {}),
});
export type DeviceClass = v.InferOutput<typeof DeviceClass>;
export const DeviceClassList = listOf(DeviceClass);
