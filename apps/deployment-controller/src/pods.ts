// What the replica controllers read off a pod (pkg/api/v1/pod/util.go, pkg/controller/controller_utils.go):
// readiness, availability after minReadySeconds, whether it still counts, and which pods go first
// when there are too many.
import type { Pod } from "@orch/api";

type PodCondition = NonNullable<Pod["status"]["conditions"]>[number];

function readyCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === "Ready");
}

/** orch has no node agent: whoever plays it (a user, a test) sets this condition through `/status`. */
export function isPodReady(pod: Pod): boolean {
  return readyCondition(pod)?.status === "True";
}

/** Ready for at least `minReadySeconds` (IsPodAvailable). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const since = timeOf(readyCondition(pod)?.lastTransitionTime);
  return since !== undefined && since + minReadySeconds * 1000 < now;
}

/**
 * Milliseconds until the first ready pod becomes available, so the owner's status can be recomputed
 * then (no event will say so); undefined when no pod is waiting.
 */
export function untilNextAvailable(pods: readonly Pod[], minReadySeconds: number, now: number): number | undefined {
  if (!minReadySeconds) return undefined;
  let next: number | undefined;
  for (const pod of pods) {
    if (!isPodReady(pod) || isPodAvailable(pod, minReadySeconds, now)) continue;
    const since = timeOf(readyCondition(pod)?.lastTransitionTime) ?? now;
    const wait = Math.max(0, since + minReadySeconds * 1000 - now) + 1000;
    next = next === undefined ? wait : Math.min(next, wait);
  }
  return next;
}

/** Counts toward a controller's replicas: not finished, not being deleted (FilterActivePods). */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== "Succeeded" && phase !== "Failed" && !pod.metadata.deletionTimestamp;
}

export function timeOf(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function deletionCost(pod: Pod, annotation: string): number {
  const value = pod.metadata.annotations?.[annotation];
  if (value === undefined || !/^[+-]?[0-9]+$/.test(value)) return 0;
  const n = Number(value);
  return n >= -(2 ** 31) && n < 2 ** 31 ? n : 0;
}

function maxRestarts(pod: Pod): { regular: number; sidecar: number } {
  let regular = 0;
  let sidecar = 0;
  for (const s of pod.status?.containerStatuses ?? []) regular = Math.max(regular, s.restartCount ?? 0);
  const sidecars = new Set((pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always").map((c) => c.name));
  for (const s of pod.status?.initContainerStatuses ?? []) if (sidecars.has(s.name)) sidecar = Math.max(sidecar, s.restartCount ?? 0);
  return { regular, sidecar };
}

/** floor(log2(age in ns)), or -1 for no age: pods of about the same age rank the same (LogarithmicScaleDown). */
function logRank(t: number | undefined, now: number): number {
  if (t === undefined) return -1;
  const ns = (now - t) * 1e6;
  return ns > 0 ? Math.floor(Math.log2(ns)) : -1;
}

interface Ranked {
  pod: Pod;
  /** Active related pods on the same node: doubled-up pods go first. */
  rank: number;
}

/**
 * ActivePodsWithRanks.Less: true when `a` should be deleted before `b`. Unscheduled before scheduled,
 * Pending before Unknown before Running, not ready before ready, lower deletion cost first, doubled-up
 * first, ready for less time first, more restarts first, newer first (ages compared on a log scale, as
 * Kubernetes does by default, ties broken by uid).
 */
function deleteBefore(a: Ranked, b: Ranked, costAnnotation: string, now: number): boolean {
  const pa = a.pod;
  const pb = b.pod;
  const nodeA = pa.spec?.nodeName ?? "";
  const nodeB = pb.spec?.nodeName ?? "";
  if (nodeA !== nodeB && (nodeA === "" || nodeB === "")) return nodeA === "";
  const phaseA = PHASE_ORDER[pa.status?.phase ?? ""] ?? 0;
  const phaseB = PHASE_ORDER[pb.status?.phase ?? ""] ?? 0;
  if (phaseA !== phaseB) return phaseA < phaseB;
  const readyA = isPodReady(pa);
  const readyB = isPodReady(pb);
  if (readyA !== readyB) return !readyA;
  const costA = deletionCost(pa, costAnnotation);
  const costB = deletionCost(pb, costAnnotation);
  if (costA !== costB) return costA < costB;
  if (a.rank !== b.rank) return a.rank > b.rank;
  const uidOrder = () => (pa.metadata.uid ?? "") < (pb.metadata.uid ?? "");
  if (readyA && readyB) {
    const ta = timeOf(readyCondition(pa)?.lastTransitionTime);
    const tb = timeOf(readyCondition(pb)?.lastTransitionTime);
    if (ta !== tb) {
      const diff = logRank(ta, now) - logRank(tb, now);
      return diff === 0 ? uidOrder() : diff < 0;
    }
  }
  const ra = maxRestarts(pa);
  const rb = maxRestarts(pb);
  if (ra.regular !== rb.regular) return ra.regular > rb.regular;
  if (ra.sidecar !== rb.sidecar) return ra.sidecar > rb.sidecar;
  const ca = timeOf(pa.metadata.creationTimestamp);
  const cb = timeOf(pb.metadata.creationTimestamp);
  if (ca !== cb) {
    const diff = logRank(ca, now) - logRank(cb, now);
    return diff === 0 ? uidOrder() : diff < 0;
  }
  return false;
}

/**
 * The `count` pods to delete from `pods` (getPodsToDelete). `related` are the active pods of the
 * controller and its siblings (replica sets of the same deployment), for the doubled-up rank.
 */
export function podsToDelete(
  pods: readonly Pod[],
  related: readonly Pod[],
  count: number,
  costAnnotation: string,
  now = Date.now(),
): Pod[] {
  if (count >= pods.length) return [...pods];
  const onNode = new Map<string, number>();
  for (const pod of related) {
    if (!isPodActive(pod)) continue;
    const node = pod.spec?.nodeName ?? "";
    onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  const ranked: Ranked[] = pods.map((pod) => ({ pod, rank: onNode.get(pod.spec?.nodeName ?? "") ?? 0 }));
  ranked.sort((a, b) => (deleteBefore(a, b, costAnnotation, now) ? -1 : deleteBefore(b, a, costAnnotation, now) ? 1 : 0));
  return ranked.slice(0, count).map((r) => r.pod);
}
