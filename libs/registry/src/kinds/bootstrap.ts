// Objects every cluster has from its first start. Kubernetes creates them in post-start hooks through
// its own API, only when missing; here they go through the same store, so they pass the same rules
// as a client's objects, and a restart finds them and leaves them alone.
import type { NamingProfile, ObjectHeader } from "@orch/api";
import { StatusError } from "@orch/machinery";
import type { KindDefinition, RequestContext } from "../generic/kind.js";
import { priorityClasses, systemPriorityClasses } from "./scheduling/priority-class.js";
import { ResourceStore, type StoreDeps } from "../generic/store.js";

/** The built-in objects, with the kind that serves each. */
export function builtinObjects(profile: NamingProfile): { kind: KindDefinition; objects: ObjectHeader[] }[] {
  return [{ kind: priorityClasses(profile), objects: systemPriorityClasses(profile) }];
}

/** Creates the built-in objects that do not exist yet. */
export async function ensureBuiltinObjects(deps: StoreDeps, profile: NamingProfile): Promise<void> {
  const ctx: RequestContext = { user: { username: "system:apiserver", groups: ["system:masters"] }, profile, warnings: [] };
  for (const { kind, objects } of builtinObjects(profile)) {
    const store = new ResourceStore(kind, deps);
    for (const obj of objects) {
      const namespace = obj.metadata.namespace ?? "";
      if (await deps.storage.get(store.key(namespace, obj.metadata.name!))) continue;
      try {
        await store.create(namespace, { value: structuredClone(obj) }, ctx, { fieldValidation: "Strict" });
      } catch (e) {
        // Created meanwhile by someone else: it exists, which is all this wants.
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
  }
}
