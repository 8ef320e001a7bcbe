// OpenID Connect discovery of the service account issuer, served as Kubernetes serves it
// (ServiceAccountIssuerDiscovery): `/.well-known/openid-configuration` and `/openid/v1/jwks`.
import { DISCOVERY_CACHE_CONTROL, JWKS_CONTENT_TYPE, JWKS_PATH, OPENID_CONFIGURATION_PATH, type ServiceAccountTokens } from "@orch/tokens";
import type { Logger } from "@orch/log";

export { JWKS_PATH };

/**
 * The two documents, by path. None for an issuer that is not an https URL: Kubernetes does not
 * serve discovery then either, since no relying party could fetch it from `<iss>/.well-known/...`.
 */
export function oidcDiscoveryRoutes(tokens: ServiceAccountTokens, jwksUri: string, log: Logger): [string, () => Response][] {
  if (!tokens.issuer.startsWith("https://")) {
    log.warn(`service account issuer ${tokens.issuer} is not an https URL: OIDC discovery is not served`);
    return [];
  }
  // Both are fixed for the life of the process (keys are read at start): render them once.
  const configuration = JSON.stringify(tokens.openIdConfiguration(jwksUri));
  const keySet = JSON.stringify(tokens.jwks());
  const document = (body: string, type: string) => () =>
    new Response(body, { headers: { "Content-Type": type, "Cache-Control": DISCOVERY_CACHE_CONTROL } });
  return [
    [OPENID_CONFIGURATION_PATH, document(configuration, "application/json")],
    [JWKS_PATH, document(keySet, JWKS_CONTENT_TYPE)],
  ];
}
