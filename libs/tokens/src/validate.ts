// The checks that need the cluster's objects (Kubernetes' claims.go Validate): a token is good only
// while its service account, and the object it is bound to, exist with the uids it names.
import { PRIVATE_CLAIM, type ServiceAccountClaims } from "./claims.js";

/** What the checks read of an object. */
export interface ObjectMeta {
  metadata: { uid?: string; deletionTimestamp?: string | null };
}

/** Reads objects by name; `undefined` when there is none. */
export interface ObjectLookup {
  get(resource: "serviceaccounts" | "pods" | "secrets", namespace: string, name: string): Promise<ObjectMeta | undefined>;
}

/** Who a valid token speaks for (Kubernetes' ServiceAccountInfo). */
export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  podName?: string;
  podUid?: string;
  nodeName?: string;
  nodeUid?: string;
  /** `JTI=<jti>`: which token made a request. */
  credentialId?: string;
}

/** Objects deleted (deletionTimestamp passed) longer ago than go-jose's leeway no longer vouch for a token. */
const LEEWAY_MS = 60_000;

const deletedBefore = (o: ObjectMeta, limit: number) => {
  const ts = o.metadata.deletionTimestamp;
  return ts != null && Date.parse(ts) < limit;
};

export async function validateClaims(
  claims: ServiceAccountClaims,
  lookup: ObjectLookup,
  now: Date,
): Promise<ServiceAccountInfo | { error: string }> {
  const k8s = claims[PRIVATE_CLAIM];
  const namespace = k8s.namespace ?? "";
  const sa = k8s.serviceaccount ?? { name: "", uid: "" };
  const limit = now.getTime() - LEEWAY_MS;

  const account = await lookup.get("serviceaccounts", namespace, sa.name);
  if (!account) return { error: `serviceaccounts "${sa.name}" not found` };
  if (deletedBefore(account, limit)) return { error: `service account ${namespace}/${sa.name} has been deleted` };
  if (account.metadata.uid !== sa.uid) {
    return { error: `service account UID (${account.metadata.uid ?? ""}) does not match claim (${sa.uid})` };
  }

  // Kubernetes does not say which bound object went away: the token simply no longer works.
  const invalidated = { error: "service account token has been invalidated" };
  if (k8s.secret) {
    const secret = await lookup.get("secrets", namespace, k8s.secret.name);
    if (!secret || deletedBefore(secret, limit)) return invalidated;
    if (secret.metadata.uid !== k8s.secret.uid) {
      return { error: `secret UID (${secret.metadata.uid ?? ""}) does not match service account secret ref claim (${k8s.secret.uid})` };
    }
  }
  const info: ServiceAccountInfo = { namespace, name: sa.name, uid: sa.uid };
  if (k8s.pod) {
    const pod = await lookup.get("pods", namespace, k8s.pod.name);
    if (!pod || deletedBefore(pod, limit)) return invalidated;
    if (pod.metadata.uid !== k8s.pod.uid) {
      return { error: `pod UID (${pod.metadata.uid ?? ""}) does not match service account pod ref claim (${k8s.pod.uid})` };
    }
    info.podName = k8s.pod.name;
    info.podUid = k8s.pod.uid;
    // A pod-bound token carries its node for information only: the node is not looked up.
    if (k8s.node?.name) {
      info.nodeName = k8s.node.name;
      if (k8s.node.uid) info.nodeUid = k8s.node.uid;
    }
  }
  if (claims.jti) info.credentialId = `JTI=${claims.jti}`;
  return info;
}
