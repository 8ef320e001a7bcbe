// ReplicaSet (apps/v1).
import { ReplicaSet, defaultReplicaSet } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { at, defaults, defineKind, formatSelector, replicaColumns, statusSubresource, replicasScale, selectorString } from "./define.js";

const replicaSetStatus = statusSubresource();

export const replicaSets = (): KindDefinition =>
  defineKind({
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    shortNames: ["rs"],
    categories: ["all"],
    namespaced: true,
    schema: ReplicaSet,
    defaults: defaults(defaultReplicaSet),
    scale: replicasScale((o) => selectorString(at(o, "spec.selector"))),
    strategy: replicaSetStatus.strategy,
    subresources: { status: replicaSetStatus.status },
    printerColumns: replicaColumns((o) => formatSelector(at(o, "spec.selector"))),
  });
