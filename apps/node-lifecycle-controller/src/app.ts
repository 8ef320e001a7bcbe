// node-lifecycle-controller: marks Nodes whose agent stopped heartbeating Unknown (Kubernetes' node
// lifecycle controller in kube-controller-manager), with leader election, as the launcher starts it.
import { nodesResource } from "@orch/client";
import { runControllerApp, leaseResource } from "@orch/controller";
import { type LeaseObject, type NodeObject, nodeLifecycle } from "./lifecycle.js";
import { lifecycleConfig } from "./config.js";

export const working = runControllerApp({
  name: "node-lifecycle-controller",
  setup: (app) => {
    const config = lifecycleConfig(process.env);
    app.log.info(`node monitor grace period ${config.gracePeriodMs} ms, period ${config.monitorPeriodMs} ms`);
    const nodes = app.informer<NodeObject>(nodesResource);
    const leases = app.informer<LeaseObject>(leaseResource(app.profile.apiDomain), { namespace: app.profile.nodeLeaseNamespace });
    app.runController({
      name: "node-lifecycle",
      // A Lease is named as its node.
      sources: [nodes, { informer: leases, toKeys: (lease) => [lease.metadata?.name ?? ""] }],
      workers: 4,
      reconciler: nodeLifecycle({
        client: app.client,
        nodes,
        leases,
        profile: app.profile,
        recorder: app.eventRecorder("node-controller"),
        ...config,
      }),
    });
  },
}).then((app) => app.working);
