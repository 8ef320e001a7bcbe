// The csr-signer as a real process against a real apiserver process and nats-server: what it signs,
// what it leaves alone, the lifetime it gives, and convergence through a crash.
import { parseCertificate, parseCertificateRequest, verifyChain } from "@orch/pki";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CertificateSigningRequest as Csr } from "@orch/api";
import { type AppProcess, approve, createCsr, issuedCertificate, startApp, useCluster, waitFor, whoAmI } from "./cluster.js";

const cluster = useCluster("orch");
const CLIENT = ["digital signature", "key encipherment", "client auth"];
/** The signer of this file issues at most two hours. */
const MAX_LIFETIME = 7200;

const lifetimeOf = (certPem: string) => {
  const cert = parseCertificate(certPem);
  return (cert.notAfter.getTime() - cert.notBefore.getTime()) / 1000;
};

describe("csr-signer", () => {
  let signer: AppProcess;
  beforeAll(() => {
    signer = startApp("csr-signer", cluster, { env: { ORCH_CLUSTER_SIGNING_DURATION_SECONDS: String(MAX_LIFETIME) } });
  });
  afterAll(() => signer.stop());

  it("issues an approved client certificate request, and the certificate authenticates as its CN and O", async () => {
    const { signers } = cluster.profile;
    const { keyPem } = await createCsr(
      cluster.admin,
      cluster,
      "jane",
      { signerName: signers.apiserverClient, usages: CLIENT, expirationSeconds: 3600 },
      { commonName: "jane", organizations: ["devs", "ops"] },
    );
    const approvedAt = Date.now();
    await approve(cluster, "jane");
    const certPem = await issuedCertificate(cluster, "jane");

    const cert = parseCertificate(certPem);
    expect(cert.subject).toEqual({ commonName: "jane", organizations: ["devs", "ops"] });
    expect(cert.isCA).toBe(false);
    expect(cert.keyUsages).toEqual(["digital signature", "key encipherment"]);
    expect(cert.extKeyUsages).toEqual(["client auth"]);
    expect(verifyChain(certPem, cluster.caPem)).toBe(true);
    // Backdated 5 minutes; a short-lived certificate keeps its full hour from the signing.
    expect(approvedAt - cert.notBefore.getTime()).toBeGreaterThan(290_000);
    expect(approvedAt - cert.notBefore.getTime()).toBeLessThan(310_000);
    expect(lifetimeOf(certPem)).toBe(3600 + 300);

    const csr = await cluster.admin.get<Csr>(cluster.csrs, "jane");
    expect(csr.status.conditions?.map((c) => c.type)).toEqual(["Approved"]);

    expect(await whoAmI(cluster, certPem, keyPem)).toEqual({
      userInfo: { username: "jane", groups: ["devs", "ops", "system:authenticated"] },
    });
  });

  it("gives the maximum, ORCH_CLUSTER_SIGNING_DURATION_SECONDS, to requests naming no lifetime and caps longer ones at it", async () => {
    const { signers } = cluster.profile;
    await createCsr(
      cluster.admin,
      cluster,
      "long",
      { signerName: signers.apiserverClient, usages: CLIENT, expirationSeconds: 86_400 },
      { commonName: "long" },
    );
    await createCsr(
      cluster.admin,
      cluster,
      "default-lifetime",
      { signerName: signers.apiserverClient, usages: CLIENT },
      { commonName: "default-lifetime" },
    );
    await Promise.all([approve(cluster, "long"), approve(cluster, "default-lifetime")]);
    // Both are under 8 hours: not backdated at the end.
    expect(lifetimeOf(await issuedCertificate(cluster, "long"))).toBe(MAX_LIFETIME + 300);
    expect(lifetimeOf(await issuedCertificate(cluster, "default-lifetime"))).toBe(MAX_LIFETIME + 300);
  });

  it("leaves pending, denied and custom-signer requests alone", async () => {
    const { signers } = cluster.profile;
    const subject = { commonName: "someone" };
    await createCsr(cluster.admin, cluster, "pending", { signerName: signers.apiserverClient, usages: CLIENT }, subject);
    await createCsr(cluster.admin, cluster, "denied", { signerName: signers.apiserverClient, usages: CLIENT }, subject);
    await createCsr(cluster.admin, cluster, "custom", { signerName: "example.com/custom", usages: CLIENT }, subject);
    await cluster.admin.updateWithRetry<Csr>(
      cluster.csrs,
      "denied",
      (csr) => void (csr.status.conditions = [{ type: "Denied", status: "True", reason: "No", message: "no" }]),
      { subresource: "approval" },
    );
    await approve(cluster, "custom");
    // A request approved after them is issued: the signer has taken them all from its queue by then, and
    // signing the sentinel is what signing any of them would have been.
    await createCsr(cluster.admin, cluster, "sentinel", { signerName: signers.apiserverClient, usages: CLIENT }, subject);
    await approve(cluster, "sentinel");
    await issuedCertificate(cluster, "sentinel");
    for (const name of ["pending", "denied", "custom"]) {
      const csr = await cluster.admin.get<Csr>(cluster.csrs, name);
      expect(csr.status.certificate, name).toBeUndefined();
      expect(
        csr.status.conditions?.some((c) => c.type === "Failed"),
        name,
      ).toBeFalsy();
    }
  });
});

