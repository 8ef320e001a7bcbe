// Rules the replica-managing kinds share: selector versus template (apps ValidatePodTemplateSpecForReplicaSet
// and core ValidatePodTemplateSpecForRC), status counts, selector immutability and the name warning.
import type { LabelSelector, PodTemplateSpec } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  type LabelSelector as Selector,
  type LabelSelectorObject,
  fieldError,
  fieldImmutableErrorMsg,
  isDNS1123Label,
  jsonEqual,
  labelSelectorFromObject,
  labelSelectorFromSet,
  labelSelectorIsEverything,
  labelSelectorMatches,
  validateLabelSelector,
  validateNonnegativeField,
} from "@orch/machinery";
import { emptyPodSpec, validatePodTemplateSpec } from "./pod-spec-validation.js";

const spec = FieldPath.root("spec");
const nonNegative = (value: number | undefined, path: FieldPath) => validateNonnegativeField(value ?? 0, path);

/**
 * An apps/v1 `spec.selector` (Deployment, ReplicaSet): required, valid, not empty. Returns the parsed
 * selector for the template check, or undefined when it does not parse ("invalid label selector").
 */
export function validateAppsSelector(selector: LabelSelector | undefined, errs: FieldError[]): Selector | undefined {
  const at = spec.child("selector");
  if (!selector) errs.push(fieldError.required(at));
  else {
    errs.push(...validateLabelSelector(selector, at));
    const size = Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length;
    // Kubernetes says "deployment" for replica sets too.
    if (size === 0) errs.push(fieldError.invalid(at, selector, "empty selector is invalid for deployment"));
  }
  try {
    return labelSelectorFromObject(selector as LabelSelectorObject | undefined);
  } catch {
    errs.push(fieldError.invalid(at, selector, "invalid label selector"));
    return undefined;
  }
}

/** The template must carry labels the selector matches (unless the selector selects everything). */
function selectorMatchesTemplate(selector: Selector, template: PodTemplateSpec, path: FieldPath): FieldError[] {
  const labels = template.metadata.labels;
  if (labelSelectorIsEverything(selector) || labelSelectorMatches(selector, labels ?? {})) return [];
  return [fieldError.invalid(path.child("metadata", "labels"), labels ?? null, "`selector` does not match template `labels`")];
}

/** The pod template of a replica-managing kind: restartPolicy Always, no activeDeadlineSeconds. */
function replicaTemplateRules(template: PodTemplateSpec, path: FieldPath, kind: string): FieldError[] {
  const errs: FieldError[] = [];
  const podSpec = template.spec ?? emptyPodSpec();
  if (podSpec.restartPolicy !== "Always") {
    errs.push(fieldError.notSupported(path.child("spec", "restartPolicy"), podSpec.restartPolicy ?? "", ["Always"]));
  }
  if (podSpec.activeDeadlineSeconds !== undefined) {
    errs.push(fieldError.forbidden(path.child("spec", "activeDeadlineSeconds"), `activeDeadlineSeconds in ${kind} is not Supported`));
  }
  return errs;
}

/** ValidatePodTemplateSpecForReplicaSet (Deployment and ReplicaSet). */
export function validateTemplateForReplicaSet(template: PodTemplateSpec, selector: Selector): FieldError[] {
  const at = spec.child("template");
  return [
    ...selectorMatchesTemplate(selector, template, at),
    ...validatePodTemplateSpec(template, at),
    ...replicaTemplateRules(template, at, "ReplicaSet"),
  ];
}

/** ValidatePodTemplateSpecForRC: a template is required; it must match a non-empty selector. */
export function validateRCTemplate(template: PodTemplateSpec | undefined, selector: Record<string, string> | undefined): FieldError[] {
  const at = spec.child("template");
  if (!template) return [fieldError.required(at)];
  return [
    ...selectorMatchesTemplate(labelSelectorFromSet(selector ?? {}), template, at),
    ...validatePodTemplateSpec(template, at),
    ...replicaTemplateRules(template, at, "ReplicationController"),
  ];
}

