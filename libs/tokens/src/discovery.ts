// OpenID Connect discovery for the service account issuer (Kubernetes' openidmetadata.go), so other
// systems can verify orch's tokens: the configuration document and the JSON Web Key Set.
import type { VerifyingKey } from "./keys.js";

export const OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration";
export const JWKS_PATH = "/openid/v1/jwks";
/** Kubernetes serves the key set with this type and lets both documents be cached for an hour. */
export const JWKS_CONTENT_TYPE = "application/jwk-set+json";
export const DISCOVERY_CACHE_CONTROL = "public, max-age=3600";

export interface OpenIdConfiguration {
  issuer: string;
  jwks_uri: string;
  response_types_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
}

export function openIdConfiguration(issuer: string, jwksUri: string, keys: readonly VerifyingKey[]): OpenIdConfiguration {
  return {
    issuer,
    jwks_uri: jwksUri,
    // Required by OIDC; a service account token is an id_token for a public subject.
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
  };
}

export interface PublicJwk {
  use: "sig";
  kty: string;
  kid: string;
  crv?: string;
  alg: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

/** Every verifying key, fields in go-jose's order. */
export function jwks(keys: readonly VerifyingKey[]): { keys: PublicJwk[] } {
  return {
    keys: keys.map((k) => {
      const { kty, crv, x, y, n, e } = k.publicKey.export({ format: "jwk" });
      return kty === "RSA"
        ? { use: "sig", kty, kid: k.kid, alg: k.alg, n: n!, e: e! }
        : { use: "sig", kty: kty!, kid: k.kid, crv: crv!, alg: k.alg, x: x!, y: y! };
    }),
  };
}
