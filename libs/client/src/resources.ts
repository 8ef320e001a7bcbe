// The core kinds controllers read and write, named once: each app used to spell these out itself.
import type { ResourceRef } from "./types.js";

export const podsResource: ResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
export const nodesResource: ResourceRef = { group: "", version: "v1", plural: "nodes", namespaced: false };
