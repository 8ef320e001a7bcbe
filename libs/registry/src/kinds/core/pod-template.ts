// PodTemplate (core/v1, spec 2.11). Validation after Kubernetes' ValidatePodTemplate: the template
// as any pod template (any restartPolicy), at `template`.
import { type PodTemplate, PodTemplate as PodTemplateSchema, defaultPodTemplate } from "@orch/api";
import { FieldPath, jsonEqual } from "@orch/machinery";
import { type KindDefinition, type Strategy, specFields } from "../../generic/kind.js";
import { at, column, defineKind, formatLabels } from "../../generic/define.js";
import { validatePodTemplateSpec } from "./pod-spec-validation.js";
import { podTemplateWarnings } from "./pod-warnings.js";

const templatePath = FieldPath.root("template");

const strategy: Strategy<PodTemplate> = {
  defaults: defaultPodTemplate,
  validate: (obj) => validatePodTemplateSpec(obj.template, templatePath),
  validateUpdate: (obj) => validatePodTemplateSpec(obj.template, templatePath),
  warnings: (obj, old) => (old && jsonEqual(specFields(obj), specFields(old)) ? [] : podTemplateWarnings(obj.template, templatePath)),
};

export const podTemplates = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "PodTemplate",
    plural: "podtemplates",
    namespaced: true,
    schema: PodTemplateSchema,
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
