import type { NamingProfile } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { deployments, replicaSets } from "./apps.js";
import { certificateSigningRequests, clusterTrustBundles } from "./certificates.js";
import { namespaces, podTemplates, pods, replicationControllers, secrets, serviceAccounts } from "./core.js";
import { customResourceDefinitions, deviceClasses, priorityClasses } from "./others.js";

/** Every kind orch serves out of the box, named for the profile. */
export function builtinKinds(profile: NamingProfile): KindDefinition[] {
  return [
    namespaces(),
    secrets(),
    serviceAccounts(),
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
  ];
}
