// The user a service account token authenticates as (Kubernetes' ServiceAccountInfo.UserInfo).
import { ALL_SERVICE_ACCOUNTS, makeUsername, namespaceGroup } from "./claims.js";
import type { ServiceAccountInfo } from "./validate.js";

export interface TokenUser {
  username: string;
  uid: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The `extra` keys; the naming profile decides their domain (Kubernetes': `authentication.kubernetes.io/...`). */
export interface ExtraKeys {
  credentialId: string;
  podName: string;
  podUid: string;
  nodeName: string;
  nodeUid: string;
}

export const extraKeysFor = (domain = "kubernetes.io"): ExtraKeys => ({
  credentialId: `authentication.${domain}/credential-id`,
  podName: `authentication.${domain}/pod-name`,
  podUid: `authentication.${domain}/pod-uid`,
  nodeName: `authentication.${domain}/node-name`,
  nodeUid: `authentication.${domain}/node-uid`,
});

/** Every authenticated user is in this group too (Kubernetes' AuthenticatedGroupAdder). */
const AUTHENTICATED = "system:authenticated";

export function serviceAccountUser(sa: ServiceAccountInfo, keys: ExtraKeys = extraKeysFor()): TokenUser {
  const extra: Record<string, string[]> = {};
  if (sa.podName && sa.podUid) (extra[keys.podName] = [sa.podName]), (extra[keys.podUid] = [sa.podUid]);
  if (sa.credentialId) extra[keys.credentialId] = [sa.credentialId];
  if (sa.nodeName) {
    extra[keys.nodeName] = [sa.nodeName];
    if (sa.nodeUid) extra[keys.nodeUid] = [sa.nodeUid];
  }
  const user: TokenUser = {
    username: makeUsername(sa.namespace, sa.name),
    uid: sa.uid,
    groups: [ALL_SERVICE_ACCOUNTS, namespaceGroup(sa.namespace), AUTHENTICATED],
  };
  // Sorted, as Go marshals a map.
  const keysInOrder = Object.keys(extra).sort();
  if (keysInOrder.length > 0) user.extra = Object.fromEntries(keysInOrder.map((k) => [k, extra[k]!]));
  return user;
}
