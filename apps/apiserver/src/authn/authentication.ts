// Who the apiserver believes: the service account token issuer (its keys come from the data
// directory), the authenticator chain shared by requests and TokenReview, and the token service that
// the token kinds (serviceaccounts/token, tokenreviews) are given.
import type { NamingProfile } from "@orch/api";
import type { ClusterReader, TokenService } from "@orch/registry";
import { type KeySet, ServiceAccountTokens, extraKeysFor } from "@orch/tokens";
import { readFileSync } from "node:fs";
import type { RequestHeaderAuthConfig, ServiceAccountConfig } from "../config.js";
import {
  type Authenticator,
  type ChainResult,
  type Credentials,
  audienceAgnostic,
  authenticatorChain,
  clientCertificates,
  requestHeaders,
  staticTokens,
} from "./authenticators.js";

/** The issuer kubeadm (and so most clusters) configure: what in-cluster clients of Kubernetes expect. */
export const KUBERNETES_ISSUER = "https://kubernetes.default.svc.cluster.local";

export interface Authentication {
  tokens: ServiceAccountTokens;
  authenticate(credentials: Credentials): Promise<ChainResult>;
  tokenService: TokenService;
}

export interface AuthenticationOptions {
  profile: NamingProfile;
  /** The apiserver's URL: the `orch` profile's default issuer. */
  url: string;
  keys: KeySet;
  serviceAccounts: ServiceAccountConfig;
  tokenFile?: string;
  /** A trusted front proxy; request-header authentication is off without it. */
  requestHeader?: RequestHeaderAuthConfig;
  /** Reads the accounts and bound objects a token names. */
  cluster: ClusterReader;
}

export function setUpAuthentication(o: AuthenticationOptions): Authentication {
  const issuer = o.serviceAccounts.issuer ?? (o.profile.name === "kubernetes" ? KUBERNETES_ISSUER : o.url);
  const tokens = new ServiceAccountTokens({
    keys: o.keys,
    issuer,
    audiences: o.serviceAccounts.audiences,
    lookup: { get: (resource, namespace, name) => o.cluster.get("", resource, namespace, name) },
    // authentication.kubernetes.io/pod-name and friends, in the profile's domain.
    extraKeys: extraKeysFor(o.profile.wellKnownDomain),
    legacyInvalidSinceLabel: `${o.profile.wellKnownDomain}/legacy-token-invalid-since`,
  });
  const serviceAccountTokens: Authenticator = ({ token, audiences }) =>
    token === undefined ? undefined : tokens.authenticate(token, audiences);
  // A front proxy's own certificate must not pass as the user it is, so its headers are read first.
  const authenticators: Authenticator[] = [];
  if (o.requestHeader) {
    authenticators.push(
      requestHeaders({ clientCaPem: readFileSync(o.requestHeader.clientCaFile, "utf8"), allowedNames: o.requestHeader.allowedNames }),
    );
  }
  authenticators.push(clientCertificates);
  if (o.tokenFile) authenticators.push(audienceAgnostic(tokens.audiences, staticTokens(o.tokenFile)));
  authenticators.push(serviceAccountTokens);
  const authenticate = authenticatorChain(authenticators);

  const tokenService: TokenService = {
    audiences: tokens.audiences,
    maxExpirationSeconds: o.serviceAccounts.maxExpirationSeconds,
    issue: async (request) => {
      const { token, expiresAt } = await tokens.issue(request);
      return { token, expiresAt };
    },
    async review(token, audiences) {
      const result = await authenticate({ token, audiences });
      if (!("user" in result)) return { user: {}, ...(result.error ? { error: result.error } : {}) };
      const { username, uid, groups, extra } = result.user;
      return {
        authenticated: true,
        user: { username, ...(uid ? { uid } : {}), groups, ...(extra && Object.keys(extra).length ? { extra } : {}) },
        // Asked for no audiences, the answer names none: empty means "valid for the apiserver" (spec 2.3).
        ...(audiences && result.audiences?.length ? { audiences: result.audiences } : {}),
      };
    },
  };
  return { tokens, authenticate, tokenService };
}
