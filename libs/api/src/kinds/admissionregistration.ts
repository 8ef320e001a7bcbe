// admissionregistration.{api_domain}/v1 kinds: ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration. Mirrors k8s.io/api/admissionregistration/v1/types.go; defaults from
// pkg/apis/admissionregistration/v1/defaults.go (scope "*", failurePolicy Fail, matchPolicy
// Equivalent, empty selectors, timeoutSeconds 10, reinvocationPolicy Never, service port 443).
import * as v from "valibot";
import { LabelSelector, objectOf } from "../meta.js";
import { atomicList, bytes, int32, mapList, opt, str } from "../schema.js";
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
