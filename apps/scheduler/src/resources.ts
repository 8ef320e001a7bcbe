// What a pod asks of a node and what a node offers, in whole units (millicores, bytes, counts), as the
// scheduler's framework.Resource computes them (pkg/scheduler/framework/types.go,
// k8s.io/component-helpers/resource): a pod needs the larger of its containers' sum and any one init
// container, plus its overhead.
import type { Node, Pod } from "@orch/api";
import { parseQuantityJSON, quantityMilliValue, quantityValue } from "@orch/machinery";

/** Resource name → amount: millicores for `cpu`, whole units (bytes, counts) for everything else. */
export type Amounts = Map<string, number>;

/** Kubernetes' non-zero defaults, used only for scoring pods that request nothing (100m, 200Mi). */
const DEFAULT_MILLI_CPU = 100;
const DEFAULT_MEMORY = 200 * 1024 * 1024;

function amount(name: string, raw: string | number): number {
  try {
    const q = parseQuantityJSON(raw);
    return Number(name === "cpu" ? quantityMilliValue(q) : quantityValue(q));
  } catch {
    return 0;
  }
}

function amounts(list: Record<string, string | number> | undefined): Amounts {
  const out: Amounts = new Map();
  for (const [name, raw] of Object.entries(list ?? {})) out.set(name, amount(name, raw));
  return out;
}

function addInto(into: Amounts, more: Amounts): void {
  for (const [name, v] of more) into.set(name, (into.get(name) ?? 0) + v);
}

/** The pod's requests (PodRequests): max(sum of containers, each init container) + overhead. */
export function podRequests(pod: Pod): Amounts {
  const spec = pod.spec;
  const total: Amounts = new Map();
  if (!spec) return total;
  for (const c of spec.containers) addInto(total, amounts(c.resources?.requests));
  for (const c of spec.initContainers ?? []) {
    for (const [name, v] of amounts(c.resources?.requests)) if (v > (total.get(name) ?? 0)) total.set(name, v);
  }
  addInto(total, amounts(spec.overhead));
  return total;
}

/** Requests as scoring sees them: cpu and memory never below the non-zero defaults when unset. */
export function nonZeroRequests(requests: Amounts): { cpu: number; memory: number } {
  return { cpu: requests.get("cpu") || DEFAULT_MILLI_CPU, memory: requests.get("memory") || DEFAULT_MEMORY };
}

export const nodeAllocatable = (node: Node): Amounts => amounts(node.status?.allocatable ?? node.status?.capacity);

/** What the pods on one node use: summed requests, the non-zero sums for scoring, and the pod count. */
export class NodeUsage {
  readonly requested: Amounts = new Map();
  nonZeroCpu = 0;
  nonZeroMemory = 0;
  pods = 0;

  add(requests: Amounts, sign: 1 | -1 = 1): void {
    for (const [name, v] of requests) this.requested.set(name, (this.requested.get(name) ?? 0) + sign * v);
    const nz = nonZeroRequests(requests);
    this.nonZeroCpu += sign * nz.cpu;
    this.nonZeroMemory += sign * nz.memory;
    this.pods += sign;
  }

  clone(): NodeUsage {
    const copy = new NodeUsage();
    for (const [k, v] of this.requested) copy.requested.set(k, v);
    copy.nonZeroCpu = this.nonZeroCpu;
    copy.nonZeroMemory = this.nonZeroMemory;
    copy.pods = this.pods;
    return copy;
  }
}