describe("csr-signer through a crash", () => {
  const COUNT = 50;

  it("signs every one of 50 approved requests exactly once when killed mid-way and started again", { timeout: 120_000 }, async () => {
    const { signers } = cluster.profile;
    const names = Array.from({ length: COUNT }, (_, i) => `crash-${i}`);
    const requests = new Map<string, string>();
    for (const name of names) {
      const { csr } = await createCsr(
        cluster.admin,
        cluster,
        name,
        { signerName: signers.apiserverClient, usages: CLIENT },
        { commonName: name },
      );
      requests.set(name, csr.spec.request);
      await approve(cluster, name);
    }

    // Every certificate value each request ever shows, from the watch of all changes.
    const seen = new Map<string, Set<string>>();
    let sentinelIssued = false;
    const list = await cluster.admin.list<Csr>(cluster.csrs);
    const watch = cluster.admin.watch<Csr>(cluster.csrs, { resourceVersion: list.metadata.resourceVersion });
    const watching = (async () => {
      for await (const event of watch) {
        const name = event.object.metadata?.name ?? "";
        const certificate = event.object.status?.certificate;
        if (requests.has(name) && certificate) (seen.get(name) ?? seen.set(name, new Set()).get(name)!).add(certificate);
        if (name === "crash-sentinel" && certificate) sentinelIssued = true;
      }
    })();

    const first = startApp("csr-signer", cluster);
    // Killed once a fifth is issued: the rest are queued or being signed at that moment.
    await waitFor("the first certificates", () => seen.size >= 1, 30_000);
    await waitFor("a fifth of the certificates", () => seen.size >= COUNT / 5, 30_000);
    await first.kill();
    const issuedAtCrash = seen.size;

    const second = startApp("csr-signer", cluster);
    try {
      // The second one leads once the killed one's lease has expired (15 s).
      await waitFor("every certificate", () => seen.size === COUNT, 60_000);
      // A second signature of any of them would come from the second signer's first pass over them all
      // (queued at its start, before this request): once this one is issued and watched, it would be seen.
      await createCsr(
        cluster.admin,
        cluster,
        "crash-sentinel",
        { signerName: signers.apiserverClient, usages: CLIENT },
        { commonName: "s" },
      );
      await approve(cluster, "crash-sentinel");
      await waitFor("the sentinel's certificate in the watch", () => sentinelIssued, 30_000);
    } finally {
      await second.stop();
      watch.close();
      await watching;
    }

    expect(issuedAtCrash).toBeLessThan(COUNT);
    const serials = new Set<string>();
    for (const name of names) {
      const values = [...(seen.get(name) ?? [])];
      expect(values, name).toHaveLength(1);
      const stored = await cluster.admin.get<Csr>(cluster.csrs, name);
      expect(stored.status.certificate).toBe(values[0]);
      const certPem = Buffer.from(values[0]!, "base64").toString("utf8");
      expect(verifyChain(certPem, cluster.caPem)).toBe(true);
      const cert = parseCertificate(certPem);
      expect(cert.subject.commonName).toBe(name);
      expect(cert.publicKeyPem).toBe(parseCertificateRequest(Buffer.from(requests.get(name)!, "base64").toString("utf8")).publicKeyPem);
      serials.add(cert.serialNumber);
    }
    expect(serials.size).toBe(COUNT);
  });
});
