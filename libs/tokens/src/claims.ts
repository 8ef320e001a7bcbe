// The claims of a service account token, exactly as Kubernetes writes them (pkg/serviceaccount/claims.go),
// so that anything that reads Kubernetes' tokens reads orch's.
import { randomUUID } from "node:crypto";

/**
 * The private claim's name. Kept as `kubernetes.io` in every naming profile: it is part of the token
 * format that client libraries, service meshes and cloud identity federation parse, not an API name.
 */
export const PRIVATE_CLAIM = "kubernetes.io";

export interface ObjectRef {
  name: string;
  uid: string;
}

export interface KubernetesClaim {
  namespace: string;
  serviceaccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  /** The node a bound pod runs on; `uid` only when that Node object exists (never in orch yet). */
  node?: { name: string; uid?: string };
}

export interface ServiceAccountClaims {
  aud: string[];
  exp: number;
  iat: number;
  iss: string;
  /** A fresh id per token; reported as the credential id (`JTI=<jti>`) of requests made with it. */
  jti: string;
  [PRIVATE_CLAIM]: KubernetesClaim;
  nbf: number;
  sub: string;
}

/** The parts of an object a token records: its name and uid. */
export interface Named {
  metadata: { name?: string; namespace?: string; uid?: string };
}

export const USERNAME_PREFIX = "system:serviceaccount:";
export const ALL_SERVICE_ACCOUNTS = "system:serviceaccounts";

export const makeUsername = (namespace: string, name: string): string => `${USERNAME_PREFIX}${namespace}:${name}`;
export const namespaceGroup = (namespace: string): string => `${ALL_SERVICE_ACCOUNTS}:${namespace}`;

const ref = (o: Named): ObjectRef => ({ name: o.metadata.name ?? "", uid: o.metadata.uid ?? "" });

export interface ClaimsInput {
  serviceAccount: Named;
  /** At most one bound object, as Kubernetes allows. */
  pod?: Named & { spec?: { nodeName?: string } };
  secret?: Named;
  issuer: string;
  audiences: readonly string[];
  /** Seconds since the epoch: `iat` and `nbf`. */
  issuedAt: number;
  expirationSeconds: number;
}

/** Kubernetes' Claims(): the registered claims plus `kubernetes.io`. Keys in the order Go marshals them. */
export function serviceAccountClaims(input: ClaimsInput): ServiceAccountClaims {
  const sa = input.serviceAccount;
  const k8s: KubernetesClaim = { namespace: sa.metadata.namespace ?? "", serviceaccount: ref(sa) };
  if (input.pod) {
    k8s.pod = ref(input.pod);
    // ServiceAccountTokenPodNodeInfo: the node's name is recorded even without a Node object.
    const nodeName = input.pod.spec?.nodeName;
    if (nodeName) k8s.node = { name: nodeName };
  } else if (input.secret) {
    k8s.secret = ref(input.secret);
  }
  return {
    aud: [...input.audiences],
    exp: input.issuedAt + input.expirationSeconds,
    iat: input.issuedAt,
    iss: input.issuer,
    jti: randomUUID(),
    [PRIVATE_CLAIM]: sortKeys(k8s),
    nbf: input.issuedAt,
    sub: makeUsername(k8s.namespace, k8s.serviceaccount.name),
  };
}

function sortKeys<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))) as T;
}
