// Whether a pod may go on a node, with Kubernetes' reasons when it may not, and which of the nodes it
// fits is best. The filter plugins of the default profile that matter without volumes and ports, in
// their order (pkg/scheduler/framework/plugins): NodeUnschedulable, TaintToleration, NodeAffinity,
// NodeResourcesFit; a node is refused by the first that fails. Scoring is NodeResourcesFit's
// LeastAllocated over cpu and memory, which spreads pods.
import type { Node, Pod, Taint, Toleration } from "@orch/api";
import { type Amounts, type NodeUsage, nonZeroRequests } from "./resources.js";

/** A node as the scheduler sees it in one pass. */
export interface NodeState {
  node: Node;
  allocatable: Amounts;
  usage: NodeUsage;
}

type NodeSelectorRequirement = { key: string; operator: string; values?: string[] };
type NodeSelectorTerm = { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] };

export const REASON_UNSCHEDULABLE = "node(s) were unschedulable";
export const REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector";

const TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable";
const TAINT_NOT_READY = "node.kubernetes.io/not-ready";
const TAINT_UNREACHABLE = "node.kubernetes.io/unreachable";

/** v1 Toleration.ToleratesTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? "") {
    case "":
    case "Equal":
      return (t.value ?? "") === (taint.value ?? "");
    case "Exists":
      return true;
    default:
      return false;
  }
}

const tolerated = (pod: Pod, taint: Taint) => (pod.spec?.tolerations ?? []).some((t) => tolerates(t, taint));

/**
 * The node's taints, with the one the node lifecycle controller puts on a node that is not Ready
 * (`not-ready` when Ready is False or missing, `unreachable` when Unknown) when it is not there yet: the
 * scheduler itself only reads taints, so a node that is not Ready is refused the same way.
 */
export function effectiveTaints(node: Node): Taint[] {
  const taints = [...(node.spec.taints ?? [])];
  const ready = (node.status.conditions ?? []).find((c) => c.type === "Ready");
  if (ready?.status !== "True") {
    const key = ready?.status === "Unknown" ? TAINT_UNREACHABLE : TAINT_NOT_READY;
    if (!taints.some((t) => t.key === key && t.effect === "NoSchedule")) taints.push({ key, effect: "NoSchedule" });
  }
  return taints;
}

function matchesRequirement(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      if (value === undefined || values.length !== 1) return false;
      const have = Number.parseInt(value, 10);
      const want = Number.parseInt(values[0]!, 10);
      if (Number.isNaN(have) || Number.isNaN(want)) return false;
      return r.operator === "Gt" ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** A term matches when all its requirements do; an empty term matches nothing (NodeSelectorTerm semantics). */
function matchesTerm(term: NodeSelectorTerm, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  return (
    expressions.every((r) => matchesRequirement(r, labels[r.key])) &&
    fields.every((r) => r.key === "metadata.name" && matchesRequirement(r, node.metadata.name))
  );
}

/** nodeSelector and required node affinity (terms ORed). */
export function matchesNodeAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution as
    | { nodeSelectorTerms?: NodeSelectorTerm[] }
    | undefined;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((term) => matchesTerm(term, node));
}

/**
 * The filters before resources: why the node can never take this pod, whatever runs on it (preemption
 * cannot help), or undefined.
 */
export function staticReason(pod: Pod, node: Node): string | undefined {
  if (node.spec.unschedulable && !tolerated(pod, { key: TAINT_UNSCHEDULABLE, effect: "NoSchedule" })) return REASON_UNSCHEDULABLE;
  for (const taint of effectiveTaints(node)) {
    if (taint.effect !== "NoSchedule" && taint.effect !== "NoExecute") continue;
    if (!tolerated(pod, taint)) return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ""}}`;
  }
  if (!matchesNodeAffinity(pod, node)) return REASON_AFFINITY;
  return undefined;
}

/** NodeResourcesFit's Filter: every reason the node's free resources are short for `requests`. */
export function resourceReasons(requests: Amounts, allocatable: Amounts, usage: NodeUsage): string[] {
  const reasons: string[] = [];
  if (usage.pods + 1 > (allocatable.get("pods") ?? 0)) reasons.push("Too many pods");
  for (const [name, want] of requests) {
    if (name === "pods" || want <= 0) continue;
    if (want > (allocatable.get(name) ?? 0) - (usage.requested.get(name) ?? 0)) reasons.push(`Insufficient ${name}`);
  }
  return reasons;
}

/** LeastAllocated: the mean over cpu and memory of the share left free after placing the pod, 0–100. */
export function leastAllocatedScore(requests: Amounts, state: NodeState): number {
  const nz = nonZeroRequests(requests);
  const score = (capacity: number, used: number) => (capacity <= 0 || used > capacity ? 0 : ((capacity - used) * 100) / capacity);
  const cpu = score(state.allocatable.get("cpu") ?? 0, state.usage.nonZeroCpu + nz.cpu);
  const memory = score(state.allocatable.get("memory") ?? 0, state.usage.nonZeroMemory + nz.memory);
  return (cpu + memory) / 2;
}

/** `0/3 nodes are available: 2 Insufficient cpu, 1 node(s) were unschedulable.` (FitError.Error), and a PostFilter message. */
export function fitErrorMessage(nodeCount: number, reasons: Map<string, number>, postFilter?: string): string {
  const histogram = [...reasons].map(([reason, n]) => `${n} ${reason}`).sort();
  let message = `0/${nodeCount} nodes are available:`;
  if (histogram.length > 0) message += ` ${histogram.join(", ")}.`;
  if (postFilter) message += ` ${postFilter}.`;
  return message;
}
