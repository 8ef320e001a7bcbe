// The anchors the nodes verify the apiserver with: the bootstrap kubeconfig's CA, joined by the
// ClusterTrustBundles the csr-signer publishes for the node client signer. In orch one cluster CA signs
// the apiserver's serving certificate and every well-known signer's certificates (the spec names no
// separate apiserver-serving signer), so that signer's bundle is what a node can learn the cluster's
// anchors from once it has an identity, and what tells it of a rotated CA. Consumers may reorder and
// deduplicate a bundle's certificates (spec 2.6): the anchors are kept once each.
import { type ClusterTrustBundle, type NamingProfile, clusterTrustBundleResource } from "@orch/api";
import type { ApiClient } from "@orch/client";
import { pemBlocks, toPem } from "@orch/pki";

/** The CERTIFICATE blocks of several PEM texts, each once, without headers or text between them. */
export function joinAnchors(...texts: (string | undefined)[]): string {
  const seen = new Set<string>();
  let out = "";
  for (const text of texts) {
    for (const block of pemBlocks(text ?? "")) {
      if (block.type !== "CERTIFICATE") continue;
      const pem = toPem("CERTIFICATE", block.der);
      if (seen.has(pem)) continue;
      seen.add(pem);
      out += pem;
    }
  }
  return out;
}

/** The node client signer's published anchors (empty when none is published yet). */
export async function signerAnchors(client: ApiClient, profile: NamingProfile): Promise<string> {
  const list = await client.list<ClusterTrustBundle>(clusterTrustBundleResource(profile), {
    fieldSelector: `spec.signerName=${profile.signers.apiserverClientNodeAgent}`,
  });
  return joinAnchors(...list.items.map((b) => b.spec.trustBundle));
}
