// ReplicaSet (apps/v1). Validation after Kubernetes' apps ValidateReplicaSet and the replicaset
// strategy (selector immutable in apps/v1).
import { type ReplicaSet, ReplicaSet as ReplicaSetSchema, defaultReplicaSet } from "@orch/api";
import { type FieldError, FieldPath, jsonEqual } from "@orch/machinery";
import { type KindDefinition, type Strategy, specFields } from "../../generic/kind.js";
import { at, defineKind, formatSelector, replicaColumns, statusSubresource, replicasScale, selectorString } from "../../generic/define.js";
import { podTemplateWarnings } from "../core/pod-warnings.js";
import {
  podNameWarning,
  selectorImmutable,
  validateAppsSelector,
  validateCounts,
  validateReplicaStatus,
  validateTemplateForReplicaSet,
} from "../core/workload-validation.js";

const templatePath = FieldPath.root("spec", "template");

/** ValidateReplicaSetSpec. */
function validateReplicaSetSpec(rs: ReplicaSet): FieldError[] {
  const errs = validateCounts(rs.spec);
  const selector = validateAppsSelector(rs.spec.selector, errs);
  if (selector) errs.push(...validateTemplateForReplicaSet(rs.spec.template, selector));
  return errs;
}

const main: Strategy<ReplicaSet> = {
  defaults: defaultReplicaSet,
  validate: (obj) => validateReplicaSetSpec(obj),
  validateUpdate: (obj, old) => [...validateReplicaSetSpec(obj), ...selectorImmutable(obj.spec.selector, old.spec.selector)],
  warnings(obj, old) {
    const template = obj.spec.template;
    if (!old) return [...podNameWarning(obj.metadata.name), ...podTemplateWarnings(template, templatePath)];
    return jsonEqual(specFields(obj), specFields(old)) ? [] : podTemplateWarnings(template, templatePath);
  },
};

const replicaSetStatus = statusSubresource(main);

export const replicaSets = (): KindDefinition =>
  defineKind({
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    shortNames: ["rs"],
    categories: ["all"],
    namespaced: true,
    schema: ReplicaSetSchema,
    scale: replicasScale((o) => selectorString(at(o, "spec.selector"))),
    strategy: replicaSetStatus.strategy,
    subresources: {
      status: { ...replicaSetStatus.status, validateUpdate: (obj) => validateReplicaStatus(obj.status) },
    },
    printerColumns: replicaColumns((o) => formatSelector(at(o, "spec.selector"))),
  });
