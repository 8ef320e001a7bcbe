// The csr-signer publishes the CA of each signer it serves as a ClusterTrustBundle of that signer,
// named by the signer prefix rule, and replaces it when the CA files change (a rotation).
import { type ClusterTrustBundle, clusterTrustBundleResource } from "@orch/api";
import { createCA, parseCertificate } from "@orch/pki";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppProcess, startApp, useCluster, waitFor } from "./cluster.js";

const cluster = useCluster("orch");

describe("trust bundle publisher", () => {
  let signer: AppProcess;
  let dir: string;
  beforeAll(() => {
    // A copy of the cluster CA the test may rotate without touching the apiserver's own.
    dir = mkdtempSync(join(tmpdir(), "orch-signer-ca-"));
    for (const f of ["ca.crt", "ca.key"]) copyFileSync(join(cluster.apiserver.dataDir, "pki", f), join(dir, f));
    signer = startApp("csr-signer", cluster, {
      identity: "own",
      env: { ORCH_SIGNER_CERT_FILE: join(dir, "ca.crt"), ORCH_SIGNER_KEY_FILE: join(dir, "ca.key"), ORCH_SIGNER_CA_RECHECK_SECONDS: "0.2" },
    });
  });
  afterAll(async () => {
    await signer.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const signers = () => Object.values(cluster.profile.signers).filter((s) => !s.endsWith("/legacy-unknown"));
  const bundles = async () => (await cluster.admin.list<ClusterTrustBundle>(clusterTrustBundleResource(cluster.profile))).items;
  /** One bundle per served signer, each holding `caPem`. */
  const published = (caPem: string) =>
    waitFor("one bundle per signer with the CA", async () => {
      const items = await bundles();
      const ok = signers().every((s) => {
        const mine = items.filter((b) => b.spec.signerName === s);
        return mine.length === 1 && mine[0]!.spec.trustBundle === caPem;
      });
      return ok && items;
    });

  it("publishes the CA of each well-known signer, named <signer prefix>:<hash>", async () => {
    const items = await published(cluster.caPem);
    expect(items.map((b) => b.spec.signerName).sort()).toEqual(signers().sort());
    for (const b of items) {
      expect(b.metadata.name).toMatch(new RegExp(`^${b.spec.signerName!.replaceAll("/", ":")}:[0-9a-f]{24}$`));
      expect(parseCertificate(b.spec.trustBundle).isCA).toBe(true);
    }
    // The same CA gives the same name under every signer's prefix.
    expect(new Set(items.map((b) => b.metadata.name!.split(":").pop())).size).toBe(1);
  });

  it("publishes a rotated CA under a new name and deletes the old CA's bundles", async () => {
    const before = new Set((await published(cluster.caPem)).map((b) => b.metadata.name));
    const next = await createCA({ commonName: "orch-ca-2" });
    writeFileSync(join(dir, "ca.key"), next.keyPem);
    writeFileSync(join(dir, "ca.crt"), next.certPem);
    const after = await published(next.certPem);
    for (const b of after) expect(before.has(b.metadata.name)).toBe(false);
  });
});
