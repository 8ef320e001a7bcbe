// certificates API group kinds orch serves: CertificateSigningRequest (v1) and ClusterTrustBundle
// (v1beta1). Mirrors k8s.io/api/certificates/{v1,v1beta1}/types.go; neither has defaults.
import * as v from "valibot";
import { objectOf } from "../meta.js";
import { atomicList, bytes, int32, mapOf, opt, str } from "../schema.js";
import { ConditionFields, mapListReplacedOnPatch } from "./fields.js";
import { listOf } from "./meta-list.js";
import type { NamingProfile } from "../profile.js";

export const CertificateSigningRequestSpec = v.object({
  request: bytes(),
  signerName: str(),
  expirationSeconds: opt(int32()),
  usages: opt(atomicList(str())),
  // Filled by the server from the creating user.
  username: opt(str()),
  uid: opt(str()),
  groups: opt(atomicList(str())),
  extra: opt(mapOf(atomicList(str()))),
});

export const CertificateSigningRequestCondition = v.pick(ConditionFields, [
  "type",
  "status",
  "reason",
  "message",
  "lastUpdateTime",
  "lastTransitionTime",
]);

export const CertificateSigningRequestStatus = v.object({
  // A map keyed by type for apply; Kubernetes declares no patch strategy, so a strategic merge
  // patch replaces the list.
  conditions: opt(mapListReplacedOnPatch(CertificateSigningRequestCondition, ["type"])),
  certificate: opt(bytes()),
});

export const CertificateSigningRequest = objectOf({
  spec: CertificateSigningRequestSpec,
  status: opt(CertificateSigningRequestStatus, {}),
});
export type CertificateSigningRequest = v.InferOutput<typeof CertificateSigningRequest>;
export const CertificateSigningRequestList = listOf(CertificateSigningRequest);

/** Where CertificateSigningRequests are served (a client's ResourceRef). */
export const csrResource = (profile: NamingProfile) => ({
  group: profile.group("certificates"),
  version: "v1",
  plural: "certificatesigningrequests",
  namespaced: false,
});

export const clusterTrustBundleResource = (profile: NamingProfile) => ({
  group: profile.group("certificates"),
  version: "v1beta1",
  plural: "clustertrustbundles",
  namespaced: false,
});

/** Whether the request has a condition of `type` with status True (Approved, Denied, Failed). */
export const csrConditionTrue = (csr: CertificateSigningRequest, type: string): boolean =>
  (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");

export const ClusterTrustBundleSpec = v.object({
  signerName: opt(str()),
  trustBundle: str(),
});

export const ClusterTrustBundle = objectOf({
  spec: ClusterTrustBundleSpec,
});
export type ClusterTrustBundle = v.InferOutput<typeof ClusterTrustBundle>;
export const ClusterTrustBundleList = listOf(ClusterTrustBundle);
