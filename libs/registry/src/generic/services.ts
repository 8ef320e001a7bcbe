// What some kinds need from the server beyond storage, injected so that this library stays free of
// the apiserver: issuing and reviewing tokens (TokenRequest, TokenReview).
import type { ObjectHeader } from "@orch/api";
import type { ServiceAllocators } from "../kinds/core/service-allocator.js";
import type { UserInfo } from "./authorizer.js";

export interface IssueTokenRequest {
  serviceAccount: ObjectHeader;
  /** The object the token is bound to, if any: at most one. */
  pod?: ObjectHeader;
  secret?: ObjectHeader;
  audiences: readonly string[];
  expirationSeconds: number;
  /** `iat`; `exp` is this (in whole seconds) plus `expirationSeconds`. */
  issuedAt: Date;
}

/** A TokenReview's status (authentication/v1 TokenReviewStatus). */
export interface TokenReviewStatus {
  authenticated?: boolean;
  /** `{}` when the token did not authenticate. */
  user: Partial<UserInfo>;
  audiences?: string[];
  error?: string;
}

export interface TokenService {
  /** The apiserver's own audiences: a TokenRequest's default. */
  readonly audiences: readonly string[];
  /** The longest lifetime a TokenRequest gets; 0 for no limit but Kubernetes' 2^32 s. */
  readonly maxExpirationSeconds: number;
  /** Signs a service account token; resolves to the token and its `exp`. */
  issue(request: IssueTokenRequest): Promise<{ token: string; expiresAt: Date }>;
  /** Authenticates a bearer token as a request would be, for the given audiences (the apiserver's when absent). */
  review(token: string, audiences: readonly string[] | undefined): Promise<TokenReviewStatus>;
}

export interface KindServices {
  /** Without it, `serviceaccounts/token` and `tokenreviews` are not served. */
  tokens?: TokenService;
  /** Cluster IPs and node ports of Services, kept current with the stored Services by the apiserver. */
  serviceAllocators?: ServiceAllocators;
}
