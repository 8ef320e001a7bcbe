// discovery.<domain>/v1 EndpointSlice (k8s.io/api/discovery/v1/types.go), with its defaults
// (pkg/apis/discovery/v1/defaults.go: a port's name "" and protocol TCP).
import * as v from "valibot";
import { ObjectReference, objectOf } from "../meta.js";
import { atomicList, bool, int32, opt, setList, str, stringMap } from "../schema.js";
import { listOf } from "./meta-list.js";

export const EndpointConditions = v.object({
  ready: opt(v.nullable(bool())),
  serving: opt(v.nullable(bool())),
  terminating: opt(v.nullable(bool())),
});

export const EndpointHints = v.object({
  forZones: opt(atomicList(v.object({ name: str() }))),
  forNodes: opt(atomicList(v.object({ name: str() }))),
});

export const SliceEndpoint = v.object({
  addresses: setList(str()),
  conditions: opt(EndpointConditions, {}),
  hostname: opt(v.nullable(str())),
  targetRef: opt(v.nullable(ObjectReference)),
  deprecatedTopology: opt(stringMap()),
  nodeName: opt(v.nullable(str())),
  zone: opt(v.nullable(str())),
  hints: opt(v.nullable(EndpointHints)),
});
export type SliceEndpoint = v.InferOutput<typeof SliceEndpoint>;

export const SlicePort = v.object({
  name: opt(v.nullable(str()), ""),
  protocol: opt(v.nullable(str()), "TCP"),
  port: opt(v.nullable(int32())),
  appProtocol: opt(v.nullable(str())),
});
export type SlicePort = v.InferOutput<typeof SlicePort>;

export const EndpointSlice = objectOf({
  addressType: opt(str()),
  // Not omitempty in Go: an absent list is sent as null.
  endpoints: opt(v.nullable(atomicList(SliceEndpoint))),
  ports: opt(v.nullable(atomicList(SlicePort))),
});
export type EndpointSlice = v.InferOutput<typeof EndpointSlice>;
export const EndpointSliceList = listOf(EndpointSlice);
