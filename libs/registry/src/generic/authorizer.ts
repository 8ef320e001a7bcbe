// What the apiserver's authorizer offers the kinds that need it: signer checks in certificate
// admission, escalation prevention in RBAC, and the access reviews. Injected through the request
// context so that this library stays free of the apiserver.
import type { PolicyRule } from "@orch/api";

/** Who a request is from (Kubernetes' user.Info). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Kubernetes' authorizer.Attributes: a resource request, or a non-resource one (`path`). */
export type AuthorizationAttributes = {
  user: UserInfo;
  verb: string;
} & (
  | {
      resourceRequest: true;
      namespace: string;
      apiGroup: string;
      /** `*` when the check is not about one version (admission, reviews without a version). */
      apiVersion?: string;
      resource: string;
      subresource: string;
      name: string;
    }
  | { resourceRequest: false; path: string }
);

export interface Decision {
  allowed: boolean;
  /** Why (the binding that allowed it), or what went wrong looking (a binding's missing role). */
  reason: string;
}

/** What a user may do in a namespace ("" for cluster-wide rules only), with the errors met resolving it. */
export interface RuleSet {
  rules: PolicyRule[];
  errors: string[];
}

export interface Authorizer {
  authorize(attributes: AuthorizationAttributes): Promise<Decision>;
  rulesFor(user: UserInfo, namespace: string): Promise<RuleSet>;
}

/** Attributes of a cluster- or namespace-scoped resource check; the rest default to empty. */
export function resourceAttributes(
  user: UserInfo,
  verb: string,
  target: { apiGroup: string; resource: string; namespace?: string; name?: string; subresource?: string },
): AuthorizationAttributes {
  return {
    user,
    verb,
    resourceRequest: true,
    namespace: target.namespace ?? "",
    apiGroup: target.apiGroup,
    apiVersion: "*",
    resource: target.resource,
    subresource: target.subresource ?? "",
    name: target.name ?? "",
  };
}
