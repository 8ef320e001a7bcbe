// authentication.{api_domain}/v1 kinds orch serves: TokenRequest (the serviceaccounts/token
// subresource), TokenReview and SelfSubjectReview. Mirrors k8s.io/api/authentication/v1/types.go;
// defaults from pkg/apis/authentication/v1/defaults.go.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, bool, int64, mapOf, opt, str } from "../schema.js";
import { nullableTime } from "./fields.js";

export const UserInfo = v.object({
  username: opt(str()),
  uid: opt(str()),
  groups: opt(atomicList(str())),
  extra: opt(mapOf(atomicList(str()))),
});
export type UserInfo = v.InferOutput<typeof UserInfo>;

export const BoundObjectReference = v.object({
  kind: opt(str()),
  apiVersion: opt(str()),
  name: opt(str()),
  uid: opt(str()),
});

// audiences, expirationSeconds and boundObjectRef have no omitempty: Go clients send null for them.
export const TokenRequestSpec = v.object({
  audiences: opt(v.nullable(atomicList(str()))),
  expirationSeconds: opt(v.nullable(int64()), 3600),
  boundObjectRef: opt(v.nullable(BoundObjectReference)),
  attestations: opt(mapOf(atomicList(str()))),
});

export const TokenRequestStatus = v.object({
  token: opt(str()),
  expirationTimestamp: nullableTime(),
});

export const TokenRequest = objectOf({
  spec: opt(TokenRequestSpec, {}),
  status: opt(TokenRequestStatus, {}),
});
export type TokenRequest = v.InferOutput<typeof TokenRequest>;

/** SetDefaultsTokenRequestSpec: one hour, also when a Go client sent `"expirationSeconds": null`. */
export function defaultTokenRequest(request: TokenRequest): void {
  request.spec.expirationSeconds ??= 3600;
}

// `token` is optional in the Go type (omitempty): a review without one is a 400, not a 422.
export const TokenReviewSpec = v.object({
  token: opt(str()),
  audiences: opt(atomicList(str())),
});

export const TokenReviewStatus = v.object({
  authenticated: opt(bool()),
  user: opt(UserInfo, {}),
  audiences: opt(atomicList(str())),
  error: opt(str()),
});

export const TokenReview = objectOf({
  spec: TokenReviewSpec,
  status: opt(TokenReviewStatus, {}),
});
export type TokenReview = v.InferOutput<typeof TokenReview>;

export const SelfSubjectReviewStatus = v.object({
  userInfo: opt(UserInfo, {}),
});

/** Has no spec: the caller's identity is the question. */
export const SelfSubjectReview = objectOf({
  status: opt(SelfSubjectReviewStatus, {}),
});
export type SelfSubjectReview = v.InferOutput<typeof SelfSubjectReview>;
