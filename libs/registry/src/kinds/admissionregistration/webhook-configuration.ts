// ValidatingWebhookConfiguration and MutatingWebhookConfiguration (admissionregistration.<domain>/v1):
// cluster-scoped declarations of the webhooks the apiserver calls on writes. The calling is the
// apiserver's (apps/apiserver/src/admission); here are only the kinds and their validation.
import { MutatingWebhookConfiguration, type NamingProfile, ValidatingWebhookConfiguration } from "@orch/api";
import type { KindDefinition } from "../../generic/kind.js";
import { AGE, column, defineKind } from "../../generic/define.js";
import { caBundleDecodingError, validateWebhookConfiguration } from "./webhook-validation.js";

export const VALIDATING_WEBHOOK_CONFIGURATIONS = "validatingwebhookconfigurations";
export const MUTATING_WEBHOOK_CONFIGURATIONS = "mutatingwebhookconfigurations";

const webhooksColumn = column("Webhooks", "integer", (o) => ((o.webhooks as unknown[] | undefined) ?? []).length);

export const validatingWebhookConfigurations = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("admissionregistration"),
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    plural: VALIDATING_WEBHOOK_CONFIGURATIONS,
    namespaced: false,
    categories: ["api-extensions"],
    schema: ValidatingWebhookConfiguration,
    strategy: {
      fromVersioned: (o) => caBundleDecodingError(o.webhooks),
      validate: (o) => validateWebhookConfiguration(o.webhooks),
      validateUpdate: (o) => validateWebhookConfiguration(o.webhooks),
      // Metadata only, as Kubernetes: the generation moves with `webhooks`.
      generationSource: (o) => o.webhooks,
    },
    printerColumns: [webhooksColumn, AGE],
  });

export const mutatingWebhookConfigurations = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("admissionregistration"),
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    plural: MUTATING_WEBHOOK_CONFIGURATIONS,
    namespaced: false,
    categories: ["api-extensions"],
    schema: MutatingWebhookConfiguration,
    strategy: {
      fromVersioned: (o) => caBundleDecodingError(o.webhooks),
      validate: (o) => validateWebhookConfiguration(o.webhooks),
      validateUpdate: (o) => validateWebhookConfiguration(o.webhooks),
      generationSource: (o) => o.webhooks,
    },
    printerColumns: [webhooksColumn, AGE],
  });
