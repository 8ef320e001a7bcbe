// The one admission hook the generic store calls on writes, as Kubernetes' admission chain around
// its registry: mutating admission before the strategy prepares and validates an object, validating
// admission after. What runs there (webhooks) is the apiserver's; the store only says when.
import type { ObjectHeader } from "@orch/api";
import { type GroupResource, type StatusError, errors } from "@orch/machinery";
import type { KindDefinition, RequestContext } from "./kind.js";

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** Kubernetes' admission.Attributes: what is written, where, by whom. */
export interface AdmissionAttributes {
  /** The kind served at the endpoint (names the resource, scope and group). */
  definition: KindDefinition;
  /** The kind of `object`: the definition's, or autoscaling/v1 Scale on `/scale`. */
  kind: GroupVersionKind;
  /** `""` on the main endpoint. */
  subresource: string;
  operation: AdmissionOperation;
  namespace: string;
  /** `""` when a create generates the name. */
  name: string;
  /** The object being written; undefined on DELETE. */
  object: ObjectHeader | undefined;
  /** The stored object on UPDATE and DELETE. */
  oldObject: ObjectHeader | undefined;
  dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions (meta.k8s.io/v1) as the webhook sees them. */
  options: Record<string, unknown>;
  ctx: RequestContext;
}

export interface AdmissionHook {
  /**
   * Whether admission could apply to this kind at all: false when no configuration exists, which keeps
   * the write path free of any admission cost.
   */
  handles(kind: KindDefinition): boolean;
  /** Mutating admission: the object to carry on with (a changed copy, decoded again by the store) or the same one. */
  mutate(attributes: AdmissionAttributes): Promise<ObjectHeader | undefined>;
  /** Validating admission: resolves when every matching webhook allowed the request, else throws a StatusError. */
  validate(attributes: AdmissionAttributes): Promise<void>;
}

/**
 * An admission plugin's refusal (Kubernetes' admission.NewForbidden): the object is named by its name,
 * else its generateName (a generated name does not exist yet), else "Unknown".
 */
export function forbiddenByAdmission(gr: GroupResource, obj: ObjectHeader, why: string): StatusError {
  return errors.forbidden(gr, obj.metadata.name || obj.metadata.generateName || "Unknown", why);
}
