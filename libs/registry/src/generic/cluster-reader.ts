// A ClusterReader over the storage: what strategies and answers read of other objects.
import type { ObjectHeader } from "@orch/api";
import type { Storage } from "@orch/storage";
import type { ClusterReader } from "./kind.js";

const resource = (group: string, plural: string) => `${group || "core"}/${plural}`;

export function storageClusterReader(storage: Storage): ClusterReader {
  return {
    list: async (group, plural, namespace) =>
      (await storage.list({ resource: resource(group, plural), namespace })).items.map((o) => JSON.parse(o.value) as ObjectHeader),
    get: async (group, plural, namespace, name) => {
      const stored = await storage.get({ resource: resource(group, plural), namespace, name });
      return stored ? (JSON.parse(stored.value) as ObjectHeader) : undefined;
    },
  };
}
