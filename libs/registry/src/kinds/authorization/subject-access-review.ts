// The access reviews (authorization.<domain>/v1; pkg/registry/authorization/*): SubjectAccessReview
// (may a user do this?), LocalSubjectAccessReview (the same, in one namespace), SelfSubjectAccessReview
// (may I?) and SelfSubjectRulesReview (what may I do in this namespace?). Answered, never stored;
// `kubectl auth can-i [--list]` asks them.
import {
  LocalSubjectAccessReview,
  type NamingProfile,
  type NonResourceAttributes,
  type ObjectHeader,
  type ResourceAttributes,
  SelfSubjectAccessReview,
  SelfSubjectRulesReview,
  SubjectAccessReview,
} from "@orch/api";
import { type FieldError, errors, failure, fieldError } from "@orch/machinery";
import type { AuthorizationAttributes, Authorizer } from "../../generic/authorizer.js";
import type { UserInfo } from "../../generic/authorizer.js";
import type { KindDefinition, RequestContext } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";

type AccessSpec = { resourceAttributes?: ResourceAttributes | null; nonResourceAttributes?: NonResourceAttributes | null };
type SubjectSpec = SubjectAccessReview["spec"];

function authorizerOf(ctx: RequestContext): Authorizer {
  if (!ctx.authorizer) throw failure(500, "InternalError", "Internal error occurred: no authorizer for this request");
  return ctx.authorizer;
}

/** Go's zero ObjectMeta: what a client sends when it sets nothing (`creationTimestamp: null` included). */
function metadataIsEmpty(metadata: ObjectHeader["metadata"], allowNamespace: boolean): boolean {
  return Object.entries(metadata).every(
    ([key, value]) =>
      key === "managedFields" ||
      (allowNamespace && key === "namespace") ||
      value === null ||
      value === undefined ||
      value === "" ||
      value === 0 ||
      (Array.isArray(value) && value.length === 0) ||
      (typeof value === "object" && Object.keys(value).length === 0),
  );
}

/** ValidateSelfSubjectAccessReviewSpec: exactly one of resourceAttributes and nonResourceAttributes. */
function validateAttributes(spec: AccessSpec): FieldError[] {
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    return [
      fieldError.invalid(
        "spec.nonResourceAttributes",
        spec.nonResourceAttributes,
        "cannot be specified in combination with resourceAttributes",
      ),
    ];
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    return [
      fieldError.invalid("spec.resourceAttributes", null, "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
    ];
  }
  return [];
}

/** ValidateSubjectAccessReviewSpec: the attributes, and somebody to ask about. */
function validateSubjectSpec(spec: SubjectSpec): FieldError[] {
  const errs = validateAttributes(spec);
  if (!spec.user && !spec.groups?.length)
    errs.push(fieldError.invalid("spec.user", spec.user ?? "", "at least one of user or group must be specified"));
  return errs;
}

/** ResourceAttributesFrom / NonResourceAttributesFrom; an empty version means every version. */
function attributesFrom(user: UserInfo, spec: AccessSpec): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? "",
      resourceRequest: true,
      namespace: r.namespace ?? "",
      apiGroup: r.group ?? "",
      apiVersion: r.version || "*",
      resource: r.resource ?? "",
      subresource: r.subresource ?? "",
      name: r.name ?? "",
    };
  }
  const n = spec.nonResourceAttributes!;
  return { user, verb: n.verb ?? "", resourceRequest: false, path: n.path ?? "" };
}

const subjectOf = (spec: SubjectSpec): UserInfo => ({
  username: spec.user ?? "",
  ...(spec.uid ? { uid: spec.uid } : {}),
  groups: spec.groups ?? [],
  ...(spec.extra ? { extra: spec.extra } : {}),
});

async function answer(review: ObjectHeader, attributes: AuthorizationAttributes, ctx: RequestContext): Promise<ObjectHeader> {
  const decision = await authorizerOf(ctx).authorize(attributes);
  return {
    ...review,
    metadata: { ...review.metadata, creationTimestamp: null },
    status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
  };
}

