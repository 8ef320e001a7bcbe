// PodTemplate (core/v1, spec 2.11).
import { PodTemplate, defaultPodTemplate } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { at, column, defaults, defineKind, formatLabels } from "./define.js";

export const podTemplates = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "PodTemplate",
    plural: "podtemplates",
    namespaced: true,
    schema: PodTemplate,
    defaults: defaults(defaultPodTemplate),
    deleteReturnsObject: true,
    printerColumns: [
      column("Containers", "string", (o) =>
        ((at(o, "template.spec.containers") as { name?: string }[] | undefined) ?? []).map((c) => c.name).join(","),
      ),
      column("Images", "string", (o) =>
        ((at(o, "template.spec.containers") as { image?: string }[] | undefined) ?? []).map((c) => c.image).join(","),
      ),
      column("Pod Labels", "string", (o) => formatLabels(at(o, "template.metadata.labels"))),
    ],
  });
