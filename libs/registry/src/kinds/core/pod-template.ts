// PodTemplate (core/v1, spec 2.11). Validation after Kubernetes' ValidatePodTemplate: the template
// as any pod template (any restartPolicy), at `template`.
import { type ObjectHeader, type PodTemplate, PodTemplate as PodTemplateSchema, defaultPodTemplate } from "@orch/api";
import { FieldPath, jsonEqual } from "@orch/machinery";
import { type KindDefinition, type Strategy, specFields } from "../../generic/kind.js";
import { at, column, defaults, defineKind, formatLabels } from "../../generic/define.js";
import { validatePodTemplateSpec } from "./pod-spec-validation.js";
import { podTemplateWarnings } from "./pod-warnings.js";

const templatePath = FieldPath.root("template");
const templateOf = (o: ObjectHeader) => (o as unknown as PodTemplate).template;

const strategy: Strategy = {
  validate: (obj) => validatePodTemplateSpec(templateOf(obj), templatePath),
  validateUpdate: (obj) => validatePodTemplateSpec(templateOf(obj), templatePath),
  warnings: (obj, old) => (old && jsonEqual(specFields(obj), specFields(old)) ? [] : podTemplateWarnings(templateOf(obj), templatePath)),
};

export const podTemplates = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "PodTemplate",
    plural: "podtemplates",
    namespaced: true,
    schema: PodTemplateSchema,
    defaults: defaults(defaultPodTemplate),
    strategy,
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
