// Kubernetes' NodeRestriction admission plugin (plugin/pkg/admission/noderestriction), for the writes
// a node agent makes: a node (user `system:node:<name>` in group `system:nodes`) may create, change and
// delete only its own Node, write the status of and delete only the pods bound to it, and touch only
// its own Lease in the node-lease namespace. RBAC (the system:node role) decides which verbs a node has
// at all; this decides on which objects. Like Kubernetes' plugin it runs first in admission, before
// any webhook hears of the request.
import type { NamingProfile, ObjectHeader } from "@orch/api";
import { errors } from "@orch/machinery";
import type { AdmissionAttributes, AdmissionHook, KindDefinition } from "@orch/registry";

/** The node's name when the caller is a node agent, else undefined (NodeIdentifier). */
export function nodeOf(profile: NamingProfile, user: { username: string; groups: string[] }): string | undefined {
  const { userPrefix, group } = profile.nodes;
  if (!user.username.startsWith(userPrefix) || !user.groups.includes(group)) return undefined;
  const name = user.username.slice(userPrefix.length);
  return name === "" ? undefined : name;
}

const nodeNameOf = (o: ObjectHeader | undefined): string | undefined => (o as { spec?: { nodeName?: string } } | undefined)?.spec?.nodeName;
const taintsOf = (o: ObjectHeader | undefined): unknown => (o as { spec?: { taints?: unknown[] } } | undefined)?.spec?.taints ?? [];

export class NodeRestriction implements AdmissionHook {
  private readonly coordination: string;

  constructor(
    private readonly profile: NamingProfile,
    private readonly next: AdmissionHook,
  ) {
    this.coordination = profile.group("coordination");
  }

  private restricts(kind: KindDefinition): boolean {
    return (
      (kind.group === "" && (kind.plural === "pods" || kind.plural === "nodes")) ||
      (kind.group === this.coordination && kind.plural === "leases")
    );
  }

  handles(kind: KindDefinition): boolean {
    return this.restricts(kind) || this.next.handles(kind);
  }

  async mutate(a: AdmissionAttributes): Promise<ObjectHeader | undefined> {
    if (this.restricts(a.definition)) this.admit(a);
    return this.next.handles(a.definition) ? this.next.mutate(a) : a.object;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (this.next.handles(a.definition)) await this.next.validate(a);
  }

  private admit(a: AdmissionAttributes): void {
    const node = nodeOf(this.profile, a.ctx.user);
    if (node === undefined) return;
    const forbid = (why: string): never => {
      throw errors.forbidden({ group: a.definition.group, resource: a.definition.plural }, a.name, why);
    };
    if (a.definition.plural === "pods") {
      const bound = nodeNameOf(a.oldObject ?? a.object);
      if (a.subresource === "status") {
        if (bound !== node) forbid(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        return;
      }
      if (a.subresource !== "") forbid(`unexpected subresource ${a.subresource} for node "${node}"`);
      if (a.operation === "CREATE")
        forbid(`pod does not have "${this.profile.wellKnownDomain}/config.mirror" annotation, node "${node}" can only create mirror pods`);
      if (a.operation === "DELETE") {
        if (bound !== node) forbid(`node "${node}" can only delete pods with spec.nodeName set to itself`);
        return;
      }
      forbid(`node "${node}" can only update pod status`);
    }
    if (a.definition.plural === "nodes") {
      if (a.name !== node) forbid(`node "${node}" is not allowed to modify node "${a.name}"`);
      // Taints are the cluster's to set (the node lifecycle controller, administrators), not the node's.
      if (a.operation === "CREATE" && (taintsOf(a.object) as unknown[]).length > 0) forbid(`node "${node}" is not allowed to set taints`);
      if (
        a.operation === "UPDATE" &&
        a.subresource === "" &&
        JSON.stringify(taintsOf(a.object)) !== JSON.stringify(taintsOf(a.oldObject))
      ) {
        forbid(`node "${node}" is not allowed to modify taints`);
      }
      return;
    }
    // Leases: only its own, in the node-lease namespace.
    if (a.namespace === this.profile.nodeLeaseNamespace && a.name !== node) {
      forbid("can only access node lease with the same name as the requesting node");
    }
  }
}
