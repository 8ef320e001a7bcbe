// ReplicationController (core/v1, spec 2.9). Validation after Kubernetes' ValidateReplicationController:
// the selector (defaulted from the template labels) is required and must match them; a template is
// required; unlike the apps kinds the selector may change.
import { type ReplicationController, ReplicationController as RCSchema, defaultReplicationController } from "@orch/api";
import { type FieldError, FieldPath, fieldError, jsonEqual, validateNonnegativeField } from "@orch/machinery";
import { type KindDefinition, type Strategy, specFields } from "../../generic/kind.js";
import { at, defineKind, formatLabels, replicaColumns, statusSubresource, replicasScale, setSelectorString } from "../../generic/define.js";
import { podTemplateWarnings } from "./pod-warnings.js";
import { podNameWarning, validateRCTemplate, validateReplicaStatus } from "./workload-validation.js";

const spec = FieldPath.root("spec");

/** ValidateReplicationControllerSpec. */
function validateRCSpec(rc: ReplicationController): FieldError[] {
  const s = rc.spec;
  const errs = validateNonnegativeField(s.minReadySeconds ?? 0, spec.child("minReadySeconds"));
  if (Object.keys(s.selector ?? {}).length === 0) errs.push(fieldError.required(spec.child("selector")));
  errs.push(...validateNonnegativeField(s.replicas, spec.child("replicas")));
  errs.push(...validateRCTemplate(s.template, s.selector));
  return errs;
}

const main: Strategy<ReplicationController> = {
  defaults: defaultReplicationController,
  validate: (obj) => validateRCSpec(obj),
  validateUpdate: (obj) => validateRCSpec(obj),
  warnings(obj, old) {
    const template = obj.spec.template;
    const path = spec.child("template");
    if (!old) return [...podNameWarning(obj.metadata.name), ...podTemplateWarnings(template, path)];
    return jsonEqual(specFields(obj), specFields(old)) ? [] : podTemplateWarnings(template, path);
  },
};

const rcStatus = statusSubresource(main);

export const replicationControllers = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ReplicationController",
    plural: "replicationcontrollers",
    shortNames: ["rc"],
    categories: ["all"],
    namespaced: true,
    schema: RCSchema,
    scale: replicasScale((o) => setSelectorString(at(o, "spec.selector"))),
    strategy: rcStatus.strategy,
    subresources: { status: { ...rcStatus.status, validateUpdate: (obj) => validateReplicaStatus(obj.status) } },
    printerColumns: replicaColumns((o) => formatLabels(at(o, "spec.selector"))),
  });
