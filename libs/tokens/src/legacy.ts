// Legacy service account tokens: the long-lived tokens Kubernetes' token controller writes into
// Secrets of type `kubernetes.io/service-account-token` (pkg/serviceaccount/legacy.go). They never
// expire and name no audience; they authenticate only while their Secret holds exactly them and their
// service account exists with the uid they name.
import { makeUsername } from "./claims.js";
import type { ObjectLookup, ServiceAccountInfo } from "./validate.js";

/** Kubernetes' LegacyIssuer: part of the token format, the same in every naming profile. */
export const LEGACY_ISSUER = "kubernetes/serviceaccount";

const CLAIM = {
  serviceAccountName: "kubernetes.io/serviceaccount/service-account.name",
  serviceAccountUid: "kubernetes.io/serviceaccount/service-account.uid",
  secretName: "kubernetes.io/serviceaccount/secret.name",
  namespace: "kubernetes.io/serviceaccount/namespace",
} as const;

export type LegacyClaims = { iss: string; sub: string } & { [K in (typeof CLAIM)[keyof typeof CLAIM]]: string };

/** LegacyClaims: the subject and the four private claims, in the order Go marshals them. */
export function legacyClaims(
  serviceAccount: { metadata: { name?: string; namespace?: string; uid?: string } },
  secretName: string,
): LegacyClaims {
  const namespace = serviceAccount.metadata.namespace ?? "";
  const name = serviceAccount.metadata.name ?? "";
  return {
    iss: LEGACY_ISSUER,
    [CLAIM.namespace]: namespace,
    [CLAIM.secretName]: secretName,
    [CLAIM.serviceAccountName]: name,
    [CLAIM.serviceAccountUid]: serviceAccount.metadata.uid ?? "",
    sub: makeUsername(namespace, name),
  } as LegacyClaims;
}

/** What a legacy check reads of a Secret beyond its metadata: the stored token and its labels. */
interface TokenSecret {
  metadata: { uid?: string; deletionTimestamp?: string | null; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/**
 * The legacy validator's checks, in its order: the claims present and consistent, the Secret there
 * and holding this very token, not marked invalid by the legacy-token cleaner, the account there with
 * the uid the token names.
 */
export async function validateLegacyClaims(
  token: string,
  claims: Record<string, unknown>,
  lookup: ObjectLookup,
  invalidSinceLabel: string,
): Promise<ServiceAccountInfo | { error: string }> {
  const text = (key: string) => (typeof claims[key] === "string" ? (claims[key] as string) : "");
  const sub = text("sub");
  const namespace = text(CLAIM.namespace);
  const secretName = text(CLAIM.secretName);
  const name = text(CLAIM.serviceAccountName);
  const uid = text(CLAIM.serviceAccountUid);
  if (!sub) return { error: "sub claim is missing" };
  if (!namespace) return { error: "namespace claim is missing" };
  if (!secretName) return { error: "secretName claim is missing" };
  if (!name) return { error: "serviceAccountName claim is missing" };
  if (!uid) return { error: "serviceAccountUID claim is missing" };
  if (sub !== makeUsername(namespace, name)) return { error: "sub claim is invalid" };

  const secret = (await lookup.get("secrets", namespace, secretName)) as TokenSecret | undefined;
  if (!secret || secret.metadata.deletionTimestamp) return { error: "token has been invalidated" };
  const stored = secret.data?.token === undefined ? undefined : Buffer.from(secret.data.token, "base64").toString("utf8");
  if (stored !== token) return { error: "token does not match server's copy" };
  if (secret.metadata.labels?.[invalidSinceLabel] !== undefined) {
    return {
      error:
        `the token in secret ${namespace}/${secretName} for service account ${namespace}/${name} has been marked invalid. ` +
        "Use tokens from the TokenRequest API or manually created secret-based tokens, " +
        `or remove the '${invalidSinceLabel}' label from the secret to temporarily allow use of this token`,
    };
  }

  const account = await lookup.get("serviceaccounts", namespace, name);
  if (!account) return { error: `serviceaccounts "${name}" not found` };
  if (account.metadata.deletionTimestamp) return { error: `service account ${namespace}/${name} has been deleted` };
  if (account.metadata.uid !== uid) return { error: `service account UID (${account.metadata.uid ?? ""}) does not match claim (${uid})` };
  return { namespace, name, uid };
}
