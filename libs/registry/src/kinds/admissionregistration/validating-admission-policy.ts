// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration.<domain>/v1):
// CEL validations the apiserver runs itself on writes (apps/apiserver/src/admission/policy-admission.ts).
// Here are the kinds: Kubernetes' validation (policy-validation.ts), the policy's status subresource
// (type-checking warnings), and the columns kubectl prints.
import { type NamingProfile, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "@orch/api";
import { AGE, column, defineKind, statusSubresource } from "../../generic/define.js";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { validateBinding, validatePolicy, validatePolicyStatus } from "./policy-validation.js";

export const VALIDATING_ADMISSION_POLICIES = "validatingadmissionpolicies";
export const VALIDATING_ADMISSION_POLICY_BINDINGS = "validatingadmissionpolicybindings";

const policyStatus = statusSubresource<ValidatingAdmissionPolicy>({
  validate: (o) => validatePolicy(o),
  validateUpdate: (o, old) => validatePolicy(o, old),
  generationSource: (o) => o.spec,
});

export const validatingAdmissionPolicies = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("admissionregistration"),
    version: "v1",
    kind: "ValidatingAdmissionPolicy",
    plural: VALIDATING_ADMISSION_POLICIES,
    namespaced: false,
    categories: ["api-extensions"],
    schema: ValidatingAdmissionPolicy,
    strategy: policyStatus.strategy,
    subresources: { status: { ...policyStatus.status, validateUpdate: (o) => validatePolicyStatus(o) } },
    printerColumns: [
      column("Validations", "integer", (o) => ((o.spec as { validations?: unknown[] } | undefined)?.validations ?? []).length),
      column("ParamKind", "string", (o) => {
        const kind = (o as ValidatingAdmissionPolicy).spec?.paramKind;
        return kind ? `${kind.apiVersion ?? ""}/${kind.kind ?? ""}` : "<unset>";
      }),
      AGE,
    ],
  });

/** A LabelSelector as Go's generated String() prints it (kubectl's ParamRef column shows a selector so). */
function goLabelSelectorString(
  selector: NonNullable<NonNullable<ValidatingAdmissionPolicyBinding["spec"]["paramRef"]>["selector"]>,
): string {
  const labels = Object.keys(selector.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${selector.matchLabels![k]},`)
    .join("");
  const expressions = (selector.matchExpressions ?? [])
    .map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(" ")}],},`)
    .join("");
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${expressions}},}`;
}

function paramRefColumn(o: ValidatingAdmissionPolicyBinding): string {
  const ref = o.spec?.paramRef;
  if (!ref) return "<unset>";
  // Whether the param kind is cluster-scoped is not known here: a name without namespace gets `*/`.
  if (ref.name) return ref.namespace ? `${ref.namespace}/${ref.name}` : `*/${ref.name}`;
  return ref.selector ? goLabelSelectorString(ref.selector) : "<unset>";
}

const bindingStrategy: Strategy<ValidatingAdmissionPolicyBinding> = {
  validate: (o) => validateBinding(o),
  validateUpdate: (o) => validateBinding(o),
  generationSource: (o) => o.spec,
};

export const validatingAdmissionPolicyBindings = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("admissionregistration"),
    version: "v1",
    kind: "ValidatingAdmissionPolicyBinding",
    plural: VALIDATING_ADMISSION_POLICY_BINDINGS,
    namespaced: false,
    categories: ["api-extensions"],
    schema: ValidatingAdmissionPolicyBinding,
    strategy: bindingStrategy,
    printerColumns: [
      column("PolicyName", "string", (o) => (o as ValidatingAdmissionPolicyBinding).spec?.policyName ?? ""),
      column("ParamRef", "string", (o) => paramRefColumn(o as ValidatingAdmissionPolicyBinding)),
      AGE,
    ],
  });
