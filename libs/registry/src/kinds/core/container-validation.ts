// Containers of a pod spec: Kubernetes' validateContainers, validateInitContainers and what they call
// (ports, env, mounts, probes and lifecycle handlers), with its field paths and messages.
import type { Container, Probe, Volume } from "@orch/api";
import { type FieldError, type FieldPath, fieldError, nameIsDNSSubdomain, regexError } from "@orch/machinery";
import {
  MAX_INT32,
  dnsLabel,
  inclusiveRangeError,
  invalidEach,
  isConfigMapKey,
  isRelaxedEnvVarName,
  isValidPortName,
  isValidPortNum,
  nonNegative,
  oneOf,
  qualifiedName,
  validateSeccompProfile,
} from "./pod-validation-formats.js";
import { validateResourceRequirements } from "./resource-validation.js";

type EnvVar = NonNullable<Container["env"]>[number];
type EnvFromSource = NonNullable<Container["envFrom"]>[number];
type VolumeMount = NonNullable<Container["volumeMounts"]>[number];
type ContainerPort = NonNullable<Container["ports"]>[number];
type ProbeHandler = Pick<Probe, "exec" | "httpGet" | "tcpSocket" | "grpc"> & { sleep?: { seconds: number } };

export interface ContainerContext {
  volumes: ReadonlyMap<string, Volume>;
  claims: ReadonlySet<string>;
  grace: number | undefined;
  restartPolicy: string | undefined;
}

/** validateContainers: at least one; each valid; names unique; host ports not shared. */
export function validateContainers(containers: readonly Container[], ctx: ContainerContext, path: FieldPath): FieldError[] {
  if (containers.length === 0) return [fieldError.required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const at = path.index(i);
    errs.push(...validateContainerCommon(c, ctx, at));
    if (names.has(c.name)) errs.push(fieldError.duplicate(at.child("name"), c.name));
    else names.add(c.name);
    errs.push(...validateLifecycleAndProbes(c, ctx, at));
    if (c.restartPolicy !== undefined) errs.push(fieldError.forbidden(at.child("restartPolicy"), "may not be set for non-init containers"));
  });
  errs.push(...hostPortConflicts(containers, path));
  return errs;
}

export function validateInitContainers(
  inits: readonly Container[],
  regular: readonly Container[],
  ctx: ContainerContext,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(regular.map((c) => c.name));
  inits.forEach((c, i) => {
    const at = path.index(i);
    errs.push(...validateContainerCommon(c, ctx, at));
    if (c.restartPolicy !== undefined && c.restartPolicy !== "Always") {
      errs.push(fieldError.notSupported(at.child("restartPolicy"), c.restartPolicy, ["Always"]));
    }
    if (names.has(c.name)) errs.push(fieldError.duplicate(at.child("name"), c.name));
    else if (c.name) names.add(c.name);
    errs.push(...hostPortConflicts([c], path));
    if (c.restartPolicy === "Always") errs.push(...validateLifecycleAndProbes(c, ctx, at));
    else {
      for (const f of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] as const) {
        if (c[f] !== undefined)
          errs.push(fieldError.forbidden(at.child(f), "may not be set for init containers without restartPolicy=Always"));
      }
    }
  });
  return errs;
}

/** validateContainerCommon: what every kind of container must satisfy. */
function validateContainerCommon(c: Container, ctx: ContainerContext, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(fieldError.required(path.child("name")));
  else errs.push(...dnsLabel(c.name, path.child("name")));
  if (!c.image) errs.push(fieldError.required(path.child("image")));
  errs.push(...oneOf(c.terminationMessagePolicy, ["File", "FallbackToLogsOnError"], path.child("terminationMessagePolicy")));
  errs.push(...validateContainerPorts(c.ports ?? [], path.child("ports")));
  errs.push(...validateEnv(c.env ?? [], path.child("env")));
  errs.push(...validateEnvFrom(c.envFrom ?? [], path.child("envFrom")));
  errs.push(...validateVolumeMounts(c.volumeMounts ?? [], c.volumeDevices ?? [], ctx.volumes, path.child("volumeMounts")));
  errs.push(...validateVolumeDevices(c.volumeDevices ?? [], c.volumeMounts ?? [], ctx.volumes, path.child("volumeDevices")));
  errs.push(...oneOf(c.imagePullPolicy, ["Always", "IfNotPresent", "Never"], path.child("imagePullPolicy")));
  errs.push(...validateResourceRequirements(c.resources, ctx.claims, path.child("resources")));
  errs.push(...validateResizePolicy(c.resizePolicy ?? [], ctx.restartPolicy, path.child("resizePolicy")));
  const sc = c.securityContext;
  if (sc) {
    for (const f of ["runAsUser", "runAsGroup"] as const) {
      const id = sc[f];
      if (id !== undefined && (id < 0 || id > MAX_INT32))
        errs.push(fieldError.invalid(path.child("securityContext", f), id, inclusiveRangeError(0, MAX_INT32)));
    }
    errs.push(...validateSeccompProfile(sc.seccompProfile, path.child("securityContext", "seccompProfile")));
  }
  return errs;
}

