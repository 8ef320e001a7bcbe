// TokenReview (authentication.<domain>/v1, spec 2.3): authenticates a token as a request would be
// (pkg/registry/authentication/tokenreview/storage.go). Answered, never stored.
import { type NamingProfile, TokenReview } from "@orch/api";
import { errors } from "@orch/machinery";
import type { KindDefinition } from "../../generic/kind.js";
import type { TokenService } from "../../generic/services.js";
import { defineKind } from "../../generic/define.js";

export const tokenReviews = (p: NamingProfile, tokens: TokenService): KindDefinition =>
  defineKind({
    group: p.group("authentication"),
    version: "v1",
    kind: "TokenReview",
    plural: "tokenreviews",
    namespaced: false,
    schema: TokenReview,
    verbs: ["create"],
    strategy: {
      // An empty name is fine: nothing is stored under it.
      validateName: () => [],
      answer: async (review) => {
        const spec = review.spec;
        if (!spec.token) throw errors.badRequest("token is required for TokenReview in authentication");
        const status = await tokens.review(spec.token, spec.audiences?.length ? spec.audiences : undefined);
        return { ...review, metadata: { ...review.metadata, creationTimestamp: null }, status };
      },
    },
  });
