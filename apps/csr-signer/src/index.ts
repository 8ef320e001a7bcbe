// @orch/csr-signer: the app is `main.ts`; these are its decisions, for tests and readers.
export { CaFiles } from "./ca-files.js";
export { DEFAULT_MAX_LIFETIME_SECONDS, type SignerConfig, signerConfig } from "./config.js";
export { awaitsSigning, isWellKnownSigner, signerRefusal, wellKnownSigners } from "./rules.js";
export { type SignerOptions, csrSigner } from "./signer.js";
export { type PublisherOptions, trustBundleName, trustBundleOf, trustBundlePublisher } from "./trust-bundles.js";