/** AccumulateUniqueHostPorts: one `protocol/hostIP/hostPort` per pod (per init container). */
function hostPortConflicts(containers: readonly Container[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    (c.ports ?? []).forEach((p, j) => {
      if (!p.hostPort) return;
      const key = `${p.protocol}/${p.hostIP ?? ""}/${p.hostPort}`;
      if (seen.has(key)) errs.push(fieldError.duplicate(path.index(i).child("ports").index(j).child("hostPort"), key));
      else seen.add(key);
    });
  });
  return errs;
}

/** validateContainerPorts. */
function validateContainerPorts(ports: readonly ContainerPort[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = path.index(i);
    if (port.name) {
      const msgs = isValidPortName(port.name);
      if (msgs.length > 0) errs.push(...invalidEach(at.child("name"), port.name, msgs));
      else if (names.has(port.name)) errs.push(fieldError.duplicate(at.child("name"), port.name));
      else names.add(port.name);
    }
    if (port.containerPort === 0) errs.push(fieldError.required(at.child("containerPort")));
    else errs.push(...invalidEach(at.child("containerPort"), port.containerPort, isValidPortNum(port.containerPort)));
    if (port.hostPort) errs.push(...invalidEach(at.child("hostPort"), port.hostPort, isValidPortNum(port.hostPort)));
    errs.push(...oneOf(port.protocol, ["SCTP", "TCP", "UDP"], at.child("protocol")));
  });
  return errs;
}

const ENV_FIELD_PATHS = [
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
  "spec.nodeName",
  "spec.serviceAccountName",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
];
/** What ConvertDownwardAPIFieldLabel accepts for v1 pods. */
const DOWNWARD_LABELS = new Set([
  "metadata.annotations",
  "metadata.labels",
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.serviceAccountName",
  "spec.schedulerName",
  "status.phase",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
]);
const RESOURCE_FIELD_PATHS = [
  "limits.cpu",
  "limits.ephemeral-storage",
  "limits.memory",
  "requests.cpu",
  "requests.ephemeral-storage",
  "requests.memory",
];

