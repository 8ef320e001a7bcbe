// SelfSubjectReview (authentication.<domain>/v1, spec 2.4): who the server thinks the caller is
// (the impersonated user when impersonating). Answered, never stored; `kubectl auth whoami` asks it.
import { type NamingProfile, SelfSubjectReview } from "@orch/api";
import type { KindDefinition } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";

export const selfSubjectReviews = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("authentication"),
    version: "v1",
    kind: "SelfSubjectReview",
    plural: "selfsubjectreviews",
    namespaced: false,
    schema: SelfSubjectReview,
    verbs: ["create"],
    strategy: {
      // An empty name is fine: nothing is stored under it.
      validateName: () => [],
      answer: (review, ctx) => {
        const { username, uid, groups, extra } = ctx.user;
        return {
          ...review,
          metadata: { ...review.metadata, creationTimestamp: null },
          status: {
            userInfo: { username, ...(uid ? { uid } : {}), groups, ...(extra && Object.keys(extra).length ? { extra } : {}) },
          },
        };
      },
    },
  });
