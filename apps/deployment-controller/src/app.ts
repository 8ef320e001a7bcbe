// deployment-controller: Deployments → ReplicaSets → Pods, and ReplicationControllers → Pods, in one
// process sharing one cache per resource.
import { podsResource } from "@orch/client";
import type { Deployment, Pod, ReplicaSet, ReplicationController } from "@orch/api";
import { runControllerApp } from "@orch/controller";
import { runDeploymentController } from "./deployment/controller.js";
import { CONTROLLER_UID_INDEX, NAMESPACE_INDEX, controllerUidIndex, namespaceIndex, podControllerUidIndex } from "./indexes.js";
import { replicaSetKind, replicationControllerKind } from "./replicas/kinds.js";
import { runReplicaController } from "./replicas/replica-controller.js";
import { deploymentsResource, replicaSetsResource, replicationControllersResource, wellKnownNames } from "./resources.js";

export const working = runControllerApp({
  name: "deployment-controller",
  setup: (app) => {
    const names = wellKnownNames(app.profile);
    const deployments = app.informer<Deployment>(deploymentsResource);
    const replicaSets = app.informer<ReplicaSet>(replicaSetsResource);
    const replicationControllers = app.informer<ReplicationController>(replicationControllersResource);
    const pods = app.informer<Pod>(podsResource, { withoutManagedFields: true });
    for (const informer of [deployments, replicaSets, replicationControllers, pods]) informer.addIndex(NAMESPACE_INDEX, namespaceIndex);
    replicaSets.addIndex(CONTROLLER_UID_INDEX, controllerUidIndex);
    pods.addIndex(CONTROLLER_UID_INDEX, podControllerUidIndex);

    runDeploymentController({ app, deployments, replicaSets, pods, names, recorder: app.eventRecorder("deployment-controller") });
    const podDeletionCostAnnotation = names.podDeletionCost;
    runReplicaController({ app, kind: replicaSetKind, owners: replicaSets, pods, podDeletionCostAnnotation });
    runReplicaController({ app, kind: replicationControllerKind, owners: replicationControllers, pods, podDeletionCostAnnotation });
  },
}).then((app) => app.working);
