// pods/binding (v1 Binding): `POST .../pods/{name}/binding` assigns a pending pod to a node, as
// Kubernetes' BindingREST (pkg/registry/core/pod/storage/storage.go): straight in storage, with the
// binding's uid/resourceVersion as preconditions, spec.nodeName set, the binding's annotations copied
// and the PodScheduled condition True. A pod already bound, being deleted, or still gated is a 409 on
// `pods/binding`. The legacy `POST .../bindings` collection is the same action (see `bindings`).
import { Binding, type ObjectHeader, type Pod } from "@orch/api";
import { type FieldError, errors, failure, fieldError, fieldErrorText, goAggregate, rfc3339, success } from "@orch/machinery";
import type { ActionSubresource, KindDefinition } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";

const BINDING = { group: "", resource: "pods/binding" };

/** ValidatePodBinding. */
function validateBinding(binding: Binding): FieldError[] {
  const errs: FieldError[] = [];
  const { kind, name } = binding.target;
  if (kind && kind !== "Node") errs.push(fieldError.notSupported("target.kind", kind, ["Node", "<empty>"]));
  if (!name) errs.push(fieldError.required("target.name"));
  return errs;
}

type Condition = { type: string; status: string; lastTransitionTime?: string | null; lastProbeTime?: string | null };

/** podutil.UpdatePodCondition: the condition replaced, its transition time kept when the status stays. */
function setScheduled(pod: Pod): void {
  const status = (pod.status ??= {});
  const conditions = (status.conditions ??= []) as Condition[];
  const index = conditions.findIndex((c) => c.type === "PodScheduled");
  const old = conditions[index];
  const condition: Condition = {
    type: "PodScheduled",
    status: "True",
    lastProbeTime: null,
    lastTransitionTime: old?.status === "True" ? (old.lastTransitionTime ?? null) : rfc3339(),
  };
  if (index < 0) conditions.push(condition);
  else conditions[index] = condition;
}

export const bindingAction = (): ActionSubresource<Pod, Binding> => ({
  group: "",
  version: "v1",
  kind: "Binding",
  schema: Binding,
  async answer(pod, binding, _ctx, _cluster, self) {
    const name = pod.metadata.name ?? "";
    if (binding.metadata.name !== name) throw errors.badRequest("name in URL does not match name in Binding object");
    // Kubernetes returns the aggregate as a plain error, which the apiserver answers as a 500.
    const errs = validateBinding(binding);
    if (errs.length > 0) throw failure(500, "", goAggregate(errs.map(fieldErrorText)));
    const node = binding.target.name ?? "";
    const { uid, resourceVersion } = binding.metadata;
    await self.rewrite(
      { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
      (current) => {
        const p = current as Pod;
        const refuse = (why: string) => errors.conflict(BINDING, name, why);
        if (p.metadata.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
        if (p.spec?.nodeName) throw refuse(`pod ${name} is already assigned to node ${JSON.stringify(p.spec.nodeName)}`);
        if ((p.spec?.schedulingGates ?? []).length > 0) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
        if (p.spec) p.spec.nodeName = node;
        const annotations = binding.metadata.annotations ?? {};
        if (Object.keys(annotations).length > 0) p.metadata.annotations = { ...p.metadata.annotations, ...annotations };
        setScheduled(p);
        return p as ObjectHeader;
      },
      false,
    );
    return { ...success(), code: 201 } as unknown as ObjectHeader;
  },
});

/** The legacy `bindings` collection: a POST binds the pod the body names, as `pods/{name}/binding`. */
export const bindings = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Binding",
    plural: "bindings",
    namespaced: true,
    schema: Binding,
    verbs: ["create"],
    actionOn: { plural: "pods", action: "binding" },
    printerColumns: [],
  });
