// Pod (core/v1).
import { type NamingProfile, type Pod as PodObject, Pod, defaultPod } from "@orch/api";
import { type FieldError, fieldError } from "@orch/machinery";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { AGE, at, column, defineKind, statusSubresource } from "../../generic/define.js";
import { emptyPodSpec, podSpecPath, validateContainersOnlyForPod, validatePodSpec, validatePodSpecUpdate } from "./pod-spec-validation.js";
import { bindingAction } from "./pod-binding.js";
import { evictionAction } from "./pod-eviction.js";
import { podServiceAccountAdmission } from "./pod-service-account-admission.js";
import { admitPodPriority, keepPriorityOnUpdate } from "./pod-priority.js";
import { podCells } from "./pod-printer.js";
import { podWarnings } from "./pod-warnings.js";
import { podNameWarning } from "./workload-validation.js";

const specOf = (o: PodObject) => o.spec ?? emptyPodSpec();

/** validatePodMetadataAndSpec: the spec as a pod's own (see pod-spec-validation.ts). */
function validatePod(obj: PodObject): FieldError[] {
  const spec = specOf(obj);
  return [...validatePodSpec(spec, podSpecPath, { resourceIsPod: true }), ...validateContainersOnlyForPod(spec, podSpecPath)];
}

/** ValidatePodCreate adds: no ephemeral containers yet, no node while scheduling gates remain. */
function validatePodCreate(obj: PodObject): FieldError[] {
  const spec = specOf(obj);
  const errs = validatePod(obj);
  if ((spec.ephemeralContainers ?? []).length > 0)
    errs.push(fieldError.forbidden(podSpecPath.child("ephemeralContainers"), "cannot be set on create"));
  if (spec.nodeName && (spec.schedulingGates ?? []).length > 0) {
    errs.push(fieldError.forbidden(podSpecPath.child("nodeName"), "cannot be set until all schedulingGates have been cleared"));
  }
  return errs;
}

/**
 * A pod on a node gets its grace period (requested, else spec.terminationGracePeriodSeconds) for the
 * node to stop it; one never scheduled, or already finished, goes at once (Kubernetes' CheckGracefulDelete).
 */
function podGracePeriod(pod: PodObject, requested: number | undefined): number {
  const spec = pod.spec;
  const phase = pod.status?.phase;
  if (!spec?.nodeName || phase === "Succeeded" || phase === "Failed") return 0;
  const period = requested ?? spec.terminationGracePeriodSeconds ?? 0;
  return period < 0 ? 1 : period;
}

const podStrategy = (
  profile: NamingProfile,
  serviceAccounts = podServiceAccountAdmission(profile),
  priority = admitPodPriority(profile),
): Strategy<PodObject> => ({
  defaults: defaultPod,
  // Kubernetes' plugin order: ServiceAccount, then Priority.
  async admitCreate(obj, ctx, cluster) {
    await serviceAccounts(obj, ctx, cluster);
    await priority(obj, cluster);
  },
  // The Priority plugin on update: what it set on create stays when a request leaves it out.
  prepareForUpdate: keepPriorityOnUpdate,
  validate: validatePodCreate,
  validateUpdate: (obj, old) => [...validatePod(obj), ...validatePodSpecUpdate(specOf(obj), specOf(old))],
  // Kubernetes skips warnings on pod updates (a controllers' hot path).
  warnings: (obj, old) =>
    old ? [] : [...podNameWarning(obj.metadata.name, "the Pod's hostname"), ...podWarnings(specOf(obj), obj.metadata)],
  gracePeriod: podGracePeriod,
});

export const pods = (profile: NamingProfile): KindDefinition => {
  const podStatus = statusSubresource(podStrategy(profile), () => ({ phase: "Pending" }));
  return defineKind({
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    shortNames: ["po"],
    categories: ["all"],
    namespaced: true,
    schema: Pod,
    strategy: podStatus.strategy,
    subresources: { status: podStatus.status },
    actions: { eviction: evictionAction(), binding: bindingAction() },
    deleteReturnsObject: true,
    selectableFields: {
      "spec.nodeName": (o) => (at(o, "spec.nodeName") as string | undefined) ?? "",
      "spec.restartPolicy": (o) => at(o, "spec.restartPolicy") as string | undefined,
      "spec.schedulerName": (o) => at(o, "spec.schedulerName") as string | undefined,
      "spec.serviceAccountName": (o) => at(o, "spec.serviceAccountName") as string | undefined,
      "status.phase": (o) => at(o, "status.phase") as string | undefined,
      "status.podIP": (o) => (at(o, "status.podIP") as string | undefined) ?? "",
      "status.nominatedNodeName": (o) => (at(o, "status.nominatedNodeName") as string | undefined) ?? "",
    },
    printerColumns: [
      column("Ready", "string", (o) => podCells(o as PodObject).ready),
      column("Status", "string", (o) => podCells(o as PodObject).status),
      column("Restarts", "string", (o) => podCells(o as PodObject).restarts),
      AGE,
      column("IP", "string", (o) => at(o, "status.podIP"), 1),
      column("Node", "string", (o) => at(o, "spec.nodeName"), 1),
    ],
  });
};
