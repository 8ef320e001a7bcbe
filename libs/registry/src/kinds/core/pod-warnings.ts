// `Warning` headers for pods and pod templates: Kubernetes' pkg/api/pod/warnings.go
// (warningsForPodSpecAndMeta), the deprecated and suspicious things it points out, with its texts.
import type { Container, ObjectMeta, PodSpec, PodTemplateSpec } from "@orch/api";
import { FieldPath, formatQuantity, goQuote, quantityMilliValue } from "@orch/machinery";
import { emptyPodSpec } from "./pod-spec-validation.js";
import { tryQuantity } from "./resource-validation.js";

const deprecatedAnnotations: [string, string][] = [
  ["scheduler.alpha.kubernetes.io/critical-pod", 'non-functional in v1.16+; use the "priorityClassName" field instead'],
  ["security.alpha.kubernetes.io/sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'],
  ["security.alpha.kubernetes.io/unsafe-sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'],
];

const deprecatedNodeLabels: Record<string, string> = {
  "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
  "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
  "failure-domain.beta.kubernetes.io/region": 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
  "failure-domain.beta.kubernetes.io/zone": 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  "beta.kubernetes.io/instance-type": 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
};

const deprecatedVolumes: [string, string][] = [
  ["photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"],
  ["gitRepo", "deprecated in v1.11"],
  ["scaleIO", "deprecated in v1.16, non-functional in v1.22+"],
  ["flocker", "deprecated in v1.22, non-functional in v1.25+"],
  ["storageos", "deprecated in v1.22, non-functional in v1.25+"],
  ["quobyte", "deprecated in v1.22, non-functional in v1.25+"],
  ["glusterfs", "deprecated in v1.25, non-functional in v1.26+"],
  ["cephfs", "deprecated in v1.28, non-functional in v1.31+"],
  ["rbd", "deprecated in v1.28, non-functional in v1.31+"],
];
// Kubernetes names two of them differently in the warning.
const volumeWarningName: Record<string, string> = { storageos: "storageOS" };

const SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/";

/** Warnings for a pod template at `base` (`spec.template`, `template`). */
export const podTemplateWarnings = (template: PodTemplateSpec | undefined, base: FieldPath): string[] =>
  template ? warningsForPodSpecAndMeta(template.spec ?? emptyPodSpec(), template.metadata, base) : [];

/** Warnings for a pod's own spec. */
export const podWarnings = (spec: PodSpec | undefined, meta: ObjectMeta): string[] =>
  warningsForPodSpecAndMeta(spec ?? emptyPodSpec(), meta, undefined);

function warningsForPodSpecAndMeta(spec: PodSpec, meta: ObjectMeta, base: FieldPath | undefined): string[] {
  // A Go nil *field.Path: its children start a new root.
  const at = (name: string, ...more: string[]) => (base ? base.child(name, ...more) : FieldPath.root(name, ...more));
  const annotations = meta.annotations ?? {};
  const warnings: string[] = [];
  for (const key of Object.keys(spec.nodeSelector ?? {})) {
    const msg = deprecatedNodeLabels[key];
    if (msg) warnings.push(`${at("spec", "nodeSelector").key(key)}: ${msg}`);
  }
  for (const [key, msg] of deprecatedAnnotations) {
    if (key in annotations) warnings.push(`${at("metadata", "annotations").key(key)}: ${msg}`);
  }
  (spec.volumes ?? []).forEach((vol, i) => {
    const record = vol as unknown as Record<string, unknown>;
    for (const [source, msg] of deprecatedVolumes) {
      if (record[source] !== undefined)
        warnings.push(
          `${at("spec", "volumes")
            .index(i)
            .child(volumeWarningName[source] ?? source)}: ${msg}`,
        );
    }
  });
  const ips = new Set<string>();
  (spec.hostAliases ?? []).forEach((alias, i) => {
    if (ips.has(alias.ip)) warnings.push(`${at("spec", "hostAliases").index(i).child("ip")}: duplicate ip ${goQuote(alias.ip)}`);
    else ips.add(alias.ip);
  });
  const secrets = new Set<string>();
  const pullSecrets = spec.imagePullSecrets ?? [];
  pullSecrets.forEach((s, i) => {
    const name = s.name ?? "";
    if (pullSecrets.length > 1 && secrets.has(name))
      warnings.push(`${at("spec", "imagePullSecrets").index(i).child("name")}: duplicate name ${goQuote(name)}`);
    else secrets.add(name);
  });
  pullSecrets.forEach((s, i) => {
    if (!s.name) warnings.push(`${at("spec", "imagePullSecrets").index(i).child("name")}: invalid empty name ""`);
  });
  for (const resource of ["memory", "ephemeral-storage"]) {
    const raw = spec.overhead?.[resource];
    if (raw !== undefined) warnings.push(...fractionalBytes(raw, at("spec", "overhead").key(resource)));
  }
  if (!spec.securityContext?.seccompProfile && SECCOMP_POD in annotations) {
    warnings.push(`${at("metadata", "annotations").key(SECCOMP_POD)}: non-functional in v1.27+; use the "seccompProfile" field instead`);
  }
  const visit = (list: readonly Container[] | undefined, name: string) =>
    (list ?? []).forEach((c, i) => warnings.push(...containerWarnings(c, at("spec", name).index(i), annotations, at)));
  visit(spec.initContainers, "initContainers");
  visit(spec.containers, "containers");
  visit(spec.ephemeralContainers as Container[] | undefined, "ephemeralContainers");
  return warnings;
}

function fractionalBytes(raw: string | number, path: FieldPath): string[] {
  const q = tryQuantity(raw);
  if (!q || quantityMilliValue(q) % 1000n === 0n) return [];
  return [`${path}: fractional byte value ${goQuote(formatQuantity(q))} is invalid, must be an integer`];
}

function containerWarnings(
  c: Container,
  path: FieldPath,
  annotations: Record<string, string>,
  at: (name: string, ...more: string[]) => FieldPath,
): string[] {
  const warnings: string[] = [];
  const seccompKey = SECCOMP_CONTAINER + c.name;
  if (!c.securityContext?.seccompProfile && seccompKey in annotations) {
    warnings.push(`${at("metadata", "annotations").key(seccompKey)}: non-functional in v1.27+; use the "seccompProfile" field instead`);
  }
  for (const kind of ["limits", "requests"] as const) {
    for (const resource of ["memory", "ephemeral-storage"]) {
      const raw = c.resources[kind]?.[resource];
      if (raw !== undefined) warnings.push(...fractionalBytes(raw, path.child("resources", kind).key(resource)));
    }
  }
  // An env var defined twice: the later one hides the first unless it refers to it.
  const names = new Set<string>();
  (c.env ?? []).forEach((item, i) => {
    if (!names.has(item.name)) {
      names.add(item.name);
      return;
    }
    const ref = `$(${item.name})`;
    const value = item.value ?? "";
    if (item.valueFrom || value === ref || !value.includes(ref)) {
      warnings.push(
        `${path.child("env").index(i)}: hides previous definition of ${goQuote(item.name)}, which may be dropped when using apply`,
      );
    }
  });
  return warnings;
}
