// scheduler: binds pending pods to nodes, highest priority first, preempting lower-priority pods when
// that makes room (Kubernetes' kube-scheduler, default profile, for what orch's nodes offer).
import { nodesResource, podsResource } from "@orch/client";
import type { Node, Pod } from "@orch/api";
import { runControllerApp } from "@orch/controller";
import { DEFAULT_SCHEDULER_NAME, Scheduler } from "./scheduler.js";

/** The one key every change enqueues: a pass looks at all pending pods at once, in priority order. */
const PASS = "pending-pods";

export const working = runControllerApp({
  name: "scheduler",
  // kube-scheduler's events library sends each event on its own goroutine: a burst of bindings is not
  // followed by a minute-long queue of Scheduled events (nor by a full queue that drops them).
  eventsInFlight: 16,
  setup: (app) => {
    const pods = app.informer<Pod>(podsResource, { withoutManagedFields: true });
    const nodes = app.informer<Node>(nodesResource);
    const scheduler = new Scheduler({
      client: app.client,
      pods,
      nodes,
      recorder: app.eventRecorder(DEFAULT_SCHEDULER_NAME),
      log: app.log,
    });
    app.runController({
      name: "scheduler",
      sources: [
        { informer: pods, toKeys: () => [PASS] },
        { informer: nodes, toKeys: () => [PASS] },
      ],
      reconciler: () => scheduler.schedule(),
    });
  },
}).then((app) => app.working);
