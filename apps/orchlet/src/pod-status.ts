// What a node agent does next with one pod, as a pure function of the pod, the clock and what the agent
// remembers: the status to post, the events to record, whether to delete it, and when to look again.
// Everything that must survive a restart of the orchlet is read from the pod's own status (start and
// finish times, restart counts, the deletion's timestamp and grace period), so a restarted orchlet
// resumes its pods where they were instead of starting them again.
import type { ContainerStatus, Pod, PodStatus } from "@orch/api";
import { cloneJson, rfc3339 } from "@orch/machinery";
import { createHash } from "node:crypto";
import type { Simulation } from "./simulate.js";

export interface Timing {
  readyDelayMs: number;
  stopDelayMs: number;
  runBeforeExitMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** What the agent remembers of a pod between reconciles (lost at a restart; only precision depends on it). */
export interface PodMemory {
  /** When the agent first saw the pod (slow start counts from here). */
  seenAt: number;
  /** Container start times to the millisecond (the status keeps whole seconds). */
  startedAt: Map<string, number>;
  /** Stopping events already recorded. */
  killing: boolean;
}

export interface PodEvent {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
  /** `spec.containers{name}`, when about a container. */
  fieldPath?: string;
}

export interface Plan {
  /** The status to post, when it differs from the pod's. */
  status?: PodStatus;
  events: PodEvent[];
  /** Delete the pod with grace period 0 after posting the status (its containers are gone). */
  delete?: boolean;
  /** Look again this many milliseconds from now. */
  after?: number;
}

export interface PlanInput {
  pod: Pod;
  now: number;
  memory: PodMemory;
  sim: Simulation;
  timing: Timing;
  hostIP: string;
  /** Assigns (or returns) the pod's IP; undefined when the node's range is exhausted. */
  podIP: () => string | undefined;
}

type Container = NonNullable<Pod["spec"]>["containers"][number];

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");
const containerID = (pod: Pod, name: string, restarts: number) => `containerd://${sha(`${pod.metadata.uid}/${name}/${restarts}`)}`;
const imageID = (image: string) => `${image.replace(/[:@].*$/, "")}@sha256:${sha(image)}`;
const time = (ms: number) => rfc3339(new Date(ms));
const parseTime = (t: string | null | undefined): number | undefined => (t ? Date.parse(t) : undefined);
export const fieldPath = (name: string) => `spec.containers{${name}}`;
const podRef = (pod: Pod) => `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;

/** Kubelet's back-off before the next restart of a container that has restarted `restarts` times. */
export function backoffMs(restarts: number, timing: Pick<Timing, "backoffBaseMs" | "backoffMaxMs">): number {
  if (restarts <= 0) return 0;
  return Math.min(timing.backoffBaseMs * 2 ** Math.min(restarts - 1, 30), timing.backoffMaxMs);
}

/** Go's time.Duration.String() for a whole number of milliseconds: 500ms, 1.5s, 1m0s, 2m40s, 1h0m0s. */
export function goDuration(ms: number): string {
  const total = Math.round(ms);
  if (total === 0) return "0s";
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const rest = total % 60_000;
  const seconds = `${Math.floor(rest / 1000)}${
    rest % 1000
      ? `.${String(rest % 1000)
          .padStart(3, "0")
          .replace(/0+$/, "")}`
      : ""
  }s`;
  if (h > 0) return `${h}h${m}m${seconds}`;
  if (m > 0) return `${m}m${seconds}`;
  return seconds;
}

/** Kubernetes' QoS class from the containers' requests and limits (GetPodQOS). */
export function qosClass(containers: readonly Container[]): string {
  let requests = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) requests = true;
    for (const r of ["cpu", "memory"]) {
      if (lim[r] === undefined || (req[r] !== undefined && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!requests) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

function condition(status: PodStatus, type: string, value: "True" | "False", now: number, reason?: string, message?: string): void {
  const conditions = (status.conditions ??= []);
  const existing = conditions.find((c) => c.type === type);
  if (existing) {
    if (existing.status !== value) existing.lastTransitionTime = time(now);
    existing.status = value;
    existing.reason = reason;
    existing.message = message;
    if (existing.reason === undefined) delete existing.reason;
    if (existing.message === undefined) delete existing.message;
    return;
  }
  conditions.push({
    type,
    status: value,
    lastProbeTime: null,
    lastTransitionTime: time(now),
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  } as NonNullable<PodStatus["conditions"]>[number]);
}

/** The pod conditions kubelet derives from its containers (generateAPIPodStatus). */
function podConditions(pod: Pod, status: PodStatus, now: number, terminal: boolean): void {
  const statuses = status.containerStatuses ?? [];
  const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
  const started = statuses.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated);
  condition(status, "PodReadyToStartContainers", terminal ? "False" : "True", now);
  condition(status, "Initialized", "True", now);
  if (terminal) {
    condition(status, "ContainersReady", "False", now, "PodCompleted");
    condition(status, "Ready", "False", now, "PodCompleted");
  } else if (unready.length > 0) {
    const message = `containers with unready status: [${unready.join(" ")}]`;
    condition(status, "ContainersReady", "False", now, "ContainersNotReady", message);
    condition(status, "Ready", "False", now, "ContainersNotReady", message);
  } else {
    condition(status, "ContainersReady", "True", now);
    const gates = (pod.spec?.readinessGates ?? []).map((g) => g.conditionType);
    const missing = gates.filter((g) => status.conditions?.find((c) => c.type === g)?.status !== "True");
    if (missing.length > 0) {
      const message = `corresponding condition of pod readiness gate ${missing.map((g) => `"${g}"`).join(", ")} does not exist or is not True.`;
      condition(status, "Ready", "False", now, "ReadinessGatesNotReady", message);
    } else condition(status, "Ready", "True", now);
  }
  condition(status, "PodScheduled", "True", now);
  void started;
}

function readyDelay(container: Container, timing: Timing): number {
  const initial = (container.readinessProbe?.initialDelaySeconds ?? 0) * 1000;
  return Math.max(timing.readyDelayMs, initial);
}

/** Phase of a pod whose containers will not run again. */
const terminalPhase = (statuses: ContainerStatus[]) =>
  statuses.every((s) => (s.state?.terminated?.exitCode ?? 0) === 0) ? "Succeeded" : "Failed";

export function planPod(input: PlanInput): Plan {
  const { pod, now, memory, sim, timing } = input;
  const spec = pod.spec!;
  const containers = spec.containers;
  const phase = pod.status?.phase;
  const events: PodEvent[] = [];
  if (phase === "Succeeded" || phase === "Failed") {
    // Nothing runs; a deleted terminal pod is removed at once (its containers stopped long ago).
    return pod.metadata.deletionTimestamp ? { events, delete: true } : { events };
  }
  const status: PodStatus = cloneJson(pod.status ?? {});
  const started = (status.containerStatuses ?? []).some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated);

  // ---- deletion: stop the containers within the grace period, then remove the pod ----
  if (pod.metadata.deletionTimestamp) {
    const grace = (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
    const requested = Date.parse(pod.metadata.deletionTimestamp) - grace;
    const stopAt = started ? requested + Math.min(grace, timing.stopDelayMs) : now;
    if (now < stopAt) {
      if (!memory.killing) {
        memory.killing = true;
        for (const s of status.containerStatuses ?? []) {
          if (s.state?.running)
            events.push({ type: "Normal", reason: "Killing", message: `Stopping container ${s.name}`, fieldPath: fieldPath(s.name) });
        }
      }
      return { events, after: stopAt - now };
    }
    // Stopped on SIGTERM within the grace period (exit 0), else killed when it ran out (137).
    const exitCode = grace >= timing.stopDelayMs ? 0 : 137;
    if (!memory.killing && started) {
      for (const s of status.containerStatuses ?? []) {
        if (s.state?.running)
          events.push({ type: "Normal", reason: "Killing", message: `Stopping container ${s.name}`, fieldPath: fieldPath(s.name) });
      }
    }
    memory.killing = true;
    if (!started) return { events, delete: true };
    for (const s of status.containerStatuses ?? []) {
      if (s.state?.terminated) continue;
      const startedAt = s.state?.running?.startedAt ?? null;
      s.state = {
        terminated: {
          exitCode,
          reason: exitCode === 0 ? "Completed" : "Error",
          startedAt,
          finishedAt: time(now),
          containerID: s.containerID,
        },
      };
      s.ready = false;
      s.started = false;
    }
    status.phase = terminalPhase(status.containerStatuses ?? []);
    podConditions(pod, status, now, true);
    return { status, events, delete: true };
  }

  // ---- not started yet: created after the slow start, then running ----
  if (!started) {
    const createAt = memory.seenAt + sim.slowStartMs;
    status.hostIP = input.hostIP;
    status.hostIPs = [{ ip: input.hostIP }];
    status.qosClass ??= qosClass(containers);
    // Pulling is said once, when the pod is first looked at, whether or not it is still pulling then.
    const pulling: PodEvent[] =
      sim.slowStartMs > 0 && (status.phase !== "Pending" || !status.containerStatuses)
        ? containers.map((c) => ({
            type: "Normal",
            reason: "Pulling",
            message: `Pulling image "${c.image}"`,
            fieldPath: fieldPath(c.name),
          }))
        : [];
    if (now < createAt) {
      if (pulling.length > 0) {
        status.phase = "Pending";
        status.startTime ??= time(memory.seenAt);
        status.containerStatuses = containers.map((c) => ({
          name: c.name,
          state: { waiting: { reason: "ContainerCreating" } },
          lastState: {},
          ready: false,
          restartCount: 0,
          image: c.image ?? "",
          imageID: "",
          started: false,
        }));
        podConditions(pod, status, now, false);
        condition(status, "PodReadyToStartContainers", "False", now);
        return { status, events: pulling, after: createAt - now };
      }
      return { events, after: createAt - now };
    }
    const ip = input.podIP();
    if (ip === undefined) {
      // The node's pod range is full: the sandbox cannot be created (kubelet reports FailedCreatePodSandBox and retries).
      return {
        events: [
          {
            type: "Warning",
            reason: "FailedCreatePodSandBox",
            message: "Failed to create pod sandbox: no IP addresses available in range set",
          },
        ],
        after: 10_000,
      };
    }
    events.push(...pulling);
    status.phase = "Running";
    status.startTime ??= time(memory.seenAt);
    status.podIP = ip;
    status.podIPs = [{ ip }];
    // The containers started when the node got the pod (after its pull): an agent that reaches the pod
    // later, busy with others, reports that start late, as kubelet's status manager does. A report later
    // than the ready delay is Running and Ready in one write.
    status.containerStatuses = containers.map((c) => {
      memory.startedAt.set(c.name, createAt);
      const pulled =
        sim.slowStartMs > 0
          ? `Successfully pulled image "${c.image}" in ${goDuration(sim.slowStartMs)} (${goDuration(sim.slowStartMs)} including waiting)`
          : `Container image "${c.image}" already present on machine`;
      events.push(
        { type: "Normal", reason: "Pulled", message: pulled, fieldPath: fieldPath(c.name) },
        { type: "Normal", reason: "Created", message: `Created container: ${c.name}`, fieldPath: fieldPath(c.name) },
        { type: "Normal", reason: "Started", message: `Started container ${c.name}`, fieldPath: fieldPath(c.name) },
      );
      const ready = !sim.neverReady && sim.exitCode === undefined && now >= createAt + readyDelay(c, timing);
      return { ...running(pod, c, 0, createAt, {}), ready };
    });
    podConditions(pod, status, now, false);
    return { status, events, after: nextLook(pod, status, memory, sim, timing, now) };
  }

  // ---- running: readiness, exits, restarts ----
  const restartPolicy = spec.restartPolicy ?? "Always";
  for (const [i, s] of (status.containerStatuses ?? []).entries()) {
    const c = containers.find((x) => x.name === s.name);
    if (!c) continue;
    if (s.state?.running) {
      const startMs = memory.startedAt.get(s.name) ?? parseTime(s.state.running.startedAt) ?? now;
      if (sim.exitCode !== undefined && now >= startMs + timing.runBeforeExitMs) {
        const code = sim.exitCode;
        const terminated = {
          exitCode: code,
          reason: code === 0 ? "Completed" : "Error",
          startedAt: s.state.running.startedAt ?? null,
          finishedAt: time(now),
          containerID: s.containerID,
        };
        const restart = restartPolicy === "Always" || (restartPolicy === "OnFailure" && code !== 0);
        if (!restart) {
          status.containerStatuses![i] = { ...s, state: { terminated }, ready: false, started: false };
          continue;
        }
        if (s.restartCount === 0) {
          // The first restart is at once (kubelet's back-off starts with the second).
          status.containerStatuses![i] = { ...running(pod, c, 1, now, { terminated }) };
          memory.startedAt.set(s.name, now);
          events.push(
            {
              type: "Normal",
              reason: "Pulled",
              message: `Container image "${c.image}" already present on machine`,
              fieldPath: fieldPath(c.name),
            },
            { type: "Normal", reason: "Created", message: `Created container: ${c.name}`, fieldPath: fieldPath(c.name) },
            { type: "Normal", reason: "Started", message: `Started container ${c.name}`, fieldPath: fieldPath(c.name) },
          );
          continue;
        }
        const wait = backoffMs(s.restartCount ?? 0, timing);
        status.containerStatuses![i] = {
          ...s,
          state: {
            waiting: {
              reason: "CrashLoopBackOff",
              message: `back-off ${goDuration(wait)} restarting failed container=${c.name} pod=${podRef(pod)}`,
            },
          },
          lastState: { terminated },
          ready: false,
          started: false,
        };
        events.push({
          type: "Warning",
          reason: "BackOff",
          message: `Back-off restarting failed container ${c.name} in pod ${podRef(pod)}`,
          fieldPath: fieldPath(c.name),
        });
        continue;
      }
      const ready = !sim.neverReady && now >= startMs + readyDelay(c, timing);
      if (ready !== s.ready) status.containerStatuses![i] = { ...s, ready };
    } else if (s.state?.waiting?.reason === "CrashLoopBackOff") {
      const finished = parseTime(s.lastState?.terminated?.finishedAt) ?? now;
      if (now >= finished + backoffMs(s.restartCount ?? 0, timing)) {
        status.containerStatuses![i] = running(pod, c, (s.restartCount ?? 0) + 1, now, s.lastState ?? {});
        memory.startedAt.set(s.name, now);
        events.push(
          {
            type: "Normal",
            reason: "Pulled",
            message: `Container image "${c.image}" already present on machine`,
            fieldPath: fieldPath(c.name),
          },
          { type: "Normal", reason: "Created", message: `Created container: ${c.name}`, fieldPath: fieldPath(c.name) },
          { type: "Normal", reason: "Started", message: `Started container ${c.name}`, fieldPath: fieldPath(c.name) },
        );
      }
    }
  }
  const statuses = status.containerStatuses ?? [];
  const terminal = statuses.length > 0 && statuses.every((s) => s.state?.terminated);
  if (terminal) status.phase = terminalPhase(statuses);
  podConditions(pod, status, now, terminal);
  return { status, events, after: terminal ? undefined : nextLook(pod, status, memory, sim, timing, now) };
}

function running(pod: Pod, c: Container, restarts: number, now: number, lastState: ContainerStatus["lastState"]): ContainerStatus {
  return {
    name: c.name,
    state: { running: { startedAt: time(now) } },
    lastState: lastState ?? {},
    ready: false,
    restartCount: restarts,
    image: c.image ?? "",
    imageID: imageID(c.image ?? ""),
    containerID: containerID(pod, c.name, restarts),
    started: true,
  };
}

/** The earliest time-driven change of a running pod: a container becoming ready, exiting or restarting. */
function nextLook(pod: Pod, status: PodStatus, memory: PodMemory, sim: Simulation, timing: Timing, now: number): number | undefined {
  let next = Number.POSITIVE_INFINITY;
  for (const s of status.containerStatuses ?? []) {
    const c = pod.spec?.containers.find((x) => x.name === s.name);
    if (!c) continue;
    if (s.state?.running) {
      const startMs = memory.startedAt.get(s.name) ?? parseTime(s.state.running.startedAt) ?? now;
      if (sim.exitCode !== undefined) next = Math.min(next, startMs + timing.runBeforeExitMs);
      else if (!s.ready && !sim.neverReady) next = Math.min(next, startMs + readyDelay(c, timing));
    } else if (s.state?.waiting?.reason === "CrashLoopBackOff") {
      const finished = parseTime(s.lastState?.terminated?.finishedAt) ?? now;
      next = Math.min(next, finished + backoffMs(s.restartCount ?? 0, timing));
    }
  }
  return Number.isFinite(next) ? Math.max(1, next - now) : undefined;
}
