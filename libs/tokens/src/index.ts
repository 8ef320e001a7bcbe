export { PRIVATE_CLAIM, ALL_SERVICE_ACCOUNTS, USERNAME_PREFIX, makeUsername, namespaceGroup, serviceAccountClaims } from "./claims.js";
export type { ClaimsInput, KubernetesClaim, Named, ObjectRef, ServiceAccountClaims } from "./claims.js";
export {
  DISCOVERY_CACHE_CONTROL,
  JWKS_CONTENT_TYPE,
  JWKS_PATH,
  OPENID_CONFIGURATION_PATH,
  jwks,
  openIdConfiguration,
} from "./discovery.js";
export type { OpenIdConfiguration, PublicJwk } from "./discovery.js";
export { addSigningKey, ensureKeySet, keyId, loadKeySet } from "./keys.js";
export type { KeySet, SigningAlgorithm, SigningKey, VerifyingKey } from "./keys.js";
export { LEGACY_ISSUER, legacyClaims, validateLegacyClaims } from "./legacy.js";
export type { LegacyClaims } from "./legacy.js";
export { ServiceAccountTokens } from "./tokens.js";
export type { Authenticated, IssueRequest, IssuedToken, ServiceAccountTokensOptions } from "./tokens.js";
export { extraKeysFor, serviceAccountUser } from "./user.js";
export type { ExtraKeys, TokenUser } from "./user.js";
export { validateClaims } from "./validate.js";
export type { ObjectLookup, ObjectMeta, ServiceAccountInfo } from "./validate.js";
export { checkClaims, verifySignature, verifyToken } from "./verify.js";
export type { Signed, VerifyOptions, Verification } from "./verify.js";
