// One scheduling pass over the informers' caches, as kube-scheduler's loop does it pod by pod
// (pkg/scheduler/schedule_one.go), made level-triggered: every pass sees every pending pod, highest
// priority first (then oldest), and either binds it to the best node that fits (through pods/binding),
// or preempts lower-priority pods for it (pkg/scheduler/framework/preemption), or marks it
// Unschedulable with Kubernetes' message. Its cache (cache.ts) follows the informers' events; pods it
// has bound but the informer does not show bound yet are "assumed": counted on their node and not
// scheduled again.
import type { Node, Pod } from "@orch/api";
import { type ApiClient, type EventHandlers, type KubeObject, isConflict, isNotFound, podsResource } from "@orch/client";
import { type EventRecorder, type Logger, writeStatus } from "@orch/controller";
import { cloneJson, jsonEqual, rfc3339 } from "@orch/machinery";
import { type NodeInfo, SchedulerCache, isTerminal } from "./cache.js";
import { fitErrorMessage, leastAllocatedScore, resourceReasons, staticReason } from "./filters.js";
import type { Amounts, NodeUsage } from "./resources.js";

export const DEFAULT_SCHEDULER_NAME = "default-scheduler";

const NO_VICTIMS = "No preemption victims found for incoming pod";
const NOT_HELPFUL = "Preemption is not helpful for scheduling";
/** ErrNoNodesAvailable: with no node at all there is no fit error and no preemption. */
const NO_NODES = "no nodes available to schedule pods";

export interface SchedulerOptions {
  client: Pick<ApiClient, "createSubresource" | "delete" | "get" | "updateSubresource">;
  /** The informers the scheduler's cache follows (it adds its handlers before they start). */
  pods: { addEventHandler(handlers: EventHandlers<Pod>): unknown };
  nodes: { addEventHandler(handlers: EventHandlers<Node>): unknown };
  recorder: EventRecorder;
  log: Logger;
  /** The pods this scheduler serves: `spec.schedulerName`; default `default-scheduler`. */
  schedulerName?: string;
  /** Writes (bindings, status updates, deletions) in flight at once; default 32. */
  concurrency?: number;
}

interface Nomination {
  uid: string;
  priority: number;
  requests: Amounts;
}

const priorityOf = (pod: Pod) => pod.spec?.priority ?? 0;
const nameOf = (pod: Pod) => `${pod.metadata.namespace}/${pod.metadata.name}`;
const startOf = (pod: Pod) => pod.status?.startTime ?? pod.metadata.creationTimestamp ?? "";
const asPod = (pod: Pod): KubeObject => ({ ...pod, apiVersion: "v1", kind: "Pod" }) as KubeObject;

/** PrioritySort: higher priority first, then the pod that has waited longest. */
function byPriority(a: Pod, b: Pod): number {
  return priorityOf(b) - priorityOf(a) || startOf(a).localeCompare(startOf(b)) || nameOf(a).localeCompare(nameOf(b));
}

type Condition = {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
};

/** podutil.UpdatePodCondition: replaces the condition of that type; the transition time moves only when the status does. */
function setCondition(pod: Pod, condition: Omit<Condition, "lastProbeTime" | "lastTransitionTime">): void {
  const status = (pod.status ??= {});
  const conditions = (status.conditions ??= []) as Condition[];
  const i = conditions.findIndex((c) => c.type === condition.type);
  const old = conditions[i];
  const next: Condition = {
    ...condition,
    lastProbeTime: null,
    lastTransitionTime: old && old.status === condition.status ? (old.lastTransitionTime ?? null) : rfc3339(),
  };
  if (i < 0) conditions.push(next);
  else conditions[i] = next;
}

