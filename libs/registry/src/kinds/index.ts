import type { NamingProfile } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import type { KindServices } from "../services.js";
import { certificateSigningRequests } from "./certificate-signing-request.js";
import { clusterRoleBindings } from "./cluster-role-binding.js";
import { clusterRoles } from "./cluster-role.js";
import { clusterTrustBundles } from "./cluster-trust-bundle.js";
import { customResourceDefinitions } from "./custom-resource-definition.js";
import { deployments } from "./deployment.js";
import { deviceClasses } from "./device-class.js";
import { leases } from "./lease.js";
import { namespaces } from "./namespace.js";
import { podTemplates } from "./pod-template.js";
import { pods } from "./pod.js";
import { priorityClasses } from "./priority-class.js";
import { replicaSets } from "./replica-set.js";
import { replicationControllers } from "./replication-controller.js";
import { roleBindings } from "./role-binding.js";
import { roles } from "./role.js";
import { secrets } from "./secret.js";
import { selfSubjectReviews } from "./self-subject-review.js";
import { serviceAccounts } from "./service-account.js";
import {
  localSubjectAccessReviews,
  selfSubjectAccessReviews,
  selfSubjectRulesReviews,
  subjectAccessReviews,
} from "./subject-access-review.js";
import { tokenReviews } from "./token-review.js";

/**
 * Every kind orch serves out of the box, named for the profile. One file per kind in this folder.
 * The token endpoints (`serviceaccounts/token`, `tokenreviews`) need `services.tokens`.
 */
export function builtinKinds(profile: NamingProfile, services: KindServices = {}): KindDefinition[] {
  return [
    namespaces(),
    secrets(),
    serviceAccounts(profile, services.tokens),
    pods(),
    podTemplates(),
    replicationControllers(),
    deployments(),
    replicaSets(),
    certificateSigningRequests(profile),
    clusterTrustBundles(profile),
    deviceClasses(profile),
    priorityClasses(profile),
    customResourceDefinitions(profile),
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
  ];
}
