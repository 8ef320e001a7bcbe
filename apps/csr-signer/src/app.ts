// csr-signer: issues certificates for approved CertificateSigningRequests of the three well-known
// signers, with the cluster CA (Kubernetes' csrsigning controllers in kube-controller-manager).
import { runControllerApp } from "@orch/controller";
import { CaFiles } from "./ca-files.js";
import { signerConfig } from "./config.js";
import { type ClusterTrustBundle, type CertificateSigningRequest as Csr, clusterTrustBundleResource, csrResource } from "@orch/api";
import { wellKnownSigners } from "./rules.js";
import { csrSigner } from "./signer.js";
import { trustBundlePublisher } from "./trust-bundles.js";

export const working = runControllerApp({
  name: "csr-signer",
  setup: async (app) => {
    const config = signerConfig(process.env);
    const ca = new CaFiles(config.certFile, config.keyFile);
    // A CA that cannot be read fails the start (the supervisor restarts the app), as in Kubernetes.
    await ca.current();
    app.log.info(`signing with ${config.certFile}, certificates of at most ${config.maxLifetimeSeconds} s`);
    const csrs = app.informer<Csr>(csrResource(app.profile));
    app.runController({
      name: "csr-signer",
      sources: [csrs],
      // Kubernetes runs its signers with 5 workers: signing is quick, the writes are network-bound.
      workers: 5,
      reconciler: csrSigner({ client: app.client, csrs, profile: app.profile, ca, maxLifetimeSeconds: config.maxLifetimeSeconds }),
    });
    // The CA of each signer served, as a ClusterTrustBundle of that signer; a key per signer name.
    const signers = wellKnownSigners(app.profile);
    const bundles = app.informer<ClusterTrustBundle>(clusterTrustBundleResource(app.profile));
    const publisher = app.runController({
      name: "trust-bundle-publisher",
      sources: [{ informer: bundles, toKeys: (b) => (signers.includes(b.spec.signerName ?? "") ? [b.spec.signerName!] : []) }],
      reconciler: trustBundlePublisher({ client: app.client, bundles, profile: app.profile, ca, recheckMs: config.caRecheckMs }),
    });
    for (const signer of signers) publisher.queue.add(signer);
  },
}).then((app) => app.working);