/** ValidateEnv: names (relaxed rules), and at most one value source. */
function validateEnv(vars: readonly EnvVar[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  vars.forEach((ev, i) => {
    const at = path.index(i);
    if (!ev.name) errs.push(fieldError.required(at.child("name")));
    else errs.push(...invalidEach(at.child("name"), ev.name, isRelaxedEnvVarName(ev.name)));
    errs.push(...validateEnvValueFrom(ev, at.child("valueFrom")));
  });
  return errs;
}

function validateEnvValueFrom(ev: EnvVar, path: FieldPath): FieldError[] {
  const from = ev.valueFrom;
  if (!from) return [];
  const errs: FieldError[] = [];
  let sources = 0;
  if (from.fieldRef) {
    sources++;
    errs.push(...validateObjectFieldSelector(from.fieldRef, path.child("fieldRef")));
  }
  if (from.resourceFieldRef) {
    sources++;
    const ref = from.resourceFieldRef;
    const at = path.child("resourceFieldRef");
    if (!ref.resource) errs.push(fieldError.required(at.child("resource")));
    else if (!RESOURCE_FIELD_PATHS.includes(ref.resource) && !/^(requests|limits)\.hugepages-/.test(ref.resource)) {
      errs.push(fieldError.notSupported(at.child("resource"), ref.resource, RESOURCE_FIELD_PATHS));
    }
  }
  if (from.configMapKeyRef) {
    sources++;
    errs.push(...validateKeySelector(from.configMapKeyRef, path.child("configMapKeyRef")));
  }
  if (from.secretKeyRef) {
    sources++;
    errs.push(...validateKeySelector(from.secretKeyRef, path.child("secretKeyRef")));
  }
  if (from.fileKeyRef) sources++;
  if (sources === 0) {
    errs.push(fieldError.invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
  } else if (ev.value) {
    errs.push(fieldError.invalid(path, "", "may not be specified when `value` is not empty"));
  } else if (sources > 1) {
    errs.push(fieldError.invalid(path, "", "may not have more than one field specified at a time"));
  }
  return errs;
}

/** fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['app']` → [`metadata.labels`, `app`]. */
function splitSubscript(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const at = s.indexOf("['");
  if (at <= 0) return undefined;
  return [s.slice(0, at), s.slice(at + 2)];
}

/** podshelper.ConvertDownwardAPIFieldLabel for v1: the internal field path, or the conversion error. */
function convertDownwardAPIFieldLabel(version: string, label: string): { path: string } | { error: string } {
  if (version !== "v1") return { error: `unsupported pod version: ${version}` };
  const split = splitSubscript(label);
  if (split) {
    return split[0] === "metadata.annotations" || split[0] === "metadata.labels"
      ? { path: label }
      : { error: `field label does not support subscript: ${label}` };
  }
  if (DOWNWARD_LABELS.has(label)) return { path: label };
  if (label === "spec.host") return { path: "spec.nodeName" };
  return { error: `field label not supported: ${label}` };
}

/** validateObjectFieldSelector for env vars. */
function validateObjectFieldSelector(ref: { apiVersion: string; fieldPath: string }, path: FieldPath): FieldError[] {
  if (!ref.apiVersion) return [fieldError.required(path.child("apiVersion"))];
  if (!ref.fieldPath) return [fieldError.required(path.child("fieldPath"))];
  const converted = convertDownwardAPIFieldLabel(ref.apiVersion, ref.fieldPath);
  if ("error" in converted) {
    return [fieldError.invalid(path.child("fieldPath"), ref.fieldPath, `error converting fieldPath: ${converted.error}`)];
  }
  const split = splitSubscript(converted.path);
  if (split) {
    const [base, key] = split;
    if (base === "metadata.annotations") return qualifiedName(key.toLowerCase(), path);
    if (base === "metadata.labels") return qualifiedName(key, path);
    return [fieldError.invalid(path, base, "does not support subscript")];
  }
  return ENV_FIELD_PATHS.includes(converted.path)
    ? []
    : [fieldError.notSupported(path.child("fieldPath"), converted.path, ENV_FIELD_PATHS)];
}

function validateKeySelector(ref: { name?: string; key: string }, path: FieldPath): FieldError[] {
  const name = ref.name ?? "";
  const errs = invalidEach(path.child("name"), name, nameIsDNSSubdomain(name, false));
  if (!ref.key) errs.push(fieldError.required(path.child("key")));
  else errs.push(...invalidEach(path.child("key"), ref.key, isConfigMapKey(ref.key)));
  return errs;
}

/** ValidateEnvFrom. */
function validateEnvFrom(sources: readonly EnvFromSource[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  sources.forEach((ev, i) => {
    const at = path.index(i);
    if (ev.prefix) errs.push(...invalidEach(at.child("prefix"), ev.prefix, isRelaxedEnvVarName(ev.prefix)));
    let count = 0;
    for (const kind of ["configMapRef", "secretRef"] as const) {
      const ref = ev[kind];
      if (!ref) continue;
      count++;
      const name = ref.name ?? "";
      if (!name) errs.push(fieldError.required(at.child(kind, "name")));
      else errs.push(...invalidEach(at.child(kind, "name"), name, nameIsDNSSubdomain(name, true)));
    }
    // Kubernetes reports these two on the list, not the item.
    if (count === 0) errs.push(fieldError.invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"));
    else if (count > 1) errs.push(fieldError.invalid(path, "", "may not have more than one field specified at a time"));
  });
  return errs;
}

/** validateLocalDescendingPath, reported at the list's `subPath`/`subPathExpr` as Kubernetes does. */
function localDescendingPath(value: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (value.startsWith("/")) errs.push(fieldError.invalid(path, value, "must be a relative path"));
  if (value.split("/").includes("..")) errs.push(fieldError.invalid(path, value, "must not contain '..'"));
  return errs;
}

/** ValidateVolumeMounts. */
function validateVolumeMounts(
  mounts: readonly VolumeMount[],
  devices: readonly { name: string; devicePath: string }[],
  volumes: ReadonlyMap<string, Volume>,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  const deviceNames = new Set(devices.map((d) => d.name));
  const devicePaths = new Set(devices.map((d) => d.devicePath));
  mounts.forEach((m, i) => {
    const at = path.index(i);
    if (!m.name) errs.push(fieldError.required(at.child("name")));
    if (!volumes.has(m.name)) errs.push(fieldError.notFound(at.child("name"), m.name));
    if (!m.mountPath) errs.push(fieldError.required(at.child("mountPath")));
    if (mountPoints.has(m.mountPath)) errs.push(fieldError.invalid(at.child("mountPath"), m.mountPath, "must be unique"));
    mountPoints.add(m.mountPath);
    if (deviceNames.has(m.name)) errs.push(fieldError.invalid(at.child("name"), m.name, "must not already exist in volumeDevices"));
    if (devicePaths.has(m.mountPath))
      errs.push(fieldError.invalid(at.child("mountPath"), m.mountPath, "must not already exist as a path in volumeDevices"));
    if (volumes.get(m.name)?.image) {
      if (m.subPath) errs.push(fieldError.invalid(at.child("subPath"), m.subPath, "not allowed in image volume sources"));
      if (m.subPathExpr) errs.push(fieldError.invalid(at.child("subPathExpr"), m.subPathExpr, "not allowed in image volume sources"));
    }
    if (m.subPath) errs.push(...localDescendingPath(m.subPath, path.child("subPath")));
    if (m.subPathExpr) {
      if (m.subPath)
        errs.push(fieldError.invalid(at.child("subPathExpr"), m.subPathExpr, "subPathExpr and subPath are mutually exclusive"));
      errs.push(...localDescendingPath(m.subPathExpr, path.child("subPathExpr")));
    }
  });
  return errs;
}

/** ValidateVolumeDevices: block devices come from claims only. */
function validateVolumeDevices(
  devices: readonly { name: string; devicePath: string }[],
  mounts: readonly VolumeMount[],
  volumes: ReadonlyMap<string, Volume>,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  const paths = new Set<string>();
  const mountNames = new Set(mounts.map((m) => m.name));
  const mountPaths = new Set(mounts.map((m) => m.mountPath));
  devices.forEach((d, i) => {
    const at = path.index(i);
    const vol = volumes.get(d.name);
    if (!d.name) errs.push(fieldError.required(at.child("name")));
    if (names.has(d.name)) errs.push(fieldError.invalid(at.child("name"), d.name, "must be unique"));
    if (vol && !vol.persistentVolumeClaim && !vol.ephemeral) {
      errs.push(
        fieldError.invalid(
          at.child("name"),
          d.name,
          "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
        ),
      );
    }
    if (!vol) errs.push(fieldError.notFound(at.child("name"), d.name));
    if (!d.devicePath) errs.push(fieldError.required(at.child("devicePath")));
    if (paths.has(d.devicePath)) errs.push(fieldError.invalid(at.child("devicePath"), d.devicePath, "must be unique"));
    if (d.devicePath?.split("/").includes("..")) {
      errs.push(fieldError.invalid(at.child("devicePath"), d.devicePath, "can not contain backsteps ('..')"));
    } else paths.add(d.devicePath);
    if (mountNames.has(d.name)) errs.push(fieldError.invalid(at.child("name"), d.name, "must not already exist in volumeMounts"));
    if (mountPaths.has(d.devicePath))
      errs.push(fieldError.invalid(at.child("devicePath"), d.devicePath, "must not already exist as a path in volumeMounts"));
    if (d.name) names.add(d.name);
  });
  return errs;
}

function validateResizePolicy(
  policies: NonNullable<Container["resizePolicy"]>,
  podRestartPolicy: string | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  policies.forEach((p, i) => {
    if (seen.has(p.resourceName)) errs.push(fieldError.duplicate(path.index(i), p.resourceName));
    seen.add(p.resourceName);
    if (!p.resourceName) errs.push(fieldError.required(path));
    else if (!["cpu", "memory"].includes(p.resourceName)) errs.push(fieldError.notSupported(path, p.resourceName, ["cpu", "memory"]));
    const policies = ["NotRequired", "RestartContainer"];
    if (!p.restartPolicy) errs.push(fieldError.required(path));
    else if (!policies.includes(p.restartPolicy)) errs.push(fieldError.notSupported(path, p.restartPolicy, policies));
    if (podRestartPolicy === "Never" && p.restartPolicy !== "NotRequired") {
      errs.push(fieldError.invalid(path, p.restartPolicy, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
    }
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Probes and lifecycle handlers
// ---------------------------------------------------------------------------------------------

function validateLifecycleAndProbes(c: Container, ctx: ContainerContext, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (c.lifecycle?.postStart) errs.push(...validateHandler(c.lifecycle.postStart, ctx.grace, path.child("lifecycle", "postStart")));
  if (c.lifecycle?.preStop) errs.push(...validateHandler(c.lifecycle.preStop, ctx.grace, path.child("lifecycle", "preStop")));
  for (const kind of ["livenessProbe", "readinessProbe", "startupProbe"] as const) {
    const probe = c[kind];
    if (!probe) continue;
    const at = path.child(kind);
    errs.push(...validateProbe(probe, ctx.grace, at));
    if (kind !== "readinessProbe" && probe.successThreshold !== 1) {
      errs.push(fieldError.invalid(at.child("successThreshold"), probe.successThreshold, "must be 1"));
    }
    if (kind === "readinessProbe" && probe.terminationGracePeriodSeconds !== undefined) {
      errs.push(
        fieldError.invalid(
          at.child("terminationGracePeriodSeconds"),
          probe.terminationGracePeriodSeconds,
          "must not be set for readinessProbes",
        ),
      );
    }
  }
  return errs;
}

function validateProbe(probe: Probe, grace: number | undefined, path: FieldPath): FieldError[] {
  const errs = validateHandler(probe, grace, path);
  for (const f of ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"] as const) {
    errs.push(...nonNegative(probe[f], path.child(f)));
  }
  const tgps = probe.terminationGracePeriodSeconds;
  if (tgps !== undefined && tgps <= 0)
    errs.push(fieldError.invalid(path.child("terminationGracePeriodSeconds"), tgps, "must be greater than 0"));
  return errs;
}

function portNumOrName(port: number | string, path: FieldPath): FieldError[] {
  return typeof port === "number" ? invalidEach(path, port, isValidPortNum(port)) : invalidEach(path, port, isValidPortName(port));
}

/** validateHandler: exactly one of exec, httpGet, tcpSocket, grpc (probes) or sleep (lifecycle). */
function validateHandler(h: ProbeHandler, grace: number | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  const one = (name: string, check: () => FieldError[]) => {
    if (count++ > 0) errs.push(fieldError.forbidden(path.child(name), "may not specify more than 1 handler type"));
    else errs.push(...check());
  };
  if (h.exec) one("exec", () => ((h.exec!.command ?? []).length === 0 ? [fieldError.required(path.child("exec", "command"))] : []));
  if (h.httpGet) {
    const get = h.httpGet;
    const at = path.child("httpGet");
    one("httpGet", () => [
      ...(get.path ? [] : [fieldError.required(at.child("path"))]),
      ...portNumOrName(get.port, at.child("port")),
      ...(["HTTP", "HTTPS"].includes(get.scheme) ? [] : [fieldError.notSupported(at.child("scheme"), get.scheme, ["HTTP", "HTTPS"])]),
      ...(get.httpHeaders ?? []).flatMap((header) =>
        /^[-A-Za-z0-9]+$/.test(header.name)
          ? []
          : [
              fieldError.invalid(
                at.child("httpHeaders"),
                header.name,
                regexError("a valid HTTP header must consist of alphanumeric characters or '-'", "[-A-Za-z0-9]+", "X-Header-Name"),
              ),
            ],
      ),
    ]);
  }
  if (h.tcpSocket) one("tcpSocket", () => portNumOrName(h.tcpSocket!.port, path.child("tcpSocket", "port")));
  if (h.grpc) one("grpc", () => portNumOrName(h.grpc!.port, path.child("grpc", "port")));
  if (h.sleep) {
    const seconds = h.sleep.seconds;
    one("sleep", () =>
      grace !== undefined && (seconds < 0 || seconds > grace)
        ? [fieldError.invalid(path.child("sleep"), seconds, `must be non-negative and less than terminationGracePeriodSeconds (${grace})`)]
        : [],
    );
  }
  if (count === 0) errs.push(fieldError.required(path, "must specify a handler type"));
  return errs;
}
