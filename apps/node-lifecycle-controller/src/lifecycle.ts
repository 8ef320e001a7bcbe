// Kubernetes' node lifecycle controller (pkg/controller/nodelifecycle, monitorNodeHealth): a node whose
// agent has neither renewed its Lease nor posted its status for the grace period is marked Unknown —
// every condition it reports goes to Unknown, reason NodeStatusUnknown — its pods are marked not
// Ready, and it is tainted unreachable; when its agent reports Ready again, the taints go.
//
// As in Kubernetes, what counts is when this controller last saw the heartbeat change (its own clock),
// not the timestamps the agent wrote, so clock skew between machines does not matter.
import type { NamingProfile, Pod } from "@orch/api";
import { type ApiClient, type Informer, type KubeObject, isConflict, isNotFound, nodesResource, podsResource } from "@orch/client";
import { type EventRecorder, type Result, writeStatus } from "@orch/controller";
import { rfc3339 } from "@orch/machinery";

interface Condition {
  type: string;
  status: string;
  lastHeartbeatTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}
interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string | null;
}
export interface NodeObject extends KubeObject {
  kind?: string;
  apiVersion?: string;
  spec?: { taints?: Taint[]; [key: string]: unknown };
  status?: { conditions?: Condition[]; [key: string]: unknown };
}
export interface LeaseObject extends KubeObject {
  spec?: { renewTime?: string | null };
}

/** The conditions a node agent reports; all go Unknown when it stops reporting (nodeConditionTypes). */
const REPORTED = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

export interface LifecycleOptions {
  client: Pick<ApiClient, "get" | "list" | "updateSubresource" | "updateWithRetry">;
  nodes: Pick<Informer<NodeObject>, "getByKey">;
  leases: Pick<Informer<LeaseObject>, "get">;
  profile: NamingProfile;
  recorder: Pick<EventRecorder, "event">;
  /** Kubernetes' --node-monitor-grace-period (40 s). */
  gracePeriodMs: number;
  /** Kubernetes' --node-monitor-period (5 s): how often a healthy node is looked at again. */
  monitorPeriodMs: number;
  now?: () => number;
}

interface Health {
  /** When a heartbeat was last seen to change, by this controller's clock. */
  probe: number;
  heartbeat: string | null | undefined;
  renew: string | null | undefined;
}

export function nodeLifecycle(options: LifecycleOptions): (key: string) => Promise<Result> {
  const { client, nodes, leases, profile, recorder, gracePeriodMs, monitorPeriodMs } = options;
  const now = options.now ?? Date.now;
  const health = new Map<string, Health>();
  const title = profile.nodeAgent[0]!.toUpperCase() + profile.nodeAgent.slice(1);
  // Kubernetes' keys in both profiles, as the scheduler reads them and workloads' tolerations name them.
  const taintKey = (what: string) => `node.kubernetes.io/${what}`;
  const unreachable = taintKey("unreachable");
  const notReady = taintKey("not-ready");

  return async (name) => {
    const node = nodes.getByKey(name);
    if (!node) {
      health.delete(name);
      return;
    }
    const ready = node.status?.conditions?.find((c) => c.type === "Ready");
    const lease = leases.get(name, profile.nodeLeaseNamespace);
    const t = now();
    let seen = health.get(name);
    if (!seen) {
      seen = { probe: t, heartbeat: ready?.lastHeartbeatTime, renew: lease?.spec?.renewTime };
      health.set(name, seen);
    }
    if (ready?.lastHeartbeatTime !== seen.heartbeat) {
      seen.heartbeat = ready?.lastHeartbeatTime;
      seen.probe = t;
    }
    if (lease?.spec?.renewTime !== seen.renew) {
      seen.renew = lease?.spec?.renewTime;
      seen.probe = t;
    }

    const expired = t > seen.probe + gracePeriodMs;
    if (expired && ready?.status !== "Unknown") {
      await markUnknown(node, t);
      return { requeueAfter: monitorPeriodMs };
    }
    await reconcileTaints(node, ready?.status);
    return { requeueAfter: expired ? monitorPeriodMs : Math.min(monitorPeriodMs, seen.probe + gracePeriodMs - t + 1) };
  };

  async function markUnknown(node: NodeObject, t: number): Promise<void> {
    const name = node.metadata!.name!;
    const at = rfc3339(new Date(t));
    try {
      await writeStatus(client, nodesResource, node, (fresh) => {
        const conditions = (fresh.status ??= {}).conditions ?? [];
        for (const type of REPORTED) {
          const c = conditions.find((x) => x.type === type);
          if (!c) {
            conditions.push({
              type,
              status: "Unknown",
              reason: "NodeStatusNeverUpdated",
              message: `${title} never posted node status.`,
              lastHeartbeatTime: fresh.metadata?.creationTimestamp ?? at,
              lastTransitionTime: at,
            });
          } else if (c.status !== "Unknown") {
            c.status = "Unknown";
            c.reason = "NodeStatusUnknown";
            c.message = `${title} stopped posting node status.`;
            c.lastTransitionTime = at;
          }
        }
        fresh.status.conditions = conditions;
      });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    recorder.event({ ...node, kind: "Node", apiVersion: "v1" }, "Normal", "NodeNotReady", `Node ${name} status is now: NodeNotReady`);
    await reconcileTaints(node, "Unknown");
    await markPodsNotReady(name, at);
  }

  /** doNoScheduleTaintingPass and the NoExecute taints: unreachable for Unknown, not-ready for False, none for True. */
  async function reconcileTaints(node: NodeObject, status: string | undefined): Promise<void> {
    const want = status === "Unknown" ? unreachable : status === "False" ? notReady : undefined;
    const has = (node.spec?.taints ?? []).filter((x) => x.key === unreachable || x.key === notReady);
    const wanted = want ? ["NoSchedule", "NoExecute"] : [];
    if (has.length === wanted.length && has.every((x) => x.key === want && wanted.includes(x.effect))) return;
    try {
      await client.updateWithRetry<NodeObject>(nodesResource, node.metadata!.name!, (fresh) => {
        const kept = (fresh.spec?.taints ?? []).filter((x) => x.key !== unreachable && x.key !== notReady);
        const added = wanted.map((effect) => ({
          key: want!,
          effect,
          ...(effect === "NoExecute" ? { timeAdded: rfc3339() } : {}),
        }));
        fresh.spec = { ...fresh.spec, taints: [...kept, ...added] };
        if (fresh.spec.taints!.length === 0) delete fresh.spec.taints;
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** MarkPodsNotReady: the Ready condition of the node's pods goes False, with an event on each. */
  async function markPodsNotReady(node: string, at: string): Promise<void> {
    const pods = await client.list<Pod>(podsResource, { fieldSelector: `spec.nodeName=${node}` });
    for (const pod of pods.items) {
      const readyNow = pod.status?.conditions?.find((c) => c.type === "Ready");
      if (readyNow?.status !== "True") continue;
      try {
        await writeStatus(client, podsResource, pod, (fresh) => {
          const c = fresh.status?.conditions?.find((x) => x.type === "Ready");
          if (c?.status !== "True") return;
          c.status = "False";
          c.lastTransitionTime = at;
        });
        recorder.event({ ...pod, kind: "Pod", apiVersion: "v1" }, "Warning", "NodeNotReady", "Node is not ready");
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }
}
