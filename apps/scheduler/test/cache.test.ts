// The scheduler's cache as the informers' events drive it: usage per node follows adds, updates and
// deletes of pods and nodes, and assumed bindings count until the informer shows them or they fail.
import type { Node, Pod } from "@orch/api";
import { describe, expect, it } from "vitest";
import { SchedulerCache } from "../src/cache.js";

const node = (name: string): Node =>
  ({ metadata: { name }, spec: {}, status: { allocatable: { cpu: "4", memory: "8Gi", pods: "110" } } }) as unknown as Node;

const pod = (uid: string, cpu: string, nodeName?: string, phase?: string): Pod =>
  ({
    metadata: { uid, name: uid, namespace: "default" },
    spec: { nodeName, containers: [{ name: "c", image: "x", resources: { requests: { cpu } } }] },
    status: phase ? { phase } : {},
  }) as unknown as Pod;

/** Every pod not yet bound waits, as the scheduler's own predicate would have it for its pods. */
const newCache = () => new SchedulerCache((p) => !p.metadata.deletionTimestamp);

const usage = (cache: SchedulerCache, name: string) => {
  const info = cache.nodes.get(name)!;
  return { cpu: info.usage.requested.get("cpu") ?? 0, pods: info.usage.pods, uids: [...info.pods.keys()].sort() };
};
const pendingUids = (cache: SchedulerCache) =>
  cache
    .pending()
    .map((p) => p.metadata.uid)
    .sort();

describe("SchedulerCache", () => {
  it("counts bound pods on their node and moves them when they change", () => {
    const cache = newCache();
    cache.setNode(node("n1"));
    cache.setNode(node("n2"));
    cache.setPod(pod("a", "500m", "n1"));
    cache.setPod(pod("b", "1", "n1"));
    expect(usage(cache, "n1")).toEqual({ cpu: 1500, pods: 2, uids: ["a", "b"] });

    // A newer state of the same pod replaces the old one's requests, not adds to them.
    cache.setPod(pod("a", "2", "n1"));
    expect(usage(cache, "n1")).toEqual({ cpu: 3000, pods: 2, uids: ["a", "b"] });

    // A pod that finished uses nothing; a deleted one is gone.
    cache.setPod(pod("a", "2", "n1", "Succeeded"));
    cache.deletePod(pod("b", "1", "n1"));
    expect(usage(cache, "n1")).toEqual({ cpu: 0, pods: 0, uids: [] });
    expect(usage(cache, "n2")).toEqual({ cpu: 0, pods: 0, uids: [] });
  });

  it("keeps unbound pods waiting until assumed, and waiting again when the binding is forgotten", () => {
    const cache = newCache();
    cache.setNode(node("n1"));
    const p = pod("p", "1");
    cache.setPod(p);
    expect(pendingUids(cache)).toEqual(["p"]);

    cache.assume(p, "n1");
    expect(pendingUids(cache)).toEqual([]);
    expect(usage(cache, "n1")).toEqual({ cpu: 1000, pods: 1, uids: ["p"] });
    expect(cache.nodes.get("n1")!.pods.get("p")!.assumed).toBe(true);

    // An update that still shows the pod unbound (its status written meanwhile) keeps the assumption.
    cache.setPod({ ...p, status: { conditions: [] } } as Pod);
    expect(pendingUids(cache)).toEqual([]);
    expect(cache.nodes.get("n1")!.pods.get("p")!.assumed).toBe(true);

    cache.forget(p);
    expect(pendingUids(cache)).toEqual(["p"]);
    expect(usage(cache, "n1")).toEqual({ cpu: 0, pods: 0, uids: [] });
  });

  it("turns an assumed pod into a bound one when the informer shows the binding", () => {
    const cache = newCache();
    cache.setNode(node("n1"));
    cache.setPod(pod("p", "1"));
    cache.assume(pod("p", "1"), "n1");
    cache.setPod(pod("p", "1", "n1"));
    expect(cache.nodes.get("n1")!.pods.get("p")!.assumed).toBe(false);
    expect(usage(cache, "n1")).toEqual({ cpu: 1000, pods: 1, uids: ["p"] });
    // A later failure of that binding's request changes nothing: the informer has the pod bound.
    cache.forget(pod("p", "1"));
    expect(usage(cache, "n1")).toEqual({ cpu: 1000, pods: 1, uids: ["p"] });
    expect(pendingUids(cache)).toEqual([]);
  });

  it("counts pods on a node that registers after them, and keeps them when it is deleted and comes back", () => {
    const cache = newCache();
    cache.setPod(pod("a", "1", "late"));
    expect(cache.nodes.has("late")).toBe(false);
    cache.setNode(node("late"));
    expect(usage(cache, "late")).toEqual({ cpu: 1000, pods: 1, uids: ["a"] });

    cache.deleteNode(node("late"));
    expect(cache.nodes.has("late")).toBe(false);
    cache.setNode(node("late"));
    expect(usage(cache, "late")).toEqual({ cpu: 1000, pods: 1, uids: ["a"] });
  });

  it("follows a node's changes without losing what its pods use", () => {
    const cache = newCache();
    cache.setNode(node("n1"));
    cache.setPod(pod("a", "1", "n1"));
    const bigger = node("n1");
    bigger.status!.allocatable = { cpu: "16", memory: "8Gi", pods: "110" };
    cache.setNode(bigger);
    const info = cache.nodes.get("n1")!;
    expect(info.node).toBe(bigger);
    expect(info.allocatable.get("cpu")).toBe(16000);
    expect(usage(cache, "n1")).toEqual({ cpu: 1000, pods: 1, uids: ["a"] });
  });
});
