// The checks of a service account token that need no objects, in the order of Kubernetes' JWT
// authenticator (pkg/serviceaccount/jwt.go): issuer, signature, audience, then time.
import { compactVerify } from "jose";
import { PRIVATE_CLAIM, type ServiceAccountClaims } from "./claims.js";
import type { VerifyingKey } from "./keys.js";

/** go-jose's DefaultLeeway: clocks may differ by this much before exp/nbf/iat count. */
const LEEWAY_SECONDS = 60;

export interface VerifyOptions {
  keys: readonly VerifyingKey[];
  issuer: string;
  /** The apiserver's own audiences: what a token is checked against when the caller names none. */
  apiAudiences: readonly string[];
  /** The audiences the caller accepts (a TokenReview's `spec.audiences`); the apiserver's when absent or empty. */
  audiences?: readonly string[];
  now: Date;
}

/**
 * `undefined`: not a token of this issuer (another authenticator may know it). `error`: a token of
 * this issuer that is refused, with Kubernetes' message. Otherwise its claims and the audiences it
 * was accepted for (the intersection of the token's and the caller's).
 */
export type Verification = { claims: ServiceAccountClaims; audiences: string[] } | { error: string } | undefined;

function decodePart(part: string | undefined): Record<string, unknown> | undefined {
  if (!part) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Go's %q of a string slice: `["a" "b"]`. */
const goQuoted = (list: readonly string[]) => `[${list.map((s) => JSON.stringify(s)).join(" ")}]`;

const audiencesOf = (aud: unknown): string[] =>
  typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];

export type Signed = { claims: ServiceAccountClaims } | { error: string } | undefined;

/**
 * The issuer and the signature: `undefined` for a token of another issuer (or no JWT at all), an
 * error when no key verifies it, the claims otherwise. Depends on nothing but the token and the keys.
 */
export async function verifySignature(token: string, keys: readonly VerifyingKey[], issuer: string): Promise<Signed> {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  // hasCorrectIssuer: read `iss` before anything costly, so foreign JWTs go to the next authenticator.
  const unverified = decodePart(parts[1]);
  if (unverified?.iss !== issuer) return undefined;
  const header = decodePart(parts[0]);
  if (!header) return undefined;

  // The key named by `kid`; without one (or an unknown one), every key is tried, as Kubernetes does.
  const named = keys.filter((k) => k.kid === header.kid);
  for (const key of named.length > 0 ? named : keys) {
    try {
      const { payload } = await compactVerify(token, key.publicKey, { algorithms: [key.alg] });
      const claims = JSON.parse(Buffer.from(payload).toString("utf8")) as ServiceAccountClaims;
      if (claims.iss !== issuer) return { error: `token issuer ${JSON.stringify(claims.iss)} is invalid` };
      return { claims };
    } catch {
      // try the next key
    }
  }
  // go-jose's message for a signature no key verifies, which Kubernetes passes on.
  return { error: "go-jose/go-jose: error in cryptographic primitive" };
}

/** Audience, then time, then the private claim's presence: what may change from one use to the next. */
export function checkClaims(claims: ServiceAccountClaims, o: Omit<VerifyOptions, "keys" | "issuer">): Verification {
  // A token without audiences (a legacy one) is for the apiserver alone.
  const tokenAudiences = audiencesOf(claims.aud);
  const own = tokenAudiences.length > 0 ? tokenAudiences : [...o.apiAudiences];
  const requested = o.audiences?.length ? o.audiences : o.apiAudiences;
  const audiences = own.filter((a) => requested.includes(a));
  if (audiences.length === 0 && o.apiAudiences.length > 0) {
    return { error: `token audiences ${goQuoted(own)} is invalid for the target audiences ${goQuoted(requested)}` };
  }

  const now = o.now.getTime() / 1000;
  const time = (v: unknown) => (typeof v === "number" ? v : undefined);
  const nbf = time(claims.nbf);
  const exp = time(claims.exp);
  const iat = time(claims.iat);
  if (nbf !== undefined && now + LEEWAY_SECONDS < nbf) return { error: "service account token is not valid yet" };
  if (exp !== undefined && now - LEEWAY_SECONDS > exp) return { error: "service account token has expired" };
  if (iat !== undefined && now + LEEWAY_SECONDS < iat) {
    return { error: "service account token claims could not be validated due to unexpected validation error" };
  }
  if (typeof claims[PRIVATE_CLAIM] !== "object" || claims[PRIVATE_CLAIM] === null) {
    return { error: "service account token claims could not be validated due to unexpected private claim" };
  }
  return { claims, audiences };
}

export async function verifyToken(token: string, o: VerifyOptions): Promise<Verification> {
  const signed = await verifySignature(token, o.keys, o.issuer);
  return signed && "claims" in signed ? checkClaims(signed.claims, o) : signed;
}
