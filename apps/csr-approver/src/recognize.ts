// What the approver recognises (Kubernetes' pkg/controller/certificates/approver/sarapprove.go):
// a node agent's client certificate request, either for itself (the requester is the node named in
// the certificate) or on a node's behalf. Each comes with the permission the requester must hold —
// `create` on a virtual subresource of certificatesigningrequests — and the message of the approval.
import { type ParsedCertificateRequest, nodeClientRequestRefusal } from "@orch/pki";
import { type NamingProfile, csrConditionTrue } from "@orch/api";
import type { Csr } from "./csr.js";

export interface Recognition {
  /** `selfnodeclient` or `nodeclient`: the subresource the SubjectAccessReview asks about. */
  subresource: "selfnodeclient" | "nodeclient";
  /** The Approved condition's message. */
  message: string;
}

/** No decision yet and nothing issued (Kubernetes' approver skips issued, approved and denied requests). */
export function awaitsApproval(csr: Csr): boolean {
  return !csr.status?.certificate && !["Approved", "Denied", "Failed"].some((type) => csrConditionTrue(csr, type));
}

/** isNodeClientCert: the node agent client signer, and a request that signer accepts as it is. */
export function isNodeClientCert(profile: NamingProfile, csr: Csr, request: ParsedCertificateRequest): boolean {
  return (
    csr.spec.signerName === profile.signers.apiserverClientNodeAgent &&
    nodeClientRequestRefusal(request, csr.spec.usages ?? [], profile.nodes) === undefined
  );
}

/** isSelfNodeClientCert: a node client certificate whose common name is the requester's own user name. */
export function isSelfNodeClientCert(profile: NamingProfile, csr: Csr, request: ParsedCertificateRequest): boolean {
  return csr.spec.username === request.subject.commonName && isNodeClientCert(profile, csr, request);
}

/** The recognisers that match, in the order their permission is checked: self first, as Kubernetes. */
export function recognize(profile: NamingProfile, csr: Csr, request: ParsedCertificateRequest): Recognition[] {
  const agent = profile.nodeAgent;
  const matches: Recognition[] = [];
  if (isSelfNodeClientCert(profile, csr, request)) {
    matches.push({ subresource: "selfnodeclient", message: `Auto approving self ${agent} client certificate after SubjectAccessReview.` });
  }
  if (isNodeClientCert(profile, csr, request)) {
    matches.push({ subresource: "nodeclient", message: `Auto approving ${agent} client certificate after SubjectAccessReview.` });
  }
  return matches;
}
