// Publishes the CA of each signer this app serves as a ClusterTrustBundle with that signerName, so
// that whoever must trust its certificates (node agents, pods through a clusterTrustBundle projection)
// finds the anchors in the API, as Kubernetes' ClusterTrustBundle publisher does
// (pkg/controller/certificates/clustertrustbundlepublisher): the bundle is named by the signer prefix
// rule, `<signer with ":" for "/">:<first 12 bytes of the bundle's SHA-256, hex>`, so a rotated CA is a
// new bundle; the signer's bundles of other names (the old CA's) are then deleted.
import { type ClusterTrustBundle, type NamingProfile, clusterTrustBundleResource } from "@orch/api";
import type { ApiClient, Informer } from "@orch/client";
import { isAlreadyExists, isNotFound } from "@orch/client";
import type { Result } from "@orch/controller";
import { pemBlocks, toPem } from "@orch/pki";
import { createHash } from "node:crypto";
import type { CaFiles } from "./ca-files.js";

/** The bundle of the CA certificate(s) in `certPem`: CERTIFICATE blocks only, without headers. */
export function trustBundleOf(certPem: string): string {
  return pemBlocks(certPem)
    .filter((b) => b.type === "CERTIFICATE")
    .map((b) => toPem("CERTIFICATE", b.der))
    .join("");
}

/** constructBundleName: the signer prefix, then the first 12 bytes of the bundle's SHA-256 in hex. */
export function trustBundleName(signerName: string, bundle: string): string {
  return `${signerName.replaceAll("/", ":")}:${createHash("sha256").update(bundle).digest("hex").slice(0, 24)}`;
}

export interface PublisherOptions {
  client: Pick<ApiClient, "create" | "delete">;
  bundles: Pick<Informer<ClusterTrustBundle>, "list">;
  profile: NamingProfile;
  ca: CaFiles;
  /** How often the CA files are looked at again for a rotation. */
  recheckMs: number;
}

/** Reconciles one signer (the key is its name): its one current bundle exists, no other. */
export function trustBundlePublisher(options: PublisherOptions): (signerName: string) => Promise<Result> {
  const { client, bundles, profile, ca, recheckMs } = options;
  const ref = clusterTrustBundleResource(profile);
  return async (signerName) => {
    const bundle = trustBundleOf((await ca.current()).certPem);
    const name = trustBundleName(signerName, bundle);
    const mine = bundles.list().filter((b) => b.spec.signerName === signerName);
    if (!mine.some((b) => b.metadata.name === name)) {
      try {
        await client.create<ClusterTrustBundle>(ref, {
          apiVersion: `${ref.group}/${ref.version}`,
          kind: "ClusterTrustBundle",
          metadata: { name },
          spec: { signerName, trustBundle: bundle },
        } as ClusterTrustBundle);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }
    // The old CA's bundles go only once the new one is in place: consumers never see none.
    for (const old of mine) {
      if (old.metadata.name === name) continue;
      try {
        await client.delete(ref, old.metadata.name!, { preconditions: { uid: old.metadata.uid } });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return { requeueAfter: recheckMs };
  };
}
