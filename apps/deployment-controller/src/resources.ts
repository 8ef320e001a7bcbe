// The resources the three controllers read and write, and the well-known names they stamp on objects
// (Kubernetes' `deployment.kubernetes.io/*`; `deployment.orch.io/*` in the orch naming profile).
import type { NamingProfile } from "@orch/api";
import type { ResourceRef } from "@orch/client";

export const deploymentsResource: ResourceRef = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
export const replicaSetsResource: ResourceRef = { group: "apps", version: "v1", plural: "replicasets", namespaced: true };
export const replicationControllersResource: ResourceRef = { group: "", version: "v1", plural: "replicationcontrollers", namespaced: true };

/** apps.DefaultDeploymentUniqueLabelKey: not product-named, the same in both profiles. */
export const POD_TEMPLATE_HASH_LABEL = "pod-template-hash";

/** kubectl writes this one under its own name whatever the server's profile. */
const LAST_APPLIED_CONFIGURATION = "kubectl.kubernetes.io/last-applied-configuration";

export interface WellKnownNames {
  /** The rollout sequence number of a replica set (and of its deployment's newest one). */
  revision: string;
  /** Earlier revisions a replica set served (after a rollback to it). */
  revisionHistory: string;
  /** `spec.replicas` of the deployment when it last sized the replica set. */
  desiredReplicas: string;
  /** `spec.replicas + maxSurge` at that time: the base of proportional scaling. */
  maxReplicas: string;
  /** Pods with a lower cost are deleted first on scale-down. */
  podDeletionCost: string;
  /**
   * `deployment.kubernetes.io/revision` when the profile names the revision otherwise: kubectl's
   * `rollout history` and `rollout undo` read that name only, so replica sets carry it as well.
   */
  kubectlRevision: string | undefined;
  /** Deployment annotations never copied to its replica sets. */
  notCopiedToReplicaSets: ReadonlySet<string>;
}

const KUBECTL_REVISION = "deployment.kubernetes.io/revision";

export function wellKnownNames(profile: NamingProfile): WellKnownNames {
  const domain = profile.wellKnownDomain;
  const names = {
    revision: `deployment.${domain}/revision`,
    revisionHistory: `deployment.${domain}/revision-history`,
    desiredReplicas: `deployment.${domain}/desired-replicas`,
    maxReplicas: `deployment.${domain}/max-replicas`,
    podDeletionCost: `controller.${domain}/pod-deletion-cost`,
  };
  const kubectlRevision = names.revision === KUBECTL_REVISION ? undefined : KUBECTL_REVISION;
  return {
    ...names,
    kubectlRevision,
    notCopiedToReplicaSets: new Set([
      LAST_APPLIED_CONFIGURATION,
      ...(kubectlRevision ? [kubectlRevision] : []),
      names.revision,
      names.revisionHistory,
      names.desiredReplicas,
      names.maxReplicas,
    ]),
  };
}
