// The naming profile: every group, signer, annotation and schema-extension name comes from here,
// so the same server speaks either orch's neutral names or Kubernetes' own.

export type ProfileName = "orch" | "kubernetes";

export interface NamingProfile {
  name: ProfileName;
  /** `orch.io` or `k8s.io`: suffix of API groups. */
  apiDomain: string;
  /** `orch.io` or `kubernetes.io`: prefix of signer names and well-known annotations/labels. */
  wellKnownDomain: string;
  /** `x-orch` or `x-kubernetes`: prefix of OpenAPI schema extensions. */
  extensionPrefix: "x-orch" | "x-kubernetes";
  /** `orch` or `kube`: prefix of the system namespaces and objects (`kube-system`, `kube-root-ca.crt`). */
  systemPrefix: "orch" | "kube";
  group(prefix: string): string;
  signers: { apiserverClient: string; apiserverClientNodeAgent: string; nodeAgentServing: string; legacyUnknown: string };
  /** How node agents are named in client certificates: their group and the user-name prefix before the node name. */
  nodes: { group: string; userPrefix: string };
  /** The node agent's word in reasons and messages (`kubelet`, or `orchlet` under orch's profile). */
  nodeAgent: "kubelet" | "orchlet";
  /** The namespace of the nodes' heartbeat Leases (`kube-node-lease`, `orch-node-lease`; the apiserver creates it). */
  nodeLeaseNamespace: string;
  annotations: {
    enforceMountableSecrets: string;
    initialEventsEnd: string;
    /** The ServiceAccount a `kubernetes.io/service-account-token` Secret belongs to. */
    serviceAccountName: string;
  };
}

export function namingProfile(name: ProfileName = "orch"): NamingProfile {
  const orch = name === "orch";
  const apiDomain = orch ? "orch.io" : "k8s.io";
  const wellKnownDomain = orch ? "orch.io" : "kubernetes.io";
  return {
    name,
    apiDomain,
    wellKnownDomain,
    extensionPrefix: orch ? "x-orch" : "x-kubernetes",
    systemPrefix: orch ? "orch" : "kube",
    group: (prefix) => `${prefix}.${apiDomain}`,
    signers: orch
      ? {
          apiserverClient: `${wellKnownDomain}/orch-apiserver-client`,
          apiserverClientNodeAgent: `${wellKnownDomain}/orch-apiserver-client-orchlet`,
          nodeAgentServing: `${wellKnownDomain}/orchlet-serving`,
          legacyUnknown: `${wellKnownDomain}/legacy-unknown`,
        }
      : {
          apiserverClient: `${wellKnownDomain}/kube-apiserver-client`,
          apiserverClientNodeAgent: `${wellKnownDomain}/kube-apiserver-client-kubelet`,
          nodeAgentServing: `${wellKnownDomain}/kubelet-serving`,
          legacyUnknown: `${wellKnownDomain}/legacy-unknown`,
        },
    // Not product-named, so the same in both profiles.
    nodes: { group: "system:nodes", userPrefix: "system:node:" },
    nodeAgent: orch ? "orchlet" : "kubelet",
    nodeLeaseNamespace: orch ? "orch-node-lease" : "kube-node-lease",
    annotations: {
      enforceMountableSecrets: `${wellKnownDomain}/enforce-mountable-secrets`,
      initialEventsEnd: `${apiDomain}/initial-events-end`,
      serviceAccountName: `${wellKnownDomain}/service-account.name`,
    },
  };
}

export function profileFromEnv(env: NodeJS.ProcessEnv = process.env): NamingProfile {
  const name = env.ORCH_PROFILE ?? "orch";
  if (name !== "orch" && name !== "kubernetes") {
    throw new Error(`ORCH_PROFILE must be "orch" or "kubernetes", not ${JSON.stringify(name)}`);
  }
  return namingProfile(name);
}
