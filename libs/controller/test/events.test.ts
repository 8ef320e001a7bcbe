// The event recorder against a real apiserver process: what `kubectl get events` and `kubectl describe`
// read back — Kubernetes' fields, repeats counted on one Event, a flood of similar events combined,
// and at most 25 events per source and object.
import type { Event } from "@orch/api";
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import { type ApiserverProcess, startApiserverProcess } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventBroadcaster, SendLimit, coreEventsResource } from "../src/index.js";

const namespaces: ResourceRef = { group: "", version: "v1", plural: "namespaces", namespaced: false };
const configMaps: ResourceRef = { group: "", version: "v1", plural: "configmaps", namespaced: true };

let apiserver: ApiserverProcess;
let client: ApiClient;

beforeAll(async () => {
  apiserver = await startApiserverProcess();
  client = ApiClient.fromKubeconfig(apiserver.kubeconfigPath, { userAgent: "events-test" });
});
afterAll(async () => {
  client?.close();
  await apiserver?.dispose();
});

let counter = 0;
/** A fresh namespace and a config map in it, the object the events are about. */
async function subject(): Promise<{ namespace: string; obj: KubeObject }> {
  const namespace = `ev-${process.pid}-${++counter}`;
  await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  const cm = await client.create<KubeObject>(configMaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", namespace } });
  return { namespace, obj: { ...cm, apiVersion: "v1", kind: "ConfigMap" } };
}

/** A broadcaster on a clock the test moves. */
function broadcaster(start = Date.parse("2026-01-01T10:00:00Z"), inFlight?: number) {
  let now = start;
  const b = new EventBroadcaster({ client, clock: { now: () => now }, retryDelayMs: 10, inFlight });
  return { b, advance: (ms: number) => (now += ms) };
}

const eventsIn = async (namespace: string): Promise<Event[]> => (await client.list<Event>(coreEventsResource, { namespace })).items;

describe("EventBroadcaster", () => {
  it("records an event with the fields client-go's recorder sets, findable by kubectl describe's field selector", async () => {
    const { namespace, obj } = await subject();
    const { b } = broadcaster();
    b.recorder("deployment-controller").event(obj, "Normal", "ScalingReplicaSet", "Scaled up replica set web-1 from 0 to 3");
    await b.flush();
    const found = await client.list<Event>(coreEventsResource, {
      namespace,
      fieldSelector: `involvedObject.name=web,involvedObject.namespace=${namespace},involvedObject.kind=ConfigMap,involvedObject.uid=${obj.metadata?.uid}`,
    });
    expect(found.items).toHaveLength(1);
    const event = found.items[0]!;
    expect(event.metadata.name).toMatch(/^web\.[0-9a-f]+$/);
    expect(event).toMatchObject({
      involvedObject: { kind: "ConfigMap", apiVersion: "v1", name: "web", namespace, uid: obj.metadata?.uid },
      reason: "ScalingReplicaSet",
      message: "Scaled up replica set web-1 from 0 to 3",
      type: "Normal",
      count: 1,
      source: { component: "deployment-controller" },
      reportingComponent: "deployment-controller",
      firstTimestamp: "2026-01-01T10:00:00Z",
      lastTimestamp: "2026-01-01T10:00:00Z",
    });
  });

  it("counts a repeated event on the first one (count, lastTimestamp), and creates it anew if it was deleted", async () => {
    const { namespace, obj } = await subject();
    const { b, advance } = broadcaster();
    const recorder = b.recorder("replicaset-controller");
    recorder.event(obj, "Warning", "FailedCreate", "Error creating: quota exceeded");
    advance(5_000);
    recorder.event(obj, "Warning", "FailedCreate", "Error creating: quota exceeded");
    advance(5_000);
    recorder.event(obj, "Warning", "FailedCreate", "Error creating: quota exceeded");
    await b.flush();
    let events = await eventsIn(namespace);
    expect(events.map((e) => [e.count, e.firstTimestamp, e.lastTimestamp])).toEqual([[3, "2026-01-01T10:00:00Z", "2026-01-01T10:00:10Z"]]);

    await client.delete(coreEventsResource, events[0]!.metadata.name ?? "", { namespace });
    advance(5_000);
    recorder.event(obj, "Warning", "FailedCreate", "Error creating: quota exceeded");
    await b.flush();
    events = await eventsIn(namespace);
    expect(events.map((e) => [e.count, e.firstTimestamp, e.lastTimestamp])).toEqual([[4, "2026-01-01T10:00:00Z", "2026-01-01T10:00:15Z"]]);
  });

  it("combines the 10th and later similar events (same reason, other messages) into one counted event", async () => {
    const { namespace, obj } = await subject();
    const { b, advance } = broadcaster();
    const recorder = b.recorder("replicaset-controller");
    for (let i = 1; i <= 12; i++) {
      recorder.event(obj, "Normal", "SuccessfulCreate", `Created pod: web-${i}`);
      advance(100);
    }
    await b.flush();
    const events = await eventsIn(namespace);
    const messages = events.map((e) => `${e.count} ${e.message}`).sort();
    expect(messages).toEqual(
      [
        "1 Created pod: web-1",
        ...[2, 3, 4, 5, 6, 7, 8, 9].map((i) => `1 Created pod: web-${i}`),
        "3 (combined from similar events): Created pod: web-12",
      ].sort(),
    );
  });

  it("lets one source say at most 25 things about one object in a burst", async () => {
    const { namespace, obj } = await subject();
    const { b } = broadcaster();
    const recorder = b.recorder("deployment-controller");
    for (let i = 1; i <= 30; i++) recorder.event(obj, "Normal", `Reason${i}`, "something happened");
    // Another source has its own budget.
    b.recorder("replicaset-controller").event(obj, "Normal", "Other", "something else");
    await b.flush();
    const events = await eventsIn(namespace);
    expect(events.filter((e) => e.source.component === "deployment-controller")).toHaveLength(25);
    expect(events.filter((e) => e.source.component === "replicaset-controller")).toHaveLength(1);
  });

  it("sends several events at once when asked (kube-scheduler's way), each one's repeats still counted on it", async () => {
    const { namespace, obj } = await subject();
    const { b, advance } = broadcaster(undefined, 8);
    const recorder = b.recorder("default-scheduler");
    // Twelve and their repeats: within the 25 one source may say about one object.
    for (let i = 1; i <= 12; i++) {
      recorder.event(obj, "Normal", `Step${i}`, `step ${i}`);
      // A repeat right behind each: a patch of the event its create is still making.
      recorder.event(obj, "Normal", `Step${i}`, `step ${i}`);
      advance(10);
    }
    await b.flush();
    const events = await eventsIn(namespace);
    expect(events).toHaveLength(12);
    expect(events.every((e) => e.count === 2)).toBe(true);
  });

  it("keeps the broadcasters sharing a send limit within it together, and sends all of their events", async () => {
    const { namespace, obj } = await subject();
    // The real client, counting the writes it has in flight.
    let inFlight = 0;
    let most = 0;
    const counted = <T>(write: () => Promise<T>): Promise<T> => {
      most = Math.max(most, ++inFlight);
      return write().finally(() => inFlight--);
    };
    const counting = {
      create: ((...args: Parameters<typeof client.create>) => counted(() => client.create(...args))) as typeof client.create,
      patch: ((...args: Parameters<typeof client.patch>) => counted(() => client.patch(...args))) as typeof client.patch,
    };
    const sendLimit = new SendLimit(2);
    // Five sources, as five nodes of one orchlet, each sending up to three at once on its own.
    const broadcasters = Array.from({ length: 5 }, () => new EventBroadcaster({ client: counting, inFlight: 3, sendLimit }));
    for (const [i, b] of broadcasters.entries()) {
      const recorder = b.recorder("kubelet", `node-${i}`);
      for (let n = 1; n <= 6; n++) recorder.event(obj, "Normal", "Started", `Started container c${n}`);
    }
    await Promise.all(broadcasters.map((b) => b.flush()));
    expect(most).toBe(2);
    expect(await eventsIn(namespace)).toHaveLength(30);
  });

  it("puts the events of a cluster-scoped object in the default namespace", async () => {
    const ns = await client.create<KubeObject>(namespaces, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: `ev-cluster-${process.pid}` },
    });
    const { b } = broadcaster();
    b.recorder("namespace-controller").event({ ...ns, apiVersion: "v1", kind: "Namespace" }, "Normal", "Hello", "a cluster-scoped object");
    await b.flush();
    const events = await client.list<Event>(coreEventsResource, {
      namespace: "default",
      fieldSelector: `involvedObject.uid=${ns.metadata?.uid}`,
    });
    expect(events.items.map((e) => [e.metadata.namespace, e.reason])).toEqual([["default", "Hello"]]);
  });
});
