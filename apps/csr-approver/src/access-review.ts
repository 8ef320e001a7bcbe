// Asks the apiserver whether a CSR's requester may do something: a SubjectAccessReview
// (authorization.<domain>/v1) for the user, groups, uid and extra the apiserver recorded in the spec.
import type { NamingProfile } from "@orch/api";
import type { ApiClient, KubeObject, ResourceRef } from "@orch/client";
import type { Csr } from "./csr.js";

export interface ResourceAttributes {
  group: string;
  resource: string;
  verb: string;
  subresource?: string;
}

interface SubjectAccessReview extends KubeObject {
  spec: { user?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]>; resourceAttributes: ResourceAttributes };
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export const subjectAccessReviews = (profile: NamingProfile): ResourceRef => ({
  group: profile.group("authorization"),
  version: "v1",
  plural: "subjectaccessreviews",
  namespaced: false,
});

/** The review Kubernetes' approver sends for `csr`: empty fields are left out, as Go's omitempty does. */
export function accessReviewFor(profile: NamingProfile, csr: Csr, resourceAttributes: ResourceAttributes): SubjectAccessReview {
  const { username, uid, groups, extra } = csr.spec;
  return {
    apiVersion: `${profile.group("authorization")}/v1`,
    kind: "SubjectAccessReview",
    spec: {
      ...(username ? { user: username } : {}),
      ...(uid ? { uid } : {}),
      ...(groups?.length ? { groups } : {}),
      ...(extra && Object.keys(extra).length ? { extra } : {}),
      resourceAttributes,
    },
  };
}

/** True when the apiserver allows the requester of `csr` the access described. */
export async function requesterMay(
  client: Pick<ApiClient, "create">,
  profile: NamingProfile,
  csr: Csr,
  resourceAttributes: ResourceAttributes,
): Promise<boolean> {
  const review = await client.create<SubjectAccessReview>(subjectAccessReviews(profile), accessReviewFor(profile, csr, resourceAttributes));
  return review.status?.allowed === true;
}
