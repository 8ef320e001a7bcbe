// The node agent's part in a test that runs no node agent: every pod of a namespace is marked Running
// and Ready through its `/status` as soon as it appears, unless its annotations say it never gets
// ready (as a container whose readiness probe never passes).
import type { Pod } from "@orch/api";
import { ApiClient, type ResourceRef, type WatchStream } from "@orch/client";

export const pods: ResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };

/** A pod with this annotation (from its template) is left not Ready. */
export const NEVER_READY = "test.orch.io/never-ready";

const isReady = (pod: Pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

export interface Kubelet {
  stop(): Promise<void>;
}

export async function startKubelet(kubeconfig: string, namespace: string): Promise<Kubelet> {
  const client = ApiClient.fromKubeconfig(kubeconfig, { userAgent: "test-kubelet" });
  let stopped = false;
  let stream: WatchStream<Pod> | undefined;
  const marking = new Set<string>();

  const markReady = async (pod: Pod): Promise<void> => {
    const name = pod.metadata.name ?? "";
    if (stopped || marking.has(name) || isReady(pod) || pod.metadata.deletionTimestamp) return;
    if (pod.metadata.annotations?.[NEVER_READY] === "true") return;
    marking.add(name);
    const now = `${new Date().toISOString().slice(0, 19)}Z`;
    try {
      await client.patch(
        pods,
        name,
        { status: { phase: "Running", conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }] } },
        { namespace, subresource: "status" },
      );
    } catch {
      // Deleted meanwhile: nothing to run.
    } finally {
      marking.delete(name);
    }
  };

  /** List, mark, watch from the list's revision; again when a watch ends (the server ends long or expired ones). */
  const listAndWatch = async (): Promise<void> => {
    const listed = await client.list<Pod>(pods, { namespace });
    for (const pod of listed.items) void markReady(pod);
    stream = client.watch<Pod>(pods, { namespace, resourceVersion: listed.metadata.resourceVersion });
    for await (const event of stream) {
      if (event.type === "ADDED" || event.type === "MODIFIED") void markReady(event.object);
    }
  };
  const running = (async () => {
    while (!stopped) {
      try {
        await listAndWatch();
      } catch {
        if (!stopped) await new Promise((r) => setTimeout(r, 100));
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      stream?.close();
      await running;
      client.close();
    },
  };
}
