// Kubernetes' root-ca-cert-publisher (kube-controller-manager): every namespace has a ConfigMap
// `kube-root-ca.crt` (`orch-root-ca.crt` under orch's names) holding the cluster CA, which every pod's
// projected API-access volume mounts as `ca.crt` to verify the apiserver. Changed data is put back.
import type { NamingProfile, ObjectHeader } from "@orch/api";
import type { ResourceStore } from "@orch/registry";
import type { NamespaceObject } from "./in-every-namespace.js";

export const rootCaConfigMapName = (profile: NamingProfile) => `${profile.systemPrefix}-root-ca.crt`;

export function rootCaConfigMap(configMaps: ResourceStore, profile: NamingProfile, caPem: string): NamespaceObject {
  const name = rootCaConfigMapName(profile);
  const descriptionKey = `${profile.wellKnownDomain}/description`;
  const description =
    `Contains a CA bundle that can be used to verify the ${profile.systemPrefix}-apiserver when using internal endpoints ` +
    "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";
  const data = { "ca.crt": caPem };
  return {
    name: "root-ca-cert-publisher",
    store: configMaps,
    resource: "core/configmaps",
    objectName: name,
    desired: (namespace) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace, annotations: { [descriptionKey]: description } },
      data,
    }),
    repair(current: ObjectHeader & { data?: Record<string, string> }) {
      const annotations = current.metadata.annotations ?? {};
      const same = Object.keys(current.data ?? {}).length === 1 && current.data?.["ca.crt"] === caPem;
      if (same && annotations[descriptionKey]) return undefined;
      return { ...current, data, metadata: { ...current.metadata, annotations: { [descriptionKey]: description, ...annotations } } };
    },
  };
}
