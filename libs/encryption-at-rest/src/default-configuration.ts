// Kubernetes stores Secrets in plain text unless --encryption-provider-config is given. orch encrypts
// them by default: on first start it writes a configuration with a fresh AES key beside the database.
// That protects a copied database file (a backup, a disk image, a support bundle), not a copied data
// directory: docs/encryption-at-rest.md says what it does and does not protect against.
import { randomBytes } from "node:crypto";
import { access, chmod, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const DEFAULT_CONFIGURATION_FILE = "encryption-config.yaml";

const defaultConfiguration = (secret: string) => `# Written by orch on first start, as ORCH_ENCRYPTION_PROVIDER_CONFIG was not set.
# Secrets are encrypted with the first provider's first key; identity reads what was stored before.
# Without this file the Secrets in orch.db cannot be read: back it up apart from the database.
# Key rotation: docs/encryption-at-rest.md.
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources:
      - secrets
    providers:
      - aescbc:
          keys:
            - name: key1
              secret: ${secret}
      - identity: {}
`;

/** The path of `<dataDir>/encryption-config.yaml`, written (mode 0600) with a new 32-byte key if absent. */
export async function ensureDefaultEncryptionConfiguration(dataDir: string): Promise<string> {
  const path = join(dataDir, DEFAULT_CONFIGURATION_FILE);
  const exists = await access(path).then(
    () => true,
    () => false,
  );
  if (exists) {
    // The key is as sensitive as the CA's: closed again if someone opened it, as the database is.
    await chmod(path, 0o600);
    return path;
  }
  // Written whole, then renamed: a crash never leaves a half file that would lock the Secrets away.
  await writeFile(`${path}.tmp`, defaultConfiguration(randomBytes(32).toString("base64")), { mode: 0o600 });
  await rename(`${path}.tmp`, path);
  return path;
}
