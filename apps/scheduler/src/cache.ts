// The scheduler's view of the cluster, kept current from the informers' events (kube-scheduler's cache,
// pkg/scheduler/backend/cache): what each node's pods use, the pods waiting for a node, and the pods this
// scheduler bound that the informer does not show bound yet ("assumed"). A pass used to rebuild all of it
// from every cached pod, which made each pass cost as much as the cluster is large.
import type { Node, Pod } from "@orch/api";
import type { NodeState } from "./filters.js";
import { type Amounts, NodeUsage, nodeAllocatable, podRequests } from "./resources.js";

export interface Placed {
  pod: Pod;
  requests: Amounts;
  /** Bound by this scheduler, not yet seen bound in the informer: never a victim. */
  assumed: boolean;
}

/** A node with the pods counted on it, by uid. */
export interface NodeInfo extends NodeState {
  name: string;
  pods: Map<string, Placed>;
}

/** What is counted on a node name, whether or not that Node exists (it may be registered again). */
interface Slot {
  usage: NodeUsage;
  pods: Map<string, Placed>;
}

export const isTerminal = (pod: Pod) => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
const uidOf = (pod: Pod) => pod.metadata.uid ?? "";

export class SchedulerCache {
  /** Nodes by name, each sharing its slot's usage and pods. */
  readonly nodes = new Map<string, NodeInfo>();
  private readonly slots = new Map<string, Slot>();
  /** Pod uid → the pod's latest state. */
  private readonly pods = new Map<string, Pod>();
  /** Pod uid → the node name it is counted on. */
  private readonly countedOn = new Map<string, string>();
  /** Pod uid → the pods waiting for a node (those `waits` accepts). */
  private readonly waiting = new Map<string, Pod>();
  /** Pod uid → the node this scheduler bound it to, until the informer shows the binding. */
  private readonly assumed = new Map<string, string>();
  /** Requests per pod object (the informer replaces the object when the pod changes). */
  private readonly requests = new WeakMap<Pod, Amounts>();
  /** Allocatable per node object, likewise. */
  private readonly allocatable = new WeakMap<Node, Amounts>();

  /** `waits`: whether an unbound pod is one this scheduler is to place. */
  constructor(private readonly waits: (pod: Pod) => boolean) {}

  /** The pods waiting for a node, in no particular order. */
  pending(): Pod[] {
    return [...this.waiting.values()];
  }

  requestsOf(pod: Pod): Amounts {
    let found = this.requests.get(pod);
    if (!found) this.requests.set(pod, (found = podRequests(pod)));
    return found;
  }

  setNode(node: Node): void {
    const name = node.metadata.name ?? "";
    let allocatable = this.allocatable.get(node);
    if (!allocatable) this.allocatable.set(node, (allocatable = nodeAllocatable(node)));
    const info = this.nodes.get(name);
    if (info) {
      info.node = node;
      info.allocatable = allocatable;
    } else this.nodes.set(name, { name, node, allocatable, ...this.slot(name) });
  }

  deleteNode(node: Node): void {
    const name = node.metadata.name ?? "";
    this.nodes.delete(name);
    if (this.slots.get(name)?.pods.size === 0) this.slots.delete(name);
  }

  /** A pod added or changed: counted on the node it is bound (or assumed) to, or waiting. */
  setPod(pod: Pod): void {
    const uid = uidOf(pod);
    this.uncount(uid);
    this.waiting.delete(uid);
    this.pods.set(uid, pod);
    const bound = pod.spec?.nodeName;
    if (bound) this.assumed.delete(uid);
    const node = bound || this.assumed.get(uid);
    if (node) {
      if (!isTerminal(pod)) this.count(node, { pod, requests: this.requestsOf(pod), assumed: !bound });
    } else if (this.waits(pod)) this.waiting.set(uid, pod);
  }

  deletePod(pod: Pod): void {
    const uid = uidOf(pod);
    this.uncount(uid);
    this.waiting.delete(uid);
    this.assumed.delete(uid);
    this.pods.delete(uid);
  }

  /** This scheduler is binding the pod to `node`: counted there from now on (kube-scheduler's AssumePod). */
  assume(pod: Pod, node: string): void {
    this.assumed.set(uidOf(pod), node);
    this.setPod(pod);
  }

  /** The binding failed: the pod is as the informer shows it again (ForgetPod). */
  forget(pod: Pod): void {
    const uid = uidOf(pod);
    this.assumed.delete(uid);
    const latest = this.pods.get(uid);
    if (latest) this.setPod(latest);
  }

  private slot(name: string): Slot {
    let slot = this.slots.get(name);
    if (!slot) this.slots.set(name, (slot = { usage: new NodeUsage(), pods: new Map() }));
    return slot;
  }

  private count(node: string, placed: Placed): void {
    const slot = this.slot(node);
    slot.pods.set(uidOf(placed.pod), placed);
    slot.usage.add(placed.requests);
    this.countedOn.set(uidOf(placed.pod), node);
  }

  private uncount(uid: string): void {
    const node = this.countedOn.get(uid);
    if (node === undefined) return;
    this.countedOn.delete(uid);
    const slot = this.slots.get(node)!;
    slot.usage.add(slot.pods.get(uid)!.requests, -1);
    slot.pods.delete(uid);
    if (slot.pods.size === 0 && !this.nodes.has(node)) this.slots.delete(node);
  }
}
