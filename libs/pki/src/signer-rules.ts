// What the well-known signers accept, with Kubernetes' messages (pkg/apis/certificates/helpers.go
// ValidateKubeletClientCSR / ValidateKubeletServingCSR, and the signer's validAPIServerClientUsages).
// Each returns why a request is refused, or undefined when it is acceptable. The node identity (group
// and user-name prefix) is a parameter: it comes from the naming profile.
import type { ParsedCertificateRequest } from "./request.js";

/** How node agents are named in their certificates: `O=<group>`, `CN=<userPrefix><node name>`. */
export interface NodeIdentity {
  group: string;
  userPrefix: string;
}

/** Go's sets.String equality: the same members, duplicates and order aside. */
const sameSet = (usages: readonly string[], allowed: readonly string[]): boolean => {
  const set = new Set(usages);
  return set.size === allowed.length && allowed.every((u) => set.has(u));
};

/** `%v` of sets.String.List(): sorted, space-separated, in brackets. */
const goList = (xs: readonly string[]): string => `[${[...xs].sort().join(" ")}]`;

const organizationRefusal = (request: ParsedCertificateRequest, nodes: NodeIdentity): string | undefined => {
  const orgs = request.subject.organizations;
  return orgs.length === 1 && orgs[0] === nodes.group ? undefined : `subject organization is not ${nodes.group}`;
};

const commonNameRefusal = (request: ParsedCertificateRequest, nodes: NodeIdentity): string | undefined =>
  (request.subject.commonName ?? "").startsWith(nodes.userPrefix)
    ? undefined
    : `subject common name does not begin with ${nodes.userPrefix}`;

const NODE_CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"];
// Key encipherment only matters to RSA keys, so a client with another key may leave it out.
const NODE_CLIENT_USAGES_NO_RSA = ["digital signature", "client auth"];
const NODE_SERVING_USAGES = ["digital signature", "key encipherment", "server auth"];
const NODE_SERVING_USAGES_NO_RSA = ["digital signature", "server auth"];

/** A well-known signer's reason to refuse, and which part of the request (`spec.request` or `spec.usages`) it is about. */
export interface SignerRefusal {
  field: "request" | "usages";
  message: string;
}

/** The names of the well-known signers (they come from the naming profile). */
export interface WellKnownSigners {
  apiserverClient: string;
  apiserverClientNodeAgent: string;
  nodeAgentServing: string;
}

const onRequest = (message: string | undefined): SignerRefusal | undefined =>
  message === undefined ? undefined : { field: "request", message };
const onUsages = (message: string | undefined): SignerRefusal | undefined =>
  message === undefined ? undefined : { field: "usages", message };

const usagesRefusal = (usages: readonly string[], required: readonly string[], withoutRsa: readonly string[]) =>
  onUsages(sameSet(usages, required) || sameSet(usages, withoutRsa) ? undefined : `usages did not match ${goList(required)}`);

function nodeClient(request: ParsedCertificateRequest, usages: readonly string[], nodes: NodeIdentity): SignerRefusal | undefined {
  return (
    onRequest(
      organizationRefusal(request, nodes) ??
        (request.dnsNames.length > 0 ? "DNS subjectAltNames are not allowed" : undefined) ??
        (request.emailAddresses.length > 0 ? "Email subjectAltNames are not allowed" : undefined) ??
        (request.ipAddresses.length > 0 ? "IP subjectAltNames are not allowed" : undefined) ??
        (request.uris.length > 0 ? "URI subjectAltNames are not allowed" : undefined) ??
        commonNameRefusal(request, nodes),
    ) ?? usagesRefusal(usages, NODE_CLIENT_USAGES, NODE_CLIENT_USAGES_NO_RSA)
  );
}

// Kubernetes checks a serving request's usages before its common name.
function nodeServing(request: ParsedCertificateRequest, usages: readonly string[], nodes: NodeIdentity): SignerRefusal | undefined {
  return (
    onRequest(
      organizationRefusal(request, nodes) ??
        (request.dnsNames.length === 0 && request.ipAddresses.length === 0 ? "DNS or IP subjectAltName is required" : undefined) ??
        (request.emailAddresses.length > 0 ? "Email subjectAltNames are not allowed" : undefined) ??
        (request.uris.length > 0 ? "URI subjectAltNames are not allowed" : undefined),
    ) ??
    usagesRefusal(usages, NODE_SERVING_USAGES, NODE_SERVING_USAGES_NO_RSA) ??
    onRequest(commonNameRefusal(request, nodes))
  );
}

/** validAPIServerClientUsages: client auth required; besides it only the two key usages a TLS client needs. */
export function apiserverClientUsagesRefusal(usages: readonly string[]): string | undefined {
  let hasClientAuth = false;
  for (const usage of usages) {
    if (usage === "client auth") hasClientAuth = true;
    else if (usage !== "digital signature" && usage !== "key encipherment") return `invalid usage for client certificate: ${usage}`;
  }
  return hasClientAuth ? undefined : "missing required usage for client certificate: client auth";
}

/** ValidateKubeletClientCSR: a node's identity and nothing else; its IsKubeletClientCSR is `=== undefined`. */
export const nodeClientRequestRefusal = (
  request: ParsedCertificateRequest,
  usages: readonly string[],
  nodes: NodeIdentity,
): string | undefined => nodeClient(request, usages, nodes)?.message;

/** ValidateKubeletServingCSR: a node serving on DNS names or IPs. */
export const nodeServingRequestRefusal = (
  request: ParsedCertificateRequest,
  usages: readonly string[],
  nodes: NodeIdentity,
): string | undefined => nodeServing(request, usages, nodes)?.message;

/**
 * Why the well-known signer `signerName` would not issue for this request (the apiserver refuses it at
 * create, the signer marks it Failed); undefined when it would, or when `signerName` is another signer.
 */
export function wellKnownSignerRefusal(
  signers: WellKnownSigners,
  nodes: NodeIdentity,
  signerName: string,
  request: ParsedCertificateRequest,
  usages: readonly string[],
): SignerRefusal | undefined {
  if (signerName === signers.apiserverClientNodeAgent) return nodeClient(request, usages, nodes);
  if (signerName === signers.nodeAgentServing) return nodeServing(request, usages, nodes);
  if (signerName === signers.apiserverClient) return onUsages(apiserverClientUsagesRefusal(usages));
  return undefined;
}