/** Runs the tasks, at most `limit` at once. */
async function runAll(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

export class Scheduler {
  private readonly schedulerName: string;
  private readonly concurrency: number;
  private readonly cache: SchedulerCache;
  /**
   * Pod uid → the node it preempted for, from the moment the victims are chosen (kube-scheduler's
   * PodNominator): the room is held even while the cache does not show `nominatedNodeName` yet.
   */
  private readonly nominatedNodes = new Map<string, string>();
  /** Uids of victims this scheduler deleted, terminating even while the cache does not show it yet. */
  private readonly preempting = new Set<string>();

  constructor(private readonly options: SchedulerOptions) {
    this.schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.concurrency = options.concurrency ?? 32;
    const cache = (this.cache = new SchedulerCache((pod) => this.serves(pod)));
    options.pods.addEventHandler({
      onAdd: (pod) => cache.setPod(pod),
      onUpdate: (_, pod) => cache.setPod(pod),
      onDelete: (pod) => {
        cache.deletePod(pod);
        this.preempting.delete(pod.metadata.uid ?? "");
      },
    });
    options.nodes.addEventHandler({
      onAdd: (node) => cache.setNode(node),
      onUpdate: (_, node) => cache.setNode(node),
      onDelete: (node) => cache.deleteNode(node),
    });
  }

  /** One pass. Throws when a write failed for a reason other than a changed world (then retried with backoff). */
  async schedule(): Promise<void> {
    const nodes = this.cache.nodes;
    const pending = this.cache.pending();
    const waiting = new Set(pending.map((p) => p.metadata.uid ?? ""));
    for (const uid of this.nominatedNodes.keys()) if (!waiting.has(uid)) this.nominatedNodes.delete(uid);
    pending.sort(byPriority);

    // Room held on a node for pods that preempted there (nominatedNodeName), against pods of lower priority.
    const nominations = new Map<string, Nomination[]>();
    for (const pod of pending) {
      const node = this.nominatedNode(pod);
      if (node && nodes.has(node)) this.nominate(nominations, node, pod);
    }

    const writes: (() => Promise<void>)[] = [];
    const failures: unknown[] = [];
    for (const pod of pending) {
      const requests = this.cache.requestsOf(pod);
      const reasons = new Map<string, string[]>();
      let best: { info: NodeInfo; score: number } | undefined;
      for (const info of nodes.values()) {
        const why = this.unfit(pod, requests, info, nominations);
        if (why.length > 0) {
          reasons.set(info.name, why);
          continue;
        }
        // The node a pod preempted for is tried first (kube-scheduler evaluates the nominated node first).
        const score = info.name === this.nominatedNode(pod) ? Number.POSITIVE_INFINITY : leastAllocatedScore(requests, info);
        if (!best || score > best.score || (score === best.score && info.name < best.info.name)) best = { info, score };
      }
      this.unnominate(nominations, pod);
      if (best) {
        this.cache.assume(pod, best.info.name);
        writes.push(() => this.bind(pod, best.info.name).catch((e) => void failures.push(e)));
        continue;
      }
      writes.push(...this.unschedulable(pod, requests, nodes, reasons, nominations, pending));
    }
    await runAll(writes, this.concurrency);
    if (failures.length > 0) throw failures[0];
  }

  /** The node the pod preempted for: this scheduler's own record first, else the pod's status. */
  private nominatedNode(pod: Pod): string | undefined {
    return this.nominatedNodes.get(pod.metadata.uid ?? "") ?? (pod.status?.nominatedNodeName || undefined);
  }

  /** Being deleted: as the cache shows it, or as this scheduler knows it did. */
  private terminating(pod: Pod): boolean {
    return !!pod.metadata.deletionTimestamp || this.preempting.has(pod.metadata.uid ?? "");
  }

  /** Pods this scheduler binds: not yet bound, named for it, not going away, not gated. */
  private serves(pod: Pod): boolean {
    const spec = pod.spec;
    return (
      !!spec &&
      (spec.schedulerName ?? DEFAULT_SCHEDULER_NAME) === this.schedulerName &&
      !pod.metadata.deletionTimestamp &&
      (spec.schedulingGates ?? []).length === 0 &&
      !isTerminal(pod)
    );
  }

  private nominate(nominations: Map<string, Nomination[]>, node: string, pod: Pod): void {
    const list = nominations.get(node) ?? [];
    list.push({ uid: pod.metadata.uid ?? "", priority: priorityOf(pod), requests: this.cache.requestsOf(pod) });
    nominations.set(node, list);
  }

  private unnominate(nominations: Map<string, Nomination[]>, pod: Pod): void {
    const node = this.nominatedNode(pod);
    const list = node ? nominations.get(node) : undefined;
    if (list)
      nominations.set(
        node!,
        list.filter((n) => n.uid !== pod.metadata.uid),
      );
  }

  /** The node's usage with the room held for nominated pods of at least this pod's priority (addNominatedPods). */
  private reservedUsage(pod: Pod, info: NodeInfo, nominations: Map<string, Nomination[]>): NodeUsage {
    const held = (nominations.get(info.name) ?? []).filter((n) => n.uid !== pod.metadata.uid && n.priority >= priorityOf(pod));
    if (held.length === 0) return info.usage;
    const usage = info.usage.clone();
    for (const n of held) usage.add(n.requests);
    return usage;
  }

  /** Why the pod cannot go on the node now; empty when it can. */
  private unfit(pod: Pod, requests: Amounts, info: NodeInfo, nominations: Map<string, Nomination[]>): string[] {
    const why = staticReason(pod, info.node);
    if (why) return [why];
    return resourceReasons(requests, info.allocatable, this.reservedUsage(pod, info, nominations));
  }

  private async bind(pod: Pod, node: string): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    try {
      await this.options.client.createSubresource(
        podsResource,
        name ?? "",
        "binding",
        { apiVersion: "v1", kind: "Binding", metadata: { namespace, name, uid }, target: { kind: "Node", name: node } },
        { namespace },
      );
    } catch (e) {
      this.cache.forget(pod);
      // Bound meanwhile, or gone: the cache will say so, and the next pass goes on from there.
      if (isConflict(e) || isNotFound(e)) {
        this.options.log.info(`binding ${namespace}/${name} to ${node}: ${(e as Error).message}`);
        return;
      }
      throw e;
    }
    this.options.recorder.event(asPod(pod), "Normal", "Scheduled", `Successfully assigned ${namespace}/${name} to ${node}`);
  }

  /**
   * The pod fits no node: try preemption (PostFilter), then record why on the pod (PodScheduled=False,
   * Unschedulable) and as a FailedScheduling event. Returns the writes to make.
   */
  private unschedulable(
    pod: Pod,
    requests: Amounts,
    nodes: Map<string, NodeInfo>,
    reasons: Map<string, string[]>,
    nominations: Map<string, Nomination[]>,
    pending: Pod[],
  ): (() => Promise<void>)[] {
    if (nodes.size === 0) return this.markUnschedulable(pod, NO_NODES, undefined, []);
    const histogram = new Map<string, number>();
    for (const why of reasons.values()) for (const r of why) histogram.set(r, (histogram.get(r) ?? 0) + 1);
    const writes: (() => Promise<void>)[] = [];
    // undefined: nominatedNodeName unchanged; "": cleared.
    let nominated: string | undefined;
    let postFilter: string | undefined;
    const ineligible = this.ineligibleToPreempt(pod, nodes);
    if (ineligible) postFilter = `preemption: ${ineligible}`;
    else {
      const outcome = this.preempt(pod, requests, nodes, nominations);
      if ("victims" in outcome) {
        nominated = outcome.node.name;
        this.nominatedNodes.set(pod.metadata.uid ?? "", nominated);
        this.nominate(nominations, nominated, pod);
        writes.push(...this.evict(pod, outcome.node.name, outcome.victims, pending, nominations));
      } else {
        postFilter = `preemption: ${outcome.message}`;
        nominated = "";
        this.nominatedNodes.delete(pod.metadata.uid ?? "");
      }
    }
    return this.markUnschedulable(pod, fitErrorMessage(nodes.size, histogram, postFilter), nominated, writes);
  }

  /**
   * PodScheduled=False, Unschedulable, with `message`, and `nominatedNodeName` set ("" clears it,
   * undefined keeps it), before the other `writes`; a FailedScheduling event when that changed the pod.
   */
  private markUnschedulable(
    pod: Pod,
    message: string,
    nominated: string | undefined,
    writes: (() => Promise<void>)[],
  ): (() => Promise<void>)[] {
    const change = (p: Pod): void => {
      setCondition(p, { type: "PodScheduled", status: "False", reason: "Unschedulable", message });
      if (nominated === "") delete p.status?.nominatedNodeName;
      else if (nominated !== undefined) p.status = { ...p.status, nominatedNodeName: nominated };
    };
    const desired = cloneJson(pod);
    change(desired);
    if (jsonEqual(desired, pod)) return writes;
    writes.unshift(async () => {
      // The cache may lag behind an earlier pass's write: the event goes with a write that changed the pod.
      let changed = false;
      try {
        await writeStatus(this.options.client, podsResource, pod, (p) => {
          const before = JSON.stringify(p);
          change(p);
          changed = JSON.stringify(p) !== before;
        });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
        return;
      }
      if (changed) this.options.recorder.event(asPod(pod), "Warning", "FailedScheduling", message);
    });
    return writes;
  }

  /** PodEligibleToPreemptOthers. */
  private ineligibleToPreempt(pod: Pod, nodes: Map<string, NodeInfo>): string | undefined {
    if (pod.spec?.preemptionPolicy === "Never") return "not eligible due to preemptionPolicy=Never.";
    const nominated = this.nominatedNode(pod);
    const info = nominated ? nodes.get(nominated) : undefined;
    if (info && !staticReason(pod, info.node)) {
      for (const p of info.pods.values()) {
        if (this.terminating(p.pod) && priorityOf(p.pod) < priorityOf(pod))
          return "not eligible due to a terminating pod on the nominated node.";
      }
    }
    return undefined;
  }

  /**
   * DryRunPreemption and SelectCandidate: on each node where preemption can help, the fewest and
   * lowest pods whose removal makes room; then the node whose victims matter least (lowest highest
   * priority, lowest sum, fewest).
   */
  private preempt(
    pod: Pod,
    requests: Amounts,
    nodes: Map<string, NodeInfo>,
    nominations: Map<string, Nomination[]>,
  ): { node: NodeInfo; victims: Pod[] } | { message: string } {
    const statuses = new Map<string, number>();
    const count = (reason: string) => statuses.set(reason, (statuses.get(reason) ?? 0) + 1);
    let best: { node: NodeInfo; victims: Pod[]; rank: number[] } | undefined;
    for (const info of nodes.values()) {
      if (staticReason(pod, info.node)) {
        count(NOT_HELPFUL);
        continue;
      }
      const selected = this.selectVictims(pod, requests, info, nominations);
      if ("reasons" in selected) {
        for (const r of selected.reasons) count(r);
        continue;
      }
      const priorities = selected.victims.map(priorityOf);
      const rank = [Math.max(...priorities), priorities.reduce((a, b) => a + b, 0), priorities.length];
      const order = best ? compareRanks(rank, best.rank) : -1;
      if (order < 0 || (order === 0 && info.name < best!.node.name)) best = { node: info, victims: selected.victims, rank };
    }
    if (best) return { node: best.node, victims: best.victims };
    return { message: fitErrorMessage(nodes.size, statuses) };
  }

  /** SelectVictimsOnNode: all lower-priority pods out; if the pod then fits, put back the most important that still leave room. */
  private selectVictims(
    pod: Pod,
    requests: Amounts,
    info: NodeInfo,
    nominations: Map<string, Nomination[]>,
  ): { victims: Pod[] } | { reasons: string[] } {
    const lower = [...info.pods.values()].filter((p) => !p.assumed && priorityOf(p.pod) < priorityOf(pod));
    if (lower.length === 0) return { reasons: [NO_VICTIMS] };
    const usage = this.reservedUsage(pod, info, nominations).clone();
    for (const p of lower) usage.add(p.requests, -1);
    const short = resourceReasons(requests, info.allocatable, usage);
    if (short.length > 0) return { reasons: short };
    const victims: Pod[] = [];
    for (const p of lower.sort((a, b) => byPriority(a.pod, b.pod))) {
      usage.add(p.requests);
      if (resourceReasons(requests, info.allocatable, usage).length > 0) {
        usage.add(p.requests, -1);
        victims.push(p.pod);
      }
    }
    return { victims };
  }

  /**
   * prepareCandidate: each victim gets the DisruptionTarget condition, is deleted (gracefully, as any
   * client deletes a pod) and gets a Preempted event; lower-priority pods nominated to the same node
   * lose their nomination.
   */
  private evict(
    preemptor: Pod,
    node: string,
    victims: Pod[],
    pending: Pod[],
    nominations: Map<string, Nomination[]>,
  ): (() => Promise<void>)[] {
    const { client, recorder } = this.options;
    // Marked now, so the rest of this pass and the next ones see them going before the cache does.
    const toDelete = new Set(victims.filter((v) => !this.terminating(v)));
    for (const v of toDelete) this.preempting.add(v.metadata.uid ?? "");
    const writes = victims.map((victim) => async () => {
      const { namespace, name } = victim.metadata;
      try {
        if (toDelete.has(victim)) {
          await writeStatus(client, podsResource, victim, (p) =>
            setCondition(p, {
              type: "DisruptionTarget",
              status: "True",
              reason: "PreemptionByScheduler",
              message: `${preemptor.spec?.schedulerName ?? this.schedulerName}: preempting to accommodate a higher priority pod`,
            }),
          );
          await client.delete(podsResource, name ?? "", { namespace });
        }
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      recorder.event(asPod(victim), "Normal", "Preempted", `Preempted by pod ${preemptor.metadata.uid} on node ${node}`);
    });
    for (const other of pending) {
      if (this.nominatedNode(other) !== node || priorityOf(other) >= priorityOf(preemptor)) continue;
      this.unnominate(nominations, other);
      this.nominatedNodes.delete(other.metadata.uid ?? "");
      writes.push(async () => {
        await writeStatus(client, podsResource, other, (p) => {
          delete p.status?.nominatedNodeName;
        }).catch((e) => {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        });
      });
    }
    return writes;
  }
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
