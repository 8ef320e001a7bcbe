// The two kinds the replica controller manages, as adapters over their fields: a ReplicaSet's selector is
// a metav1.LabelSelector, a ReplicationController's a plain label map.
import type { ReplicaSet, ReplicationController } from "@orch/api";
import { labelSelectorFromObject, labelSelectorFromSet } from "@orch/machinery";
import { replicaSetsResource, replicationControllersResource } from "../resources.js";
import type { ReplicaKind, ReplicaStatus } from "./replica-controller.js";

export const replicaSetKind: ReplicaKind<ReplicaSet> = {
  name: "replicaset",
  component: "replicaset-controller",
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  resource: replicaSetsResource,
  replicas: (rs) => rs.spec.replicas ?? 1,
  minReadySeconds: (rs) => rs.spec.minReadySeconds ?? 0,
  selector: (rs) => labelSelectorFromObject(rs.spec.selector),
  template: (rs) => rs.spec.template,
  status: (rs) => (rs.status ?? {}) as ReplicaStatus,
  setStatus: (rs, status) => {
    rs.status = { ...status, replicas: status.replicas ?? 0 };
  },
};

export const replicationControllerKind: ReplicaKind<ReplicationController> = {
  name: "replicationcontroller",
  component: "replication-controller",
  apiVersion: "v1",
  kind: "ReplicationController",
  resource: replicationControllersResource,
  replicas: (rc) => rc.spec.replicas ?? 1,
  minReadySeconds: (rc) => rc.spec.minReadySeconds ?? 0,
  // An RC without a selector selects nothing here: the apiserver defaults it from the template's labels.
  selector: (rc) =>
    rc.spec.selector && Object.keys(rc.spec.selector).length > 0
      ? labelSelectorFromSet(rc.spec.selector)
      : labelSelectorFromObject(undefined),
  template: (rc) => rc.spec.template,
  status: (rc) => (rc.status ?? {}) as ReplicaStatus,
  setStatus: (rc, { terminatingReplicas: _, ...status }) => {
    rc.status = { ...status, replicas: status.replicas ?? 0 };
  },
};
