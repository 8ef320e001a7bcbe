// The signer's configuration from the environment: the CA it signs with and the longest lifetime it
// issues (Kubernetes' --cluster-signing-cert-file, --cluster-signing-key-file, --cluster-signing-duration).
import { join, resolve } from "node:path";

export interface SignerConfig {
  certFile: string;
  keyFile: string;
  maxLifetimeSeconds: number;
  /** How often the CA files are looked at for a rotation, to publish the new CA's trust bundles. */
  caRecheckMs: number;
}

/** Kubernetes' default --cluster-signing-duration: 8760h. */
export const DEFAULT_MAX_LIFETIME_SECONDS = 365 * 24 * 3600;

export function signerConfig(env: NodeJS.ProcessEnv): SignerConfig {
  // The CA the apiserver writes at its first start, which is also the one it trusts for client certificates.
  const pki = join(resolve(env.ORCH_DATA_DIR || ".orch"), "pki");
  const text = env.ORCH_CLUSTER_SIGNING_DURATION_SECONDS;
  const maxLifetimeSeconds = text ? Number(text) : DEFAULT_MAX_LIFETIME_SECONDS;
  if (!Number.isSafeInteger(maxLifetimeSeconds) || maxLifetimeSeconds <= 0) {
    throw new Error(`ORCH_CLUSTER_SIGNING_DURATION_SECONDS must be a positive whole number of seconds, not ${JSON.stringify(text)}`);
  }
  const recheck = env.ORCH_SIGNER_CA_RECHECK_SECONDS;
  const caRecheckSeconds = recheck ? Number(recheck) : 30;
  if (!Number.isFinite(caRecheckSeconds) || caRecheckSeconds <= 0) {
    throw new Error(`ORCH_SIGNER_CA_RECHECK_SECONDS must be a positive number of seconds, not ${JSON.stringify(recheck)}`);
  }
  return {
    caRecheckMs: Math.round(caRecheckSeconds * 1000),
    certFile: resolve(env.ORCH_SIGNER_CERT_FILE || join(pki, "ca.crt")),
    keyFile: resolve(env.ORCH_SIGNER_KEY_FILE || join(pki, "ca.key")),
    maxLifetimeSeconds,
  };
}
