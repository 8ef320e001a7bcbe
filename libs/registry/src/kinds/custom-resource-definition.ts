// CustomResourceDefinition (apiextensions.<domain>/v1, spec 2.12).
import { type NamingProfile, crdSchemaFor, defaultCustomResourceDefinition } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { at, column, defaults, defineKind, statusSubresource } from "./define.js";

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
    defaults: defaults(defaultCustomResourceDefinition),
    strategy: crdStatus.strategy,
    subresources: { status: crdStatus.status },
    printerColumns: [column("Created At", "date", (o) => at(o, "metadata.creationTimestamp"))],
  });
