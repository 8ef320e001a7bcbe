// The simulated node agents of one process: each node registers itself, renews its Lease, posts its
// status and runs the pods bound to it, each through its own client (its own certificate), as one
// kubelet per node would. The pods of all the nodes come from one informer and one work queue.
import type { NamingProfile, Pod } from "@orch/api";
import {
  type ApiClient,
  Informer,
  type KubeObject,
  isAlreadyExists,
  isConflict,
  isNotFound,
  keyOf,
  nodesResource,
  podsResource,
} from "@orch/client";
import {
  type Controller,
  EventBroadcaster,
  type EventRecorder,
  SendLimit,
  leaseResource,
  runController,
  writeStatus,
} from "@orch/controller";
import type { Logger } from "@orch/log";
import { jsonEqual } from "@orch/machinery";
import { PodAddresses, nodeAddress, nodePodCidr } from "./addresses.js";
import type { OrchletConfig } from "./config.js";
import {
  type LeaseObject,
  type NodeObject,
  type SimulatedNode,
  agentWords,
  conditionsCurrent,
  initialNode,
  nodeLease,
  nodeStatus,
} from "./node.js";
import { type PodMemory, planPod } from "./pod-status.js";
import { parseSimulation, simulateAnnotation } from "./simulate.js";

export interface NodeAgent extends SimulatedNode {
  client: ApiClient;
  /** Events go out as the node, through its own broadcaster. */
  events: EventBroadcaster;
  recorder: EventRecorder;
  addresses: PodAddresses;
  /** The Node as last written or read. */
  object?: NodeObject;
  lease?: LeaseObject;
  lastStatusPost: number;
}

export interface OrchletOptions {
  config: OrchletConfig;
  profile: NamingProfile;
  log: Logger;
  /** Each node's name and its client (authenticated as that node). */
  nodes: { name: string; index: number; client: ApiClient }[];
}

/**
 * Event sends at once for all the nodes together. Each kubelet sends its events one at a time; a hundred
 * simulated ones doing so would keep a hundred event writes queued at the apiserver ahead of the pod
 * status writes those events tell of (three events a pod against one status write). A few at a time,
 * the events follow the pods instead of pacing them; none is dropped (each node's queue holds 1,000).
 */
const EVENT_SENDS = 4;

const terminal = (phase: string | undefined) => phase === "Succeeded" || phase === "Failed";

interface Remembered extends PodMemory {
  uid: string;
  node: string;
  /** Unknown simulation directives already reported. */
  warned: boolean;
}

export class Orchlet {
  readonly agents = new Map<string, NodeAgent>();
  private readonly memory = new Map<string, Remembered>();
  private readonly abort = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private pods: Informer<Pod> | undefined;
  private controller: Controller | undefined;

  constructor(private readonly options: OrchletOptions) {
    const { config, profile } = options;
    const sendLimit = new SendLimit(EVENT_SENDS);
    for (const { name, index, client } of options.nodes) {
      const podCidr = nodePodCidr(config.clusterCidr, index);
      const events = new EventBroadcaster({ client, log: options.log, sendLimit });
      this.agents.set(name, {
        name,
        index,
        address: nodeAddress(config.nodeCidr, index),
        podCidr,
        client,
        events,
        recorder: events.recorder(agentWords(profile).lower, name),
        addresses: new PodAddresses(podCidr),
        lastStatusPost: 0,
      });
    }
  }

