// The signing CA, read from its two files and read again when either changes (as Kubernetes'
// dynamic CA loader does), so a rotated CA is used without restarting the signer.
import type { CertificateAndKey } from "@orch/pki";
import { readFile, stat } from "node:fs/promises";

export class CaFiles {
  private loaded: { stamp: string; ca: CertificateAndKey } | undefined;

  constructor(
    readonly certFile: string,
    readonly keyFile: string,
  ) {}

  /** The CA as the files hold it now; throws when either cannot be read. */
  async current(): Promise<CertificateAndKey> {
    const stamp = (await Promise.all([stat(this.certFile), stat(this.keyFile)])).map((s) => `${s.mtimeMs}:${s.size}`).join("/");
    if (this.loaded?.stamp !== stamp) {
      const [certPem, keyPem] = await Promise.all([readFile(this.certFile, "utf8"), readFile(this.keyFile, "utf8")]);
      this.loaded = { stamp, ca: { certPem, keyPem } };
    }
    return this.loaded.ca;
  }
}
