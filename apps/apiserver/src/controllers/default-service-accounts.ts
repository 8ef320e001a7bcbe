// Kubernetes' serviceaccounts-controller (kube-controller-manager): every namespace that is not being
// deleted has a ServiceAccount named `default` — created with the namespace, and again if it is deleted —
// so that `kubectl create token default` and pods without a serviceAccountName work in any namespace.
import type { ResourceStore } from "@orch/registry";
import type { NamespaceObject } from "./in-every-namespace.js";

export const defaultServiceAccount = (serviceAccounts: ResourceStore): NamespaceObject => ({
  name: "default-service-accounts",
  store: serviceAccounts,
  resource: "core/serviceaccounts",
  objectName: "default",
  desired: (namespace) => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace } }),
});