  /** Registers the nodes, starts their heartbeats, then runs their pods. */
  async start(): Promise<void> {
    const { log, config } = this.options;
    const agents = [...this.agents.values()];
    await Promise.all(agents.map((a) => this.register(a)));
    await Promise.all(agents.map((a) => this.renewLease(a)));
    log.info(`registered ${agents.length} node(s): ${agents.map((a) => a.name).join(", ")}`);
    this.every(config.leaseRenewMs, () => Promise.all(agents.map((a) => this.renewLease(a))));
    this.every(config.statusUpdateMs, () => Promise.all(agents.map((a) => this.updateStatus(a))));
    if (agents.length === 0) return;

    // One informer for the pods of every node; its identity is the first node's (each may read pods).
    const pods = new Informer<Pod>(agents[0]!.client, {
      ref: podsResource,
      withoutManagedFields: true,
      onError: (e) => log.error("pod informer", e),
    });
    this.pods = pods;
    pods.start();
    await pods.waitForSync();
    // Addresses pods already hold (a restart) are taken before any new pod gets one.
    for (const pod of pods.list()) {
      const agent = this.agentOf(pod);
      if (agent && pod.status?.podIP && pod.metadata.uid && !terminal(pod.status.phase))
        agent.addresses.assign(pod.metadata.uid, pod.status.podIP);
    }
    // A pod's containers start when its node hears of it, not when a worker gets to it (see planPod).
    const off = pods.addEventHandler({ onAdd: (pod) => this.notice(pod), onUpdate: (_, pod) => this.notice(pod) });
    this.abort.signal.addEventListener("abort", off, { once: true });
    this.controller = runController({
      name: "pods",
      sources: [{ informer: pods, filter: (e) => this.agentOf(e.object as Pod) !== undefined || e.type === "delete" }],
      workers: 16,
      reconciler: (key) => this.reconcilePod(key),
      signal: this.abort.signal,
      log: log.child("pods"),
    });
    await this.controller.ready;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) clearTimeout(t);
    await this.controller?.stop();
    await this.pods?.stop();
    for (const agent of this.agents.values()) agent.events.stop();
  }

  private agentOf(pod: Pod | undefined): NodeAgent | undefined {
    const node = pod?.spec?.nodeName;
    return node ? this.agents.get(node) : undefined;
  }

  /** Runs `work` every `ms`, never two at once. */
  private every(ms: number, work: () => Promise<unknown>): void {
    const tick = () => {
      if (this.abort.signal.aborted) return;
      work()
        .catch((e) => this.options.log.error("periodic work failed", e))
        .finally(() => {
          if (!this.abort.signal.aborted) this.timers.push(setTimeout(tick, ms));
        });
    };
    this.timers.push(setTimeout(tick, ms));
  }

  // ---- nodes ----

  /** registerWithAPIServer: create the Node, or take over the existing one; then post its status. */
  private async register(agent: NodeAgent): Promise<void> {
    const { profile } = this.options;
    const wanted = initialNode(agent, profile);
    let node: NodeObject;
    try {
      node = await agent.client.create<NodeObject>(nodesResource, wanted);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      node = await agent.client.get<NodeObject>(nodesResource, agent.name);
      // The labels kubelet owns are put back (reconcileExtendedResource/updateDefaultLabels).
      const labels = { ...node.metadata?.labels, ...wanted.metadata?.labels };
      if (!jsonEqual(labels, node.metadata?.labels ?? {}) || !node.spec?.podCIDR) {
        node = await agent.client.update<NodeObject>(nodesResource, {
          ...node,
          metadata: { ...node.metadata, labels },
          spec: { ...node.spec, podCIDR: node.spec?.podCIDR ?? agent.podCidr, podCIDRs: node.spec?.podCIDRs ?? [agent.podCidr] },
        });
      }
    }
    agent.object = node;
    await this.postStatus(agent, node);
    agent.recorder.event({ ...node, kind: "Node", apiVersion: "v1" }, "Normal", "Starting", `Starting ${agentWords(profile).lower}.`);
    agent.recorder.event({ ...node, kind: "Node", apiVersion: "v1" }, "Normal", "NodeReady", `Node ${agent.name} status is now: NodeReady`);
  }

  private async postStatus(agent: NodeAgent, node: NodeObject): Promise<void> {
    const { config, profile } = this.options;
    agent.object = await writeStatus(agent.client, nodesResource, node, (fresh) => {
      fresh.status = nodeStatus(fresh, agent, config, profile);
    });
    agent.lastStatusPost = Date.now();
  }

  /** tryUpdateNodeStatus: post when the API's view differs from ours (a controller said Unknown) or the report is due. */
  private async updateStatus(agent: NodeAgent): Promise<void> {
    const { config, profile, log } = this.options;
    try {
      const node = await agent.client.get<NodeObject>(nodesResource, agent.name);
      if (conditionsCurrent(node, profile) && Date.now() - agent.lastStatusPost < config.statusReportMs) return;
      await this.postStatus(agent, node);
    } catch (e) {
      if (isNotFound(e)) {
        // Deleted under us: kubelet registers again.
        log.info(`${agent.name}: the Node was deleted; registering again`);
        agent.lease = undefined;
        await this.register(agent).catch((err) => log.error(`${agent.name}: registration failed`, err));
        return;
      }
      log.error(`${agent.name}: status update failed`, e);
    }
  }

  /** The node lease heartbeat: renew, creating the Lease when missing. */
  private async renewLease(agent: NodeAgent): Promise<void> {
    const { config, profile, log } = this.options;
    const ref = leaseResource(profile.apiDomain);
    try {
      if (!agent.object?.metadata?.uid) return;
      const fresh = nodeLease(profile, agent.object, config.leaseDurationSeconds);
      if (!agent.lease) {
        try {
          agent.lease = await agent.client.get<LeaseObject>(ref, agent.name, { namespace: fresh.metadata!.namespace });
        } catch (e) {
          if (!isNotFound(e)) throw e;
          agent.lease = await agent.client.create<LeaseObject>(ref, fresh);
          return;
        }
      }
      agent.lease = await agent.client.update<LeaseObject>(ref, {
        ...agent.lease,
        metadata: { ...agent.lease.metadata, ownerReferences: fresh.metadata!.ownerReferences },
        spec: { ...agent.lease.spec, ...fresh.spec },
      });
    } catch (e) {
      // A conflict or a vanished Lease: read it again at the next renewal.
      agent.lease = undefined;
      log.warn(`${agent.name}: lease renewal failed: ${(e as Error).message}`);
    }
  }

  // ---- pods ----

  /** What the agent first remembers of a pod bound to one of its nodes. */
  private remember(key: string, pod: Pod, agent: NodeAgent): Remembered {
    const memory = {
      uid: pod.metadata.uid ?? "",
      node: agent.name,
      seenAt: Date.now(),
      startedAt: new Map(),
      killing: false,
      warned: false,
    };
    this.memory.set(key, memory);
    return memory;
  }

  private notice(pod: Pod): void {
    const agent = this.agentOf(pod);
    const key = keyOf(pod);
    if (agent && !this.memory.has(key)) this.remember(key, pod, agent);
  }

  private async reconcilePod(key: string): Promise<{ requeueAfter?: number } | void> {
    const pod = this.pods?.getByKey(key);
    const remembered = this.memory.get(key);
    const agent = this.agentOf(pod);
    if (!pod || !agent || (remembered && remembered.uid !== pod.metadata.uid)) {
      if (remembered) {
        this.agents.get(remembered.node)?.addresses.release(remembered.uid);
        this.memory.delete(key);
      }
      if (!pod || !agent) return;
    }
    const uid = pod.metadata.uid ?? "";
    const memory = this.memory.get(key) ?? this.remember(key, pod, agent);
    const sim = parseSimulation(pod.metadata.annotations?.[simulateAnnotation(this.options.profile)]);
    const plan = planPod({
      pod,
      now: Date.now(),
      memory,
      sim,
      timing: this.options.config,
      hostIP: agent.address,
      podIP: () => agent.addresses.assign(uid),
    });
    const about = { ...pod, kind: "Pod", apiVersion: "v1" } as KubeObject;
    for (const e of plan.events) agent.recorder.event(about, e.type, e.reason, e.message, e.fieldPath);
    if (sim.unknown.length > 0 && !memory.warned) {
      memory.warned = true;
      agent.recorder.event(
        about,
        "Warning",
        "InvalidSimulation",
        `unknown ${simulateAnnotation(this.options.profile)} directives: ${sim.unknown.join(", ")}`,
      );
    }
    const status = plan.status;
    if (status && !jsonEqual(status, pod.status ?? {})) {
      try {
        await writeStatus(agent.client, podsResource, pod, (fresh) => {
          fresh.status = status;
        });
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
    }
    if (plan.delete) {
      try {
        await agent.client.delete(podsResource, pod.metadata.name!, {
          namespace: pod.metadata.namespace,
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
      agent.addresses.release(uid);
      return;
    }
    // A finished pod's sandbox is gone: its address may go to another pod (its status keeps it, as kubelet's does).
    if (terminal(status?.phase ?? pod.status?.phase)) agent.addresses.release(uid);
    return plan.after !== undefined ? { requeueAfter: plan.after } : undefined;
  }
}
