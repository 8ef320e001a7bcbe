import { type NamingProfile, namingProfile } from "@orch/api";
import type { KindDefinition } from "../generic/kind.js";
import type { KindServices } from "../generic/services.js";
import { certificateSigningRequests } from "./certificates/certificate-signing-request.js";
import { clusterRoleBindings } from "./rbac/cluster-role-binding.js";
import { clusterRoles } from "./rbac/cluster-role.js";
import { configMaps } from "./core/config-map.js";
import { clusterTrustBundles } from "./certificates/cluster-trust-bundle.js";
import { customResourceDefinitions } from "./apiextensions/custom-resource-definition.js";
import { deployments } from "./apps/deployment.js";
import { deviceClasses } from "./resource/device-class.js";
import { endpointSlices } from "./discovery/endpoint-slice.js";
import { endpoints } from "./core/endpoints.js";
import { events } from "./core/event.js";
import { eventsV1Events } from "./events/event.js";
import { leases } from "./coordination/lease.js";
import { namespaces } from "./core/namespace.js";
import { nodes } from "./core/node.js";
import { bindings } from "./core/pod-binding.js";
import { podTemplates } from "./core/pod-template.js";
import { pods } from "./core/pod.js";
import { priorityClasses } from "./scheduling/priority-class.js";
import { replicaSets } from "./apps/replica-set.js";
import { replicationControllers } from "./core/replication-controller.js";
import { roleBindings } from "./rbac/role-binding.js";
import { roles } from "./rbac/role.js";
import { secrets } from "./core/secret.js";
import { selfSubjectReviews } from "./authentication/self-subject-review.js";
import { serviceAccounts } from "./core/service-account.js";
import { services as serviceKind } from "./core/service.js";
import {
  localSubjectAccessReviews,
  selfSubjectAccessReviews,
  selfSubjectRulesReviews,
  subjectAccessReviews,
} from "./authorization/subject-access-review.js";
import { tokenReviews } from "./authentication/token-review.js";
import { mutatingWebhookConfigurations, validatingWebhookConfigurations } from "./admissionregistration/webhook-configuration.js";
import { validatingAdmissionPolicies, validatingAdmissionPolicyBindings } from "./admissionregistration/validating-admission-policy.js";

/**
 * Every kind orch serves out of the box, named for the profile. One file per kind in this folder.
 * The token endpoints (`serviceaccounts/token`, `tokenreviews`) need `services.tokens`.
 */
export function builtinKinds(profile: NamingProfile, services: KindServices = {}): KindDefinition[] {
  return [
    namespaces(),
    secrets(),
    configMaps(),
    events(),
    eventsV1Events(profile),
    serviceKind(services.serviceAllocators),
    endpoints(),
    endpointSlices(profile),
    serviceAccounts(profile, services.tokens),
    pods(profile),
    nodes(profile),
    bindings(),
    podTemplates(),
    replicationControllers(),
    deployments(),
    replicaSets(),
    certificateSigningRequests(profile),
    clusterTrustBundles(profile),
    deviceClasses(profile),
    priorityClasses(profile),
    customResourceDefinitions(profile),
    validatingWebhookConfigurations(profile),
    mutatingWebhookConfigurations(profile),
    validatingAdmissionPolicies(profile),
    validatingAdmissionPolicyBindings(profile),
    leases(profile),
    selfSubjectReviews(profile),
    roles(profile),
    clusterRoles(profile),
    roleBindings(profile),
    clusterRoleBindings(profile),
    subjectAccessReviews(profile),
    localSubjectAccessReviews(profile),
    selfSubjectAccessReviews(profile),
    selfSubjectRulesReviews(profile),
    ...(services.tokens ? [tokenReviews(profile, services.tokens)] : []),
    ...(profile.name === "orch" ? selfReviewsUnderKubernetesNames() : []),
  ];
}

/**
 * `kubectl auth can-i` and `kubectl auth whoami` post their reviews to authorization.k8s.io and
 * authentication.k8s.io whatever the server's names, and decode the answer only under those names: in
 * the orch profile the self reviews are served there too, unlisted in discovery.
 */
function selfReviewsUnderKubernetesNames(): KindDefinition[] {
  const kubernetes = namingProfile("kubernetes");
  return [selfSubjectReviews(kubernetes), selfSubjectAccessReviews(kubernetes), selfSubjectRulesReviews(kubernetes)].map((kind) => ({
    ...kind,
    unlisted: true,
  }));
}
