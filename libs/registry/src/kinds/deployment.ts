// Deployment (apps/v1, spec 2.8).
import { Deployment, defaultDeployment } from "@orch/api";
import { type KindDefinition, specFields } from "../kind.js";
import { AGE, at, column, containerImages, containerNames, defaults, defineKind, formatSelector, readyOf, statusSubresource, replicasScale, selectorString } from "./define.js";

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
    scale: replicasScale((o) => selectorString(at(o, "spec.selector"))),
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
