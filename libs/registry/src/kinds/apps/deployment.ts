// Deployment (apps/v1, spec 2.8). Validation after Kubernetes' apps ValidateDeployment and the
// deployment strategy (selector immutable in apps/v1).
import { type Deployment, Deployment as DeploymentSchema, defaultDeployment } from "@orch/api";
import { type FieldError, FieldPath, fieldError, jsonEqual, regexError, validateNonnegativeField } from "@orch/machinery";
import { type KindDefinition, type Strategy, specFields } from "../../generic/kind.js";
import {
  AGE,
  at,
  column,
  containerImages,
  containerNames,
  defineKind,
  formatSelector,
  readyOf,
  statusSubresource,
  replicasScale,
  selectorString,
} from "../../generic/define.js";
import { podTemplateWarnings } from "../core/pod-warnings.js";
import {
  podNameWarning,
  selectorImmutable,
  validateAppsSelector,
  validateDeploymentStatus,
  validateTemplateForReplicaSet,
} from "../core/workload-validation.js";

const spec = FieldPath.root("spec");

type IntOrString = number | string;
const PERCENT = /^[0-9]+%$/;
const PERCENT_ERROR = regexError("a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%");

/** ValidatePositiveIntOrPercent. */
function positiveIntOrPercent(value: IntOrString | undefined, path: FieldPath): FieldError[] {
  if (typeof value === "string") return PERCENT.test(value) ? [] : [fieldError.invalid(path, value, PERCENT_ERROR)];
  return validateNonnegativeField(value ?? 0, path);
}

/** getIntOrPercentValue: the number of a percentage, else the integer (a string that is neither counts as Atoi's 0). */
function intOrPercentValue(value: IntOrString | undefined): number {
  if (typeof value === "number") return value;
  if (value === undefined) return 0;
  if (PERCENT.test(value)) return Number(value.slice(0, -1));
  return /^[+-]?[0-9]+$/.test(value) ? Number(value) : 0;
}

function validateStrategy(strategy: Deployment["spec"]["strategy"]): FieldError[] {
  const at = spec.child("strategy");
  const rolling = strategy.rollingUpdate;
  switch (strategy.type) {
    case "Recreate":
      return rolling ? [fieldError.forbidden(at.child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")] : [];
    case "RollingUpdate": {
      const ru = at.child("rollingUpdate");
      if (!rolling) return [fieldError.required(ru, "this should be defaulted and never be nil")];
      const errs = [
        ...positiveIntOrPercent(rolling.maxUnavailable, ru.child("maxUnavailable")),
        ...positiveIntOrPercent(rolling.maxSurge, ru.child("maxSurge")),
      ];
      if (intOrPercentValue(rolling.maxUnavailable) === 0 && intOrPercentValue(rolling.maxSurge) === 0) {
        errs.push(fieldError.invalid(ru.child("maxUnavailable"), rolling.maxUnavailable ?? 0, "may not be 0 when `maxSurge` is 0"));
      }
      const max = rolling.maxUnavailable;
      if (typeof max === "string" && PERCENT.test(max) && intOrPercentValue(max) > 100) {
        errs.push(fieldError.invalid(ru.child("maxUnavailable"), max, "must not be greater than 100%"));
      }
      return errs;
    }
    default:
      return [fieldError.notSupported(at, strategy, ["Recreate", "RollingUpdate"])];
  }
}

/** ValidateDeploymentSpec. */
function validateDeploymentSpec(d: Deployment): FieldError[] {
  const s = d.spec;
  const errs = validateNonnegativeField(s.replicas, spec.child("replicas"));
  const selector = validateAppsSelector(s.selector, errs);
  if (selector) errs.push(...validateTemplateForReplicaSet(s.template, selector));
  errs.push(...validateStrategy(s.strategy));
  errs.push(...validateNonnegativeField(s.minReadySeconds ?? 0, spec.child("minReadySeconds")));
  if (s.revisionHistoryLimit !== undefined)
    errs.push(...validateNonnegativeField(s.revisionHistoryLimit, spec.child("revisionHistoryLimit")));
  const deadline = s.progressDeadlineSeconds;
  if (deadline !== undefined) {
    errs.push(...validateNonnegativeField(deadline, spec.child("progressDeadlineSeconds")));
    if (deadline <= (s.minReadySeconds ?? 0)) {
      errs.push(fieldError.invalid(spec.child("progressDeadlineSeconds"), deadline, "must be greater than minReadySeconds"));
    }
  }
  return errs;
}

/** Annotations are copied to the replica sets, so their changes are a new generation too. */
const generationSource = (o: Deployment) => ({ ...specFields(o), annotations: o.metadata.annotations });
const templatePath = spec.child("template");

const main: Strategy<Deployment> = {
  defaults: defaultDeployment,
  validate: (obj) => validateDeploymentSpec(obj),
  validateUpdate: (obj, old) => [...validateDeploymentSpec(obj), ...selectorImmutable(obj.spec.selector, old.spec.selector)],
  warnings(obj, old) {
    if (!old) return [...podNameWarning(obj.metadata.name), ...podTemplateWarnings(obj.spec.template, templatePath)];
    return jsonEqual(generationSource(obj), generationSource(old)) ? [] : podTemplateWarnings(obj.spec.template, templatePath);
  },
  generationSource,
};

const deploymentStatus = statusSubresource(main);

export const deployments = (): KindDefinition =>
  defineKind({
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    shortNames: ["deploy"],
    categories: ["all"],
    namespaced: true,
    schema: DeploymentSchema,
    scale: replicasScale((o) => selectorString(at(o, "spec.selector"))),
    strategy: deploymentStatus.strategy,
    subresources: {
      status: {
        ...deploymentStatus.status,
        // deploymentStatusStrategy resets spec and labels only: the controller records its revision
        // annotations together with the status.
        prepareForUpdate(obj, old, ctx) {
          const annotations = obj.metadata.annotations;
          deploymentStatus.status.prepareForUpdate!(obj, old, ctx);
          if (annotations) obj.metadata.annotations = annotations;
          else delete obj.metadata.annotations;
        },
        validateUpdate: (obj, old) => validateDeploymentStatus(obj.status, old.status),
      },
    },
    printerColumns: [
      column("Ready", "string", readyOf),
      column("Up-to-date", "integer", (o) => at(o, "status.updatedReplicas") ?? 0),
      column("Available", "integer", (o) => at(o, "status.availableReplicas") ?? 0),
      AGE,
      column("Containers", "string", containerNames, 1),
      column("Images", "string", containerImages, 1),
      column("Selector", "string", (o) => formatSelector(at(o, "spec.selector")), 1),
    ],
  });
