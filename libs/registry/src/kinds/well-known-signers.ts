// What the well-known signers will sign (Kubernetes' pkg/apis/certificates/helpers.go and the signer
// controller's validAPIServerClientUsages), with Kubernetes' messages. Kubernetes checks these only when
// its signer runs, and marks a request it refuses `Failed`; orch refuses such a request at create, so
// its author hears at once rather than after approval.
import type { NamingProfile } from "@orch/api";
import type { ParsedCertificateRequest } from "@orch/pki";

/** Which part of the spec a signer's refusal is about. */
export interface SignerRefusal {
  field: "request" | "usages";
  message: string;
}

const request = (message: string): SignerRefusal => ({ field: "request", message });
const usagesError = (message: string): SignerRefusal => ({ field: "usages", message });

/** Go's sets.String equality: the same members, duplicates and order aside. */
const sameSet = (usages: readonly string[], allowed: readonly string[]) => {
  const set = new Set(usages);
  return set.size === allowed.length && allowed.every((u) => set.has(u));
};
/** `%v` of a sorted []string. */
const goList = (xs: readonly string[]) => `[${[...xs].sort().join(" ")}]`;

/** A well-known signer's refusal of `csr` and `usages`; undefined for an acceptable request or another signer. */
export function wellKnownSignerRefusal(
  profile: NamingProfile,
  signerName: string,
  csr: ParsedCertificateRequest,
  usages: readonly string[],
): SignerRefusal | undefined {
  const { signers } = profile;
  if (signerName === signers.apiserverClientNodeAgent) return nodeClientRefusal(profile, csr, usages);
  if (signerName === signers.nodeAgentServing) return nodeServingRefusal(profile, csr, usages);
  if (signerName === signers.apiserverClient) return apiserverClientRefusal(usages);
  return undefined;
}

/** The subject every node agent certificate carries: organization exactly [nodes group]. */
function nodeSubjectRefusal(profile: NamingProfile, csr: ParsedCertificateRequest): SignerRefusal | undefined {
  const orgs = csr.subject.organizations;
  if (orgs.length !== 1 || orgs[0] !== profile.nodes.group) {
    return request(`subject organization is not ${profile.nodes.group}`);
  }
  return undefined;
}

const commonNameRefusal = (profile: NamingProfile, csr: ParsedCertificateRequest) =>
  (csr.subject.commonName ?? "").startsWith(profile.nodes.userPrefix)
    ? undefined
    : request(`subject common name does not begin with ${profile.nodes.userPrefix}`);

// ValidateKubeletClientCSR: a node's identity and nothing else; key encipherment only for RSA-era clients.
function nodeClientRefusal(profile: NamingProfile, csr: ParsedCertificateRequest, usages: readonly string[]) {
  const required = ["digital signature", "key encipherment", "client auth"];
  return (
    nodeSubjectRefusal(profile, csr) ??
    (csr.dnsNames.length > 0 ? request("DNS subjectAltNames are not allowed") : undefined) ??
    (csr.emailAddresses.length > 0 ? request("Email subjectAltNames are not allowed") : undefined) ??
    (csr.ipAddresses.length > 0 ? request("IP subjectAltNames are not allowed") : undefined) ??
    (csr.uris.length > 0 ? request("URI subjectAltNames are not allowed") : undefined) ??
    commonNameRefusal(profile, csr) ??
    (sameSet(usages, required) || sameSet(usages, ["digital signature", "client auth"])
      ? undefined
      : usagesError(`usages did not match ${goList(required)}`))
  );
}

// ValidateKubeletServingCSR: a node serving on DNS names or IPs; note Kubernetes' order (usages before CN).
function nodeServingRefusal(profile: NamingProfile, csr: ParsedCertificateRequest, usages: readonly string[]) {
  const required = ["digital signature", "key encipherment", "server auth"];
  return (
    nodeSubjectRefusal(profile, csr) ??
    (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0 ? request("DNS or IP subjectAltName is required") : undefined) ??
    (csr.emailAddresses.length > 0 ? request("Email subjectAltNames are not allowed") : undefined) ??
    (csr.uris.length > 0 ? request("URI subjectAltNames are not allowed") : undefined) ??
    (sameSet(usages, required) || sameSet(usages, ["digital signature", "server auth"])
      ? undefined
      : usagesError(`usages did not match ${goList(required)}`)) ??
    commonNameRefusal(profile, csr)
  );
}

// validAPIServerClientUsages: client auth required; only the two key usages a TLS client needs besides it.
function apiserverClientRefusal(usages: readonly string[]): SignerRefusal | undefined {
  let hasClientAuth = false;
  for (const u of usages) {
    if (u === "client auth") hasClientAuth = true;
    else if (u !== "digital signature" && u !== "key encipherment") return usagesError(`invalid usage for client certificate: ${u}`);
  }
  return hasClientAuth ? undefined : usagesError("missing required usage for client certificate: client auth");
}
