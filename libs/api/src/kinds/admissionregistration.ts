// admissionregistration.{api_domain}/v1 kinds: ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration. Mirrors k8s.io/api/admissionregistration/v1/types.go; defaults from
// pkg/apis/admissionregistration/v1/defaults.go (scope "*", failurePolicy Fail, matchPolicy
// Equivalent, empty selectors, timeoutSeconds 10, reinvocationPolicy Never, service port 443).
import * as v from "valibot";
import { Condition, LabelSelector, objectOf } from "../meta.js";
import { atomicList, bytes, int32, int64, mapList, opt, setList, str } from "../schema.js";
import { listOf } from "./meta-list.js";

export const RuleWithOperations = v.object({
  operations: opt(atomicList(str())),
  apiGroups: opt(atomicList(str())),
  apiVersions: opt(atomicList(str())),
  resources: opt(atomicList(str())),
  scope: opt(str(), "*"),
});
export type RuleWithOperations = v.InferOutput<typeof RuleWithOperations>;

export const AdmissionWebhookServiceReference = v.object({
  namespace: opt(str()),
  name: opt(str()),
  path: opt(str()),
  port: opt(int32(), 443),
});

export const AdmissionWebhookClientConfig = v.object({
  url: opt(str()),
  service: opt(AdmissionWebhookServiceReference),
  /** PEM certificates, base64 in JSON: what the webhook's serving certificate must chain to. */
  caBundle: opt(bytes()),
});
export type AdmissionWebhookClientConfig = v.InferOutput<typeof AdmissionWebhookClientConfig>;

export const MatchCondition = v.object({ name: opt(str()), expression: opt(str()) });

const webhookFields = {
  name: opt(str()),
  clientConfig: opt(AdmissionWebhookClientConfig, {}),
  rules: opt(atomicList(RuleWithOperations)),
  failurePolicy: opt(str(), "Fail"),
  matchPolicy: opt(str(), "Equivalent"),
  namespaceSelector: opt(LabelSelector, {}),
  objectSelector: opt(LabelSelector, {}),
  // Required in v1: validation says so rather than the decoder.
  sideEffects: opt(str()),
  timeoutSeconds: opt(int32(), 10),
  admissionReviewVersions: opt(atomicList(str())),
  matchConditions: opt(mapList(MatchCondition, ["name"])),
};

export const ValidatingWebhook = v.object(webhookFields);
export type ValidatingWebhook = v.InferOutput<typeof ValidatingWebhook>;
export const MutatingWebhook = v.object({ ...webhookFields, reinvocationPolicy: opt(str(), "Never") });
export type MutatingWebhook = v.InferOutput<typeof MutatingWebhook>;

export const ValidatingWebhookConfiguration = objectOf({ webhooks: opt(mapList(ValidatingWebhook, ["name"])) });
export type ValidatingWebhookConfiguration = v.InferOutput<typeof ValidatingWebhookConfiguration>;
export const ValidatingWebhookConfigurationList = listOf(ValidatingWebhookConfiguration);
export const MutatingWebhookConfiguration = objectOf({ webhooks: opt(mapList(MutatingWebhook, ["name"])) });
export type MutatingWebhookConfiguration = v.InferOutput<typeof MutatingWebhookConfiguration>;
export const MutatingWebhookConfigurationList = listOf(MutatingWebhookConfiguration);

// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (v1 since Kubernetes 1.30): CEL
// validations run in the apiserver. Defaults from pkg/apis/admissionregistration/v1/defaults.go:
// failurePolicy Fail; a MatchResources' matchPolicy Equivalent and empty selectors; rule scope "*".

export const NamedRuleWithOperations = v.object({ resourceNames: opt(atomicList(str())), ...RuleWithOperations.entries });
export type NamedRuleWithOperations = v.InferOutput<typeof NamedRuleWithOperations>;

export const MatchResources = v.object({
  namespaceSelector: opt(LabelSelector, {}),
  objectSelector: opt(LabelSelector, {}),
  resourceRules: opt(atomicList(NamedRuleWithOperations)),
  excludeResourceRules: opt(atomicList(NamedRuleWithOperations)),
  matchPolicy: opt(str(), "Equivalent"),
});
export type MatchResources = v.InferOutput<typeof MatchResources>;

export const ParamKind = v.object({ apiVersion: opt(str()), kind: opt(str()) });
export const Validation = v.object({ expression: opt(str()), message: opt(str()), reason: opt(str()), messageExpression: opt(str()) });
export type Validation = v.InferOutput<typeof Validation>;
export const AuditAnnotation = v.object({ key: opt(str()), valueExpression: opt(str()) });
export const Variable = v.object({ name: opt(str()), expression: opt(str()) });

export const ValidatingAdmissionPolicySpec = v.object({
  paramKind: opt(ParamKind),
  matchConstraints: opt(MatchResources),
  validations: opt(atomicList(Validation)),
  failurePolicy: opt(str(), "Fail"),
  auditAnnotations: opt(atomicList(AuditAnnotation)),
  matchConditions: opt(mapList(MatchCondition, ["name"])),
  variables: opt(atomicList(Variable)),
});
export type ValidatingAdmissionPolicySpec = v.InferOutput<typeof ValidatingAdmissionPolicySpec>;

export const ExpressionWarning = v.object({ fieldRef: opt(str()), warning: opt(str()) });
export const ValidatingAdmissionPolicyStatus = v.object({
  observedGeneration: opt(int64()),
  typeChecking: opt(v.object({ expressionWarnings: opt(atomicList(ExpressionWarning)) })),
  conditions: opt(mapList(Condition, ["type"])),
});

export const ValidatingAdmissionPolicy = objectOf({
  spec: opt(ValidatingAdmissionPolicySpec, {}),
  status: opt(ValidatingAdmissionPolicyStatus),
});
export type ValidatingAdmissionPolicy = v.InferOutput<typeof ValidatingAdmissionPolicy>;
export const ValidatingAdmissionPolicyList = listOf(ValidatingAdmissionPolicy);

export const ParamRef = v.object({
  name: opt(str()),
  namespace: opt(str()),
  selector: opt(LabelSelector),
  parameterNotFoundAction: opt(str()),
});
export type ParamRef = v.InferOutput<typeof ParamRef>;

export const ValidatingAdmissionPolicyBinding = objectOf({
  spec: opt(
    v.object({
      policyName: opt(str()),
      paramRef: opt(ParamRef),
      matchResources: opt(MatchResources),
      validationActions: opt(setList(str())),
    }),
    {},
  ),
});
export type ValidatingAdmissionPolicyBinding = v.InferOutput<typeof ValidatingAdmissionPolicyBinding>;
export const ValidatingAdmissionPolicyBindingList = listOf(ValidatingAdmissionPolicyBinding);
