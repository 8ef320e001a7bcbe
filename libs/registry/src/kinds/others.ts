// Cluster-scoped kinds of the resource, scheduling and apiextensions groups.
import { type NamingProfile, type ObjectHeader, DeviceClass, PriorityClass, crdSchemaFor, defaultCustomResourceDefinition } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { AGE, at, column, defineKind, statusSubresource } from "./define.js";

export const deviceClasses = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("resource"),
    version: "v1",
    kind: "DeviceClass",
    plural: "deviceclasses",
    namespaced: false,
    schema: DeviceClass,
    deleteReturnsObject: true,
  });

export const priorityClasses = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("scheduling"),
    version: "v1",
    kind: "PriorityClass",
    plural: "priorityclasses",
    shortNames: ["pc"],
    namespaced: false,
    schema: PriorityClass,
    printerColumns: [
      column("Value", "integer", (o) => o.value),
      column("Global-Default", "boolean", (o) => o.globalDefault ?? false),
      AGE,
      column("PreemptionPolicy", "string", (o) => o.preemptionPolicy),
    ],
  });

const crdStatus = statusSubresource();

export const customResourceDefinitions = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("apiextensions"),
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    shortNames: ["crd", "crds"],
    namespaced: false,
    schema: crdSchemaFor(p.extensionPrefix).CustomResourceDefinition,
    defaults: defaultCustomResourceDefinition as unknown as (o: ObjectHeader) => void,
    strategy: crdStatus.strategy,
    subresources: { status: crdStatus.status },
    printerColumns: [column("Created At", "date", (o) => at(o, "metadata.creationTimestamp"))],
  });