/** ValidateImmutableField on `spec.selector`. */
export function selectorImmutable(selector: unknown, old: unknown): FieldError[] {
  return jsonEqual(selector ?? null, old ?? null)
    ? []
    : [fieldError.invalid(spec.child("selector"), selector ?? null, fieldImmutableErrorMsg)];
}

/** The `replicas` and `minReadySeconds` every replica-managing spec has. */
export function validateCounts(s: { replicas?: number; minReadySeconds?: number }): FieldError[] {
  return [...nonNegative(s.replicas, spec.child("replicas")), ...nonNegative(s.minReadySeconds, spec.child("minReadySeconds"))];
}

interface ReplicaStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  terminatingReplicas?: number;
  observedGeneration?: number;
}

/** ValidateReplicaSetStatus / ValidateReplicationControllerStatus. */
export function validateReplicaStatus(status: ReplicaStatus | undefined): FieldError[] {
  const s = status ?? {};
  const at = FieldPath.root("status");
  const errs: FieldError[] = [];
  for (const f of [
    "replicas",
    "fullyLabeledReplicas",
    "readyReplicas",
    "availableReplicas",
    "terminatingReplicas",
    "observedGeneration",
  ] as const) {
    errs.push(...nonNegative(s[f], at.child(f)));
  }
  const replicas = s.replicas ?? 0;
  const msg = "cannot be greater than status.replicas";
  for (const f of ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] as const) {
    if ((s[f] ?? 0) > replicas) errs.push(fieldError.invalid(at.child(f), s[f], msg));
  }
  if ((s.availableReplicas ?? 0) > (s.readyReplicas ?? 0)) {
    errs.push(fieldError.invalid(at.child("availableReplicas"), s.availableReplicas, "cannot be greater than readyReplicas"));
  }
  return errs;
}

interface DeploymentStatus extends ReplicaStatus {
  updatedReplicas?: number;
  unavailableReplicas?: number;
  collisionCount?: number;
}

/** ValidateDeploymentStatusUpdate. */
export function validateDeploymentStatus(status: DeploymentStatus | undefined, old: DeploymentStatus | undefined): FieldError[] {
  const s = status ?? {};
  const at = FieldPath.root("status");
  const errs: FieldError[] = [];
  for (const f of [
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
    "terminatingReplicas",
  ] as const) {
    errs.push(...nonNegative(s[f], at.child(f)));
  }
  if (s.collisionCount !== undefined) errs.push(...nonNegative(s.collisionCount, at.child("collisionCount")));
  const replicas = s.replicas ?? 0;
  const msg = "cannot be greater than status.replicas";
  for (const f of ["updatedReplicas", "readyReplicas", "availableReplicas"] as const) {
    if ((s[f] ?? 0) > replicas) errs.push(fieldError.invalid(at.child(f), s[f], msg));
  }
  if ((s.availableReplicas ?? 0) > (s.readyReplicas ?? 0)) {
    errs.push(fieldError.invalid(at.child("availableReplicas"), s.availableReplicas, "cannot be greater than readyReplicas"));
  }
  const before = old?.collisionCount;
  if (before !== undefined && (s.collisionCount === undefined || s.collisionCount < before)) {
    errs.push(fieldError.invalid(at.child("collisionCount"), s.collisionCount ?? 0, "cannot be decremented"));
  }
  return errs;
}

/** The create warning for names that end up in pod names and hostnames. */
export function podNameWarning(name: string | undefined, what = "Pod names and hostnames"): string[] {
  const msgs = isDNS1123Label(name ?? "");
  if (msgs.length === 0) return [];
  return [
    `metadata.name: this is used in ${what}, which can result in surprising behavior; a DNS label is recommended: [${msgs.join(" ")}]`,
  ];
}
