// Issuing and authenticating service account tokens: one object holding the keys, the issuer and the
// apiserver's audiences, with no HTTP in it. The apiserver reads objects for it through `lookup`.
import { type JWTPayload, SignJWT } from "jose";
import { type Named, type ServiceAccountClaims, serviceAccountClaims } from "./claims.js";
import { LEGACY_ISSUER, legacyClaims, validateLegacyClaims } from "./legacy.js";
import { type OpenIdConfiguration, type PublicJwk, jwks, openIdConfiguration } from "./discovery.js";
import type { KeySet } from "./keys.js";
import { type ExtraKeys, type TokenUser, extraKeysFor, serviceAccountUser } from "./user.js";
import { type ObjectLookup, validateClaims } from "./validate.js";
import { type Signed, checkClaims, verifySignature } from "./verify.js";

/**
 * Tokens whose signature has been verified, so that a client presenting the same token request
 * after request pays for ECDSA once (~130 µs a verification). Only the signature is remembered:
 * audience, time and the objects are checked on every use.
 */
const VERIFIED_CAPACITY = 4096;

export interface ServiceAccountTokensOptions {
  keys: KeySet;
  /** `iss` of every token issued, and the only issuer accepted. */
  issuer: string;
  /** The apiserver's own audiences (Kubernetes' --api-audiences); the issuer alone by default. */
  audiences?: readonly string[];
  lookup: ObjectLookup;
  extraKeys?: ExtraKeys;
  /** The label Kubernetes' legacy-token cleaner sets on Secrets whose token no longer authenticates. */
  legacyInvalidSinceLabel?: string;
  /** The clock, replaceable for tests. */
  now?: () => Date;
}

export interface IssueRequest {
  serviceAccount: Named;
  pod?: Named & { spec?: { nodeName?: string } };
  secret?: Named;
  /** The apiserver's audiences when absent or empty. */
  audiences?: readonly string[];
  expirationSeconds: number;
  /** When the token starts; now by default. `exp` is this (in whole seconds) plus the lifetime. */
  issuedAt?: Date;
}

export interface IssuedToken {
  token: string;
  claims: ServiceAccountClaims;
  /** `exp` as a Date: what TokenRequest reports as `status.expirationTimestamp`. */
  expiresAt: Date;
}

export interface Authenticated {
  user: TokenUser;
  /** The audiences the token was accepted for: the intersection of the token's and the requested ones. */
  audiences: string[];
}

export class ServiceAccountTokens {
  readonly issuer: string;
  readonly audiences: readonly string[];
  private readonly now: () => Date;
  private readonly extraKeys: ExtraKeys;
  private readonly verified = new Map<string, ServiceAccountClaims>();

  constructor(private readonly options: ServiceAccountTokensOptions) {
    this.issuer = options.issuer;
    this.audiences = options.audiences?.length ? [...options.audiences] : [options.issuer];
    this.now = options.now ?? (() => new Date());
    this.extraKeys = options.extraKeys ?? extraKeysFor();
  }

  async issue(request: IssueRequest): Promise<IssuedToken> {
    const { signing } = this.options.keys;
    const claims = serviceAccountClaims({
      serviceAccount: request.serviceAccount,
      pod: request.pod,
      secret: request.secret,
      issuer: this.issuer,
      audiences: request.audiences?.length ? request.audiences : this.audiences,
      issuedAt: Math.floor((request.issuedAt ?? this.now()).getTime() / 1000),
      expirationSeconds: request.expirationSeconds,
    });
    // Kubernetes' header: the algorithm and the key id, no `typ`.
    const token = await new SignJWT(claims as unknown as JWTPayload)
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .sign(signing.privateKey);
    return { token, claims, expiresAt: new Date(claims.exp * 1000) };
  }

  /** A legacy token for a `service-account-token` Secret: no audience, no expiry (Kubernetes' token controller). */
  async issueLegacy(serviceAccount: Named, secretName: string): Promise<string> {
    const { signing } = this.options.keys;
    return new SignJWT(legacyClaims(serviceAccount, secretName) as unknown as JWTPayload)
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .sign(signing.privateKey);
  }

  /**
   * `undefined` when the token is not one of this issuer's; `error` when it is but does not (or no
   * longer) authenticate; otherwise the service account's user and the audiences it was accepted for.
   */
  async authenticate(token: string, audiences?: readonly string[]): Promise<Authenticated | { error: string } | undefined> {
    const signed = (await this.verifySignature(token, this.issuer)) ?? (await this.verifySignature(token, LEGACY_ISSUER));
    if (!signed || "error" in signed) return signed;
    if (signed.claims.iss === LEGACY_ISSUER) return this.authenticateLegacy(token, signed.claims, audiences);
    const now = this.now();
    const verified = checkClaims(signed.claims, { apiAudiences: this.audiences, audiences, now });
    if (!verified || "error" in verified) return verified;
    const info = await validateClaims(verified.claims, this.options.lookup, now);
    if ("error" in info) return info;
    return { user: serviceAccountUser(info, this.extraKeys), audiences: verified.audiences };
  }

  private async authenticateLegacy(
    token: string,
    claims: ServiceAccountClaims,
    audiences: readonly string[] | undefined,
  ): Promise<Authenticated | { error: string }> {
    // No audience of its own: good for the apiserver's, as Kubernetes' implicit audiences.
    const requested = audiences?.length ? audiences : this.audiences;
    const accepted = this.audiences.filter((a) => requested.includes(a));
    if (accepted.length === 0) {
      const quoted = (list: readonly string[]) => `[${list.map((a) => JSON.stringify(a)).join(" ")}]`;
      return { error: `token audiences ${quoted(this.audiences)} is invalid for the target audiences ${quoted(requested)}` };
    }
    const info = await validateLegacyClaims(
      token,
      claims as unknown as Record<string, unknown>,
      this.options.lookup,
      this.options.legacyInvalidSinceLabel ?? "kubernetes.io/legacy-token-invalid-since",
    );
    if ("error" in info) return info;
    return { user: serviceAccountUser(info, this.extraKeys), audiences: accepted };
  }

  private async verifySignature(token: string, issuer: string): Promise<Signed> {
    const known = this.verified.get(token);
    if (known?.iss === issuer) {
      // Most recently used last, so the oldest entry is the first to go.
      this.verified.delete(token);
      this.verified.set(token, known);
      return { claims: known };
    }
    if (known) return undefined;
    const signed = await verifySignature(token, this.options.keys.verifying, issuer);
    if (signed && "claims" in signed) {
      this.verified.set(token, signed.claims);
      if (this.verified.size > VERIFIED_CAPACITY) this.verified.delete(this.verified.keys().next().value!);
    }
    return signed;
  }

  openIdConfiguration(jwksUri: string): OpenIdConfiguration {
    return openIdConfiguration(this.issuer, jwksUri, this.options.keys.verifying);
  }

  jwks(): { keys: PublicJwk[] } {
    return jwks(this.options.keys.verifying);
  }
}
