// Pod spec validation shared by Pod, PodTemplate and the workload kinds: Kubernetes'
// pkg/apis/core/validation (ValidatePodTemplateSpec, ValidatePodSpec and what they call, v1.36, with
// the feature gates that are on by default), with its field paths and messages, including its quirks
// (e.g. `spec.template.labels` for a template's labels). Containers are in container-validation.ts,
// resources in resource-validation.ts; docs/rules/workloads.md lists what is left out.
import type { PodSpec, PodTemplateSpec, Toleration, Volume } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  fieldError,
  isValidLabelValue,
  jsonEqual,
  nameIsDNSSubdomain,
  quantitySign,
  regexError,
  validateAnnotations,
  validateLabels,
} from "@orch/machinery";
import { type ContainerContext, validateContainers, validateInitContainers } from "./container-validation.js";
import {
  MAX_INT32,
  dnsLabel,
  dnsSubdomain,
  inclusiveRangeError,
  invalidEach,
  oneOf,
  qualifiedName,
  validIP,
  validateSeccompProfile,
} from "./pod-validation-formats.js";
import { tryQuantity, validateResourceRequirements } from "./resource-validation.js";

export interface PodValidationOptions {
  /** The spec is a Pod's own (not a template in another object): host ports must then match exactly. */
  resourceIsPod?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Pod template and pod spec
// ---------------------------------------------------------------------------------------------

/** What a missing `spec` decodes to in Go: the zero PodSpec with its defaults. */
export function emptyPodSpec(): PodSpec {
  return {
    containers: [],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    schedulerName: "default-scheduler",
    securityContext: {},
  } as PodSpec;
}

/** ValidatePodTemplateSpec: the template's labels and annotations, its spec; no ephemeral containers. */
export function validatePodTemplateSpec(template: PodTemplateSpec, path: FieldPath, opts: PodValidationOptions = {}): FieldError[] {
  const spec = template.spec ?? emptyPodSpec();
  const errs = [
    ...validateLabels(template.metadata.labels, path.child("labels")),
    ...validateAnnotations(template.metadata.annotations, path.child("annotations")),
    ...validatePodSpec(spec, path.child("spec"), opts),
  ];
  if ((spec.ephemeralContainers ?? []).length > 0) {
    errs.push(fieldError.forbidden(path.child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"));
  }
  return errs;
}

const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];

/** ValidatePodSpec. */
export function validatePodSpec(spec: PodSpec, path: FieldPath, opts: PodValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.terminationGracePeriodSeconds === undefined) errs.push(fieldError.required(path.child("terminationGracePeriodSeconds")));
  const grace = spec.terminationGracePeriodSeconds;
  const [volumes, volumeErrs] = validateVolumes(spec.volumes ?? [], path.child("volumes"));
  errs.push(...volumeErrs);
  const claims = new Set((spec.resourceClaims ?? []).map((c) => c.name).filter((n) => n !== ""));
  errs.push(...validatePodResourceClaims(spec.resourceClaims ?? [], path.child("resourceClaims")));
  const ctx: ContainerContext = { volumes, claims, grace, restartPolicy: spec.restartPolicy };
  errs.push(...validateContainers(spec.containers, ctx, path.child("containers")));
  errs.push(...validateInitContainers(spec.initContainers ?? [], spec.containers, ctx, path.child("initContainers")));
  errs.push(...validateHostNetworkPorts(spec, path, opts));
  errs.push(...oneOf(spec.restartPolicy, RESTART_POLICIES, path.child("restartPolicy")));
  errs.push(...oneOf(spec.dnsPolicy, DNS_POLICIES, path.child("dnsPolicy")));
  errs.push(...validateLabels(spec.nodeSelector, path.child("nodeSelector")));
  errs.push(...validatePodSecurityContext(spec, path.child("securityContext")));
  errs.push(...validateDNSConfig(spec, path.child("dnsConfig")));
  (spec.readinessGates ?? []).forEach((g, i) =>
    errs.push(...qualifiedName(g.conditionType, path.child("readinessGates").index(i).child("conditionType"))),
  );
  errs.push(...validateSchedulingGates(spec.schedulingGates ?? [], path.child("schedulingGates")));
  if (spec.serviceAccountName)
    errs.push(
      ...invalidEach(path.child("serviceAccountName"), spec.serviceAccountName, nameIsDNSSubdomain(spec.serviceAccountName, false)),
    );
  if (spec.nodeName) errs.push(...invalidEach(path.child("nodeName"), spec.nodeName, nameIsDNSSubdomain(spec.nodeName, false)));
  const deadline = spec.activeDeadlineSeconds;
  if (deadline !== undefined && (deadline < 1 || deadline > MAX_INT32)) {
    errs.push(fieldError.invalid(path.child("activeDeadlineSeconds"), deadline, inclusiveRangeError(1, MAX_INT32)));
  }
  if (spec.hostname) errs.push(...dnsLabel(spec.hostname, path.child("hostname")));
  if (spec.subdomain) errs.push(...dnsLabel(spec.subdomain, path.child("subdomain")));
  errs.push(...validateTolerations(spec.tolerations ?? [], path.child("tolerations")));
  (spec.hostAliases ?? []).forEach((alias, i) => {
    const at = path.child("hostAliases").index(i);
    errs.push(...validIP(alias.ip, at.child("ip")));
    (alias.hostnames ?? []).forEach((h, j) => errs.push(...dnsSubdomain(h, at.child("hostnames").index(j))));
  });
  if (spec.priorityClassName)
    errs.push(...invalidEach(path.child("priorityClassName"), spec.priorityClassName, nameIsDNSSubdomain(spec.priorityClassName, false)));
  if (spec.runtimeClassName !== undefined)
    errs.push(...invalidEach(path.child("runtimeClassName"), spec.runtimeClassName, nameIsDNSSubdomain(spec.runtimeClassName, false)));
  if (spec.preemptionPolicy !== undefined)
    errs.push(...oneOf(spec.preemptionPolicy, ["PreemptLowerPriority", "Never"], path.child("preemptionPolicy")));
  if (spec.overhead) errs.push(...validateResourceRequirements({ limits: spec.overhead }, claims, path.child("overhead")));
  if (spec.os) {
    const name = path.child("os", "name");
    if (!spec.os.name) errs.push(fieldError.required(name));
    else if (!["linux", "windows"].includes(spec.os.name)) errs.push(fieldError.notSupported(name, spec.os.name, ["linux", "windows"]));
  }
  return errs;
}

/** validatePodHostNetworkDeps: with hostNetwork a hostPort must equal its containerPort (0 allowed in templates). */
function validateHostNetworkPorts(spec: PodSpec, path: FieldPath, opts: PodValidationOptions): FieldError[] {
  if (!spec.hostNetwork) return [];
  const errs: FieldError[] = [];
  spec.containers.forEach((c, i) => {
    (c.ports ?? []).forEach((p, j) => {
      const hostPort = p.hostPort ?? 0;
      if ((opts.resourceIsPod || hostPort !== 0) && hostPort !== p.containerPort) {
        const at = path.child("containers").index(i).child("ports").index(j).child("hostPort");
        errs.push(fieldError.invalid(at, hostPort, "must match `containerPort` when `hostNetwork` is true"));
      }
    });
  });
  return errs;
}

function validatePodSecurityContext(spec: PodSpec, path: FieldPath): FieldError[] {
  const sc = spec.securityContext;
  const errs: FieldError[] = [];
  const id = (value: number | undefined, at: FieldPath) =>
    value !== undefined && (value < 0 || value > MAX_INT32) ? [fieldError.invalid(at, value, inclusiveRangeError(0, MAX_INT32))] : [];
  errs.push(
    ...id(sc.fsGroup, path.child("fsGroup")),
    ...id(sc.runAsUser, path.child("runAsUser")),
    ...id(sc.runAsGroup, path.child("runAsGroup")),
  );
  (sc.supplementalGroups ?? []).forEach((g, i) => errs.push(...id(g, path.child("supplementalGroups").index(i))));
  // Kubernetes keeps these in the internal security context, hence the path.
  if (spec.shareProcessNamespace && spec.hostPID) {
    errs.push(fieldError.invalid(path.child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"));
  }
  const sysctlNames = new Set<string>();
  (sc.sysctls ?? []).forEach((s, i) => {
    const at = path.child("sysctls").index(i).child("name");
    if (!s.name) errs.push(fieldError.required(at));
    else if (s.name.length > 253 || !SYSCTL_RE.test(s.name))
      errs.push(fieldError.invalid(at, s.name, `must have at most 253 characters and match regex ${SYSCTL_RE.source}`));
    else if (sysctlNames.has(s.name)) errs.push(fieldError.duplicate(at, s.name));
    sysctlNames.add(s.name);
  });
  if (sc.fsGroupChangePolicy !== undefined && !["Always", "OnRootMismatch"].includes(sc.fsGroupChangePolicy)) {
    errs.push(fieldError.notSupported(path.child("fsGroupChangePolicy"), sc.fsGroupChangePolicy, ["Always", "OnRootMismatch"]));
  }
  errs.push(...validateSeccompProfile(sc.seccompProfile, path.child("seccompProfile")));
  return errs;
}

const SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?";
const SYSCTL_RE = new RegExp(`^(${SYSCTL_SEGMENT}[\\./])*${SYSCTL_SEGMENT}$`);

function validateDNSConfig(spec: PodSpec, path: FieldPath): FieldError[] {
  const config = spec.dnsConfig;
  if (spec.dnsPolicy === "None") {
    if (!config) return [fieldError.required(path, "must provide `dnsConfig` when `dnsPolicy` is None")];
    if ((config.nameservers ?? []).length === 0) {
      return [fieldError.required(path.child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None")];
    }
  }
  if (!config) return [];
  const errs: FieldError[] = [];
  const nameservers = config.nameservers ?? [];
  if (nameservers.length > 3)
    errs.push(fieldError.invalid(path.child("nameservers"), nameservers, "must not have more than 3 nameservers"));
  nameservers.forEach((ns, i) => errs.push(...validIP(ns, path.child("nameservers").index(i))));
  const searches = config.searches ?? [];
  if (searches.length > 32) errs.push(fieldError.invalid(path.child("searches"), searches, "must not have more than 32 search paths"));
  if (searches.join(" ").length > 2048) {
    errs.push(
      fieldError.invalid(path.child("searches"), searches, "must not have more than 2048 characters (including spaces) in the search list"),
    );
  }
  searches.forEach((search, i) => {
    if (search === ".") return;
    const name = search.replace(/\.$/, "");
    const re = /^_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*$/;
    const at = path.child("searches").index(i);
    if (name.length > 253) errs.push(fieldError.invalid(at, name, "must be no more than 253 characters"));
    if (!re.test(name)) {
      const msg =
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character";
      errs.push(
        fieldError.invalid(
          at,
          name,
          regexError(msg, "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*", "example.com"),
        ),
      );
    }
  });
  (config.options ?? []).forEach((o, i) => {
    if (!o.name) errs.push(fieldError.required(path.child("options").index(i), "must not be empty"));
  });
  return errs;
}

function validateSchedulingGates(gates: readonly { name: string }[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  gates.forEach((g, i) => {
    errs.push(...qualifiedName(g.name, path.index(i)));
    if (seen.has(g.name)) errs.push(fieldError.duplicate(path.index(i), g.name));
    seen.add(g.name);
  });
  return errs;
}

function validatePodResourceClaims(claims: NonNullable<PodSpec["resourceClaims"]>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  claims.forEach((claim, i) => {
    const at = path.index(i);
    if (!claim.name) errs.push(fieldError.required(at.child("name")));
    else if (names.has(claim.name)) errs.push(fieldError.duplicate(at.child("name"), claim.name));
    else {
      errs.push(...dnsLabel(claim.name, at.child("name")));
      names.add(claim.name);
    }
    const named = claim.resourceClaimName !== undefined;
    const templated = claim.resourceClaimTemplateName !== undefined;
    if (named && templated)
      errs.push(fieldError.invalid(at, claim, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"));
    if (!named && !templated)
      errs.push(fieldError.invalid(at, claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"));
    if (named)
      errs.push(
        ...invalidEach(at.child("resourceClaimName"), claim.resourceClaimName, nameIsDNSSubdomain(claim.resourceClaimName!, false)),
      );
    if (templated)
      errs.push(
        ...invalidEach(
          at.child("resourceClaimTemplateName"),
          claim.resourceClaimTemplateName,
          nameIsDNSSubdomain(claim.resourceClaimTemplateName!, false),
        ),
      );
  });
  return errs;
}

/** ValidateTolerations. */
export function validateTolerations(tolerations: readonly Toleration[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  tolerations.forEach((t, i) => {
    const at = path.index(i);
    const key = t.key ?? "";
    const operator = t.operator ?? "";
    const value = t.value ?? "";
    const effect = t.effect ?? "";
    if (key) errs.push(...qualifiedName(key, at.child("key")));
    if (!key && operator !== "Exists") {
      errs.push(
        fieldError.invalid(
          at.child("operator"),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && effect !== "NoExecute") {
      errs.push(fieldError.invalid(at.child("effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === "Equal" || operator === "") {
      const msgs = isValidLabelValue(value);
      if (msgs.length > 0) errs.push(fieldError.invalid(at.child("operator"), value, msgs.join(";")));
    } else if (operator === "Exists") {
      if (value) errs.push(fieldError.invalid(at.child("operator"), value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(fieldError.notSupported(at.child("operator"), operator, ["Equal", "Exists"]));
    }
    const effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if (effect && !effects.includes(effect)) errs.push(fieldError.notSupported(at.child("effect"), effect, effects));
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Volumes
// ---------------------------------------------------------------------------------------------

const VOLUME_SOURCES = [
  "emptyDir",
  "hostPath",
  "gitRepo",
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "secret",
  "nfs",
  "iscsi",
  "glusterfs",
  "flocker",
  "persistentVolumeClaim",
  "rbd",
  "cinder",
  "cephfs",
  "quobyte",
  "downwardAPI",
  "fc",
  "flexVolume",
  "configMap",
  "azureFile",
  "vsphereVolume",
  "photonPersistentDisk",
  "portworxVolume",
  "azureDisk",
  "storageos",
  "projected",
  "scaleIO",
  "csi",
  "ephemeral",
  "image",
] as const;

const FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive";
const fileMode = (mode: number | undefined, at: FieldPath) =>
  mode !== undefined && (mode > 0o777 || mode < 0) ? [fieldError.invalid(at, mode, FILE_MODE)] : [];

/** ValidateVolumes: unique DNS-label names, exactly one source each; returns the valid volumes by name. */
function validateVolumes(volumes: readonly Volume[], path: FieldPath): [Map<string, Volume>, FieldError[]] {
  const valid = new Map<string, Volume>();
  const errs: FieldError[] = [];
  volumes.forEach((vol, i) => {
    const at = path.index(i);
    const el = validateVolumeSource(vol, at);
    if (!vol.name) el.push(fieldError.required(at.child("name")));
    else el.push(...dnsLabel(vol.name, at.child("name")));
    if (valid.has(vol.name)) el.push(fieldError.duplicate(at.child("name"), vol.name));
    if (el.length === 0) valid.set(vol.name, vol);
    else errs.push(...el);
  });
  return [valid, errs];
}

function validateVolumeSource(vol: Volume, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const record = vol as unknown as Record<string, unknown>;
  // Kubernetes' own spellings of the sources' paths in these errors.
  const quirk: Record<string, string> = { cephfs: "cephFS", downwardAPI: "downwarAPI" };
  let count = 0;
  for (const source of VOLUME_SOURCES) {
    if (record[source] === undefined) continue;
    if (count++ > 0) errs.push(fieldError.forbidden(path.child(quirk[source] ?? source), "may not specify more than 1 volume type"));
  }
  if (count === 0) return [fieldError.required(path, "must specify a volume type")];
  // Only the first source is checked further, as Kubernetes does.
  const first = VOLUME_SOURCES.find((source) => record[source] !== undefined);
  const required = (value: string | undefined, at: FieldPath) => (value ? [] : [fieldError.required(at)]);
  if (first === "hostPath" && vol.hostPath) errs.push(...required(vol.hostPath.path, path.child("hostPath", "path")));
  if (first === "secret" && vol.secret) {
    errs.push(...required(vol.secret.secretName, path.child("secret", "secretName")));
    errs.push(...fileMode(vol.secret.defaultMode, path.child("secret", "defaultMode")));
  }
  if (first === "configMap" && vol.configMap) {
    errs.push(...required(vol.configMap.name, path.child("configMap", "name")));
    errs.push(...fileMode(vol.configMap.defaultMode, path.child("configMap", "defaultMode")));
  }
  if (first === "downwardAPI" && vol.downwardAPI)
    errs.push(...fileMode(vol.downwardAPI.defaultMode, path.child("downwardAPI", "defaultMode")));
  if (first === "projected" && vol.projected) errs.push(...fileMode(vol.projected.defaultMode, path.child("projected", "defaultMode")));
  if (first === "persistentVolumeClaim" && vol.persistentVolumeClaim) {
    errs.push(...required(vol.persistentVolumeClaim.claimName, path.child("persistentVolumeClaim", "claimName")));
  }
  if (first === "nfs" && vol.nfs) {
    errs.push(...required(vol.nfs.server, path.child("nfs", "server")));
    errs.push(...required(vol.nfs.path, path.child("nfs", "path")));
    if (!vol.nfs.path.startsWith("/")) errs.push(fieldError.invalid(path.child("nfs", "path"), vol.nfs.path, "must be an absolute path"));
  }
  const sizeLimit = vol.emptyDir?.sizeLimit === undefined ? undefined : tryQuantity(vol.emptyDir.sizeLimit);
  if (first === "emptyDir" && sizeLimit && quantitySign(sizeLimit) < 0) {
    errs.push(fieldError.forbidden(path.child("emptyDir", "sizeLimit"), "SizeLimit field must be a valid resource quantity"));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Pods only
// ---------------------------------------------------------------------------------------------

/** validateContainersOnlyForPod: a pod's images may not be padded with whitespace. */
export function validateContainersOnlyForPod(spec: PodSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [list, containers] of [
    ["containers", spec.containers],
    ["initContainers", spec.initContainers ?? []],
  ] as const) {
    containers.forEach((c, i) => {
      const image = c.image ?? "";
      if (image !== image.trim())
        errs.push(fieldError.invalid(path.child(list).index(i).child("image"), image, "must not have leading or trailing whitespace"));
    });
  }
  return errs;
}

export const podSpecPath = FieldPath.root("spec");

// ---------------------------------------------------------------------------------------------
// Pod updates
// ---------------------------------------------------------------------------------------------

const UPDATABLE_POD_SPEC_FIELDS = [
  "`spec.containers[*].image`",
  "`spec.initContainers[*].image`",
  "`spec.activeDeadlineSeconds`",
  "`spec.tolerations` (only additions to existing tolerations)",
  "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/**
 * ValidatePodUpdate's spec part: containers are neither added nor removed, the deadline only shortens,
 * tolerations are only added, scheduling gates only removed, and nothing else changes.
 */
export function validatePodSpecUpdate(spec: PodSpec, old: PodSpec): FieldError[] {
  const path = podSpecPath;
  const errs: FieldError[] = [];
  for (const list of ["containers", "initContainers"] as const) {
    if ((spec[list] ?? []).length !== (old[list] ?? []).length) {
      return [fieldError.forbidden(path.child(list), "pod updates may not add or remove containers")];
    }
  }
  const deadline = spec.activeDeadlineSeconds;
  const oldDeadline = old.activeDeadlineSeconds;
  const deadlinePath = path.child("activeDeadlineSeconds");
  if (deadline !== undefined) {
    if (deadline < 0 || deadline > MAX_INT32)
      return [...errs, fieldError.invalid(deadlinePath, deadline, inclusiveRangeError(0, MAX_INT32))];
    if (oldDeadline !== undefined && oldDeadline < deadline) {
      return [...errs, fieldError.invalid(deadlinePath, deadline, "must be less than or equal to previous value")];
    }
  } else if (oldDeadline !== undefined) {
    errs.push(fieldError.invalid(deadlinePath, null, "must not update from a positive integer to nil value"));
  }
  const tolerations = spec.tolerations ?? [];
  for (const t of old.tolerations ?? []) {
    if (!tolerations.some((n) => jsonEqual({ ...t, tolerationSeconds: n.tolerationSeconds }, n))) {
      errs.push(fieldError.forbidden(path.child("tolerations"), "existing toleration can not be modified except its tolerationSeconds"));
      break;
    }
  }
  const oldGates = new Set((old.schedulingGates ?? []).map((g) => g.name));
  (spec.schedulingGates ?? []).forEach((g, i) => {
    if (!oldGates.has(g.name)) {
      errs.push(
        fieldError.forbidden(
          path.child("schedulingGates").index(i).child("name"),
          `only deletion is allowed, but found new scheduling gate '${g.name}'`,
        ),
      );
    }
  });
  // What remains once the updatable fields are put back must be the old spec.
  const munged: PodSpec = {
    ...spec,
    containers: spec.containers.map((c, i) => ({ ...c, image: old.containers[i]?.image })),
    activeDeadlineSeconds: old.activeDeadlineSeconds,
    schedulingGates: old.schedulingGates,
    tolerations: old.tolerations,
  };
  if (spec.initContainers) munged.initContainers = spec.initContainers.map((c, i) => ({ ...c, image: old.initContainers?.[i]?.image }));
  const oldGrace = old.terminationGracePeriodSeconds;
  if (oldGrace !== undefined && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace;
  if (!jsonEqual(munged, old)) {
    const diff = jsonDiff(old, munged, "spec").join("\n");
    errs.push(fieldError.forbidden(path, `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(",")}\n${diff}`));
  }
  return errs;
}

/** The changed leaves of two JSON values, `- path: old` / `+ path: new` (Kubernetes prints a cmp.Diff here). */
function jsonDiff(a: unknown, b: unknown, path: string): string[] {
  if (jsonEqual(a, b)) return [];
  const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null;
  if (isObject(a) && isObject(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => jsonDiff(a[k], b[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`));
  }
  const show = (x: unknown) => (x === undefined ? "<unset>" : JSON.stringify(x));
  return [`- ${path}: ${show(a)}`, `+ ${path}: ${show(b)}`];
}