const reviewKind = (p: NamingProfile, kind: string, plural: string, namespaced: boolean) => ({
  group: p.group("authorization"),
  version: "v1",
  kind,
  plural,
  namespaced,
  verbs: ["create"] as const,
});

/** An empty name is fine: nothing is stored under it. */
const anyName = (): string[] => [];

export const subjectAccessReviews = (p: NamingProfile): KindDefinition =>
  defineKind({
    ...reviewKind(p, "SubjectAccessReview", "subjectaccessreviews", false),
    schema: SubjectAccessReview,
    strategy: {
      validateName: anyName,
      validate: (review) => {
        const errs = validateSubjectSpec(review.spec);
        if (!metadataIsEmpty(review.metadata, false)) errs.push(fieldError.invalid("metadata", review.metadata, "must be empty"));
        return errs;
      },
      answer: (review, ctx) => answer(review, attributesFrom(subjectOf(review.spec), review.spec), ctx),
    },
  });

export const localSubjectAccessReviews = (p: NamingProfile): KindDefinition =>
  defineKind({
    ...reviewKind(p, "LocalSubjectAccessReview", "localsubjectaccessreviews", true),
    schema: LocalSubjectAccessReview,
    strategy: {
      validateName: anyName,
      validate: (review) => {
        const spec = review.spec;
        const errs = validateSubjectSpec(spec);
        if (!metadataIsEmpty(review.metadata, true)) {
          errs.push(fieldError.invalid("metadata", review.metadata, "must be empty except for namespace"));
        }
        const namespace = review.metadata.namespace ?? "";
        if (spec.resourceAttributes && (spec.resourceAttributes.namespace ?? "") !== namespace) {
          errs.push(
            fieldError.invalid(
              "spec.resourceAttributes.namespace",
              spec.resourceAttributes.namespace ?? "",
              "must match metadata.namespace",
            ),
          );
        }
        if (spec.nonResourceAttributes) {
          errs.push(fieldError.invalid("spec.nonResourceAttributes", spec.nonResourceAttributes, "disallowed on this kind of request"));
        }
        return errs;
      },
      // The store puts the request path's namespace on the review (a different one in the body is a 400).
      answer: (review, ctx) => answer(review, attributesFrom(subjectOf(review.spec), review.spec), ctx),
    },
  });

export const selfSubjectAccessReviews = (p: NamingProfile): KindDefinition =>
  defineKind({
    ...reviewKind(p, "SelfSubjectAccessReview", "selfsubjectaccessreviews", false),
    schema: SelfSubjectAccessReview,
    strategy: {
      validateName: anyName,
      validate: (review) => {
        const errs = validateAttributes(review.spec);
        if (!metadataIsEmpty(review.metadata, false)) errs.push(fieldError.invalid("metadata", review.metadata, "must be empty"));
        return errs;
      },
      answer: (review, ctx) => answer(review, attributesFrom(ctx.user, review.spec), ctx),
    },
  });

export const selfSubjectRulesReviews = (p: NamingProfile): KindDefinition =>
  defineKind({
    ...reviewKind(p, "SelfSubjectRulesReview", "selfsubjectrulesreviews", false),
    schema: SelfSubjectRulesReview,
    strategy: {
      validateName: anyName,
      answer: async (review, ctx) => {
        const namespace = review.spec.namespace;
        if (!namespace) throw errors.badRequest("no namespace on request");
        const { rules, errors: problems } = await authorizerOf(ctx).rulesFor(ctx.user, namespace);
        const resourceRules = rules
          .filter((r) => r.resources?.length)
          .map((r) => ({
            verbs: r.verbs ?? [],
            apiGroups: r.apiGroups ?? [],
            resources: r.resources,
            ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
          }));
        const nonResourceRules = rules
          .filter((r) => r.nonResourceURLs?.length)
          .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs }));
        return {
          ...review,
          metadata: { ...review.metadata, creationTimestamp: null },
          status: {
            resourceRules,
            nonResourceRules,
            incomplete: false,
            ...(problems.length ? { evaluationError: problems.length === 1 ? problems[0] : `[${problems.join(", ")}]` } : {}),
          },
        };
      },
    },
  });
