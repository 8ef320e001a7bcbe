// apps/v1 kinds.
import { Deployment, type ObjectHeader, ReplicaSet, defaultDeployment, defaultReplicaSet } from "@orch/api";
import { type KindDefinition, specFields } from "../kind.js";
import { AGE, at, column, containerImages, containerNames, defineKind, readyOf, replicaColumns, statusSubresource } from "./define.js";

const defaults = (fn: (o: never) => void) => fn as unknown as (o: ObjectHeader) => void;

function formatSelector(selector: unknown): string {
  const s = selector as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined;
  const parts = Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s?.matchExpressions ?? []) {
    const op = e.operator.toLowerCase();
    if (op === "exists") parts.push(e.key);
    else if (op === "doesnotexist") parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${op} (${(e.values ?? []).join(",")})`);
  }
  return parts.length ? parts.join(",") : "<none>";
}

const deploymentStatus = statusSubresource();

export const deployments = (): KindDefinition =>
  defineKind({
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    shortNames: ["deploy"],
    categories: ["all"],
    namespaced: true,
    schema: Deployment,
    defaults: defaults(defaultDeployment),
    strategy: deploymentStatus.strategy,
    subresources: { status: deploymentStatus.status },
    // Annotations are copied to the replica sets, so their changes are a new generation too.
    generationSource: (o) => ({ ...specFields(o), annotations: o.metadata.annotations }),
    printerColumns: [
      column("Ready", "string", readyOf),
      column("Up-to-date", "integer", (o) => at(o, "status.updatedReplicas") ?? 0),
      column("Available", "integer", (o) => at(o, "status.availableReplicas") ?? 0),
      AGE,
      column("Containers", "string", containerNames, 1),
      column("Images", "string", containerImages, 1),
      column("Selector", "string", (o) => formatSelector(at(o, "spec.selector")), 1),
    ],
  });

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
    strategy: replicaSetStatus.strategy,
    subresources: { status: replicaSetStatus.status },
    printerColumns: replicaColumns((o) => formatSelector(at(o, "spec.selector"))),
  });
