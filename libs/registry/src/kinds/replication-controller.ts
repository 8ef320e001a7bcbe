// ReplicationController (core/v1, spec 2.9).
import { ReplicationController, defaultReplicationController } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { at, defaults, defineKind, formatLabels, replicaColumns, statusSubresource, replicasScale, setSelectorString } from "./define.js";

const rcStatus = statusSubresource();

export const replicationControllers = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ReplicationController",
    plural: "replicationcontrollers",
    shortNames: ["rc"],
    categories: ["all"],
    namespaced: true,
    schema: ReplicationController,
    defaults: defaults(defaultReplicationController),
    scale: replicasScale((o) => setSelectorString(at(o, "spec.selector"))),
    strategy: rcStatus.strategy,
    subresources: { status: rcStatus.status },
    printerColumns: replicaColumns((o) => formatLabels(at(o, "spec.selector"))),
  });
