import { X509Certificate, createPrivateKey } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  certificateLifetimeSeconds,
  createCA,
  createCertificateRequest,
  parseCertificate,
  pemBlocks,
  signCertificateRequest,
  signingValidity,
  toPem,
  verifyChain,
} from "../src/index.js";
import type { CertificateAndKey } from "../src/index.js";
import { openssl, scratchDir } from "./helpers.js";

const s = scratchDir();
const YEAR = 365 * 24 * 3600;
let ca: CertificateAndKey;

beforeAll(async () => {
  ca = await createCA({ commonName: "orch-ca" });
});

const derOf = (pem: string) => pemBlocks(pem)[0]!.der;

describe("certificateLifetimeSeconds (the signer's duration)", () => {
  it("is the maximum when nothing is requested or more is requested", () => {
    expect(certificateLifetimeSeconds(undefined, YEAR)).toBe(YEAR);
    expect(certificateLifetimeSeconds(2 * YEAR, YEAR)).toBe(YEAR);
  });

  it("honours a request within bounds and raises one below 10 minutes", () => {
    expect(certificateLifetimeSeconds(3600, YEAR)).toBe(3600);
    expect(certificateLifetimeSeconds(YEAR, YEAR)).toBe(YEAR);
    expect(certificateLifetimeSeconds(60, YEAR)).toBe(600);
  });
});

describe("signingValidity (PermissiveSigningPolicy)", () => {
  const now = new Date("2030-01-01T12:00:00.750Z");
  const at = (iso: string) => new Date(iso);

  it("backdates notBefore by 5 minutes, and notAfter too for a lifetime of 8 hours or more", () => {
    expect(signingValidity(YEAR, now)).toEqual({ notBefore: at("2030-01-01T11:55:00Z"), notAfter: at("2031-01-01T11:55:00Z") });
    expect(signingValidity(8 * 3600, now)).toEqual({ notBefore: at("2030-01-01T11:55:00Z"), notAfter: at("2030-01-01T19:55:00Z") });
  });

  it("keeps notAfter at now + lifetime for a short-lived certificate", () => {
    expect(signingValidity(3600, now)).toEqual({ notBefore: at("2030-01-01T11:55:00Z"), notAfter: at("2030-01-01T13:00:00Z") });
    expect(signingValidity(8 * 3600 - 1, now).notAfter).toEqual(at("2030-01-01T19:59:59Z"));
  });
});

describe("signCertificateRequest", () => {
  it("certifies the request's key with its subject and SANs, the usages given, and a backdated validity", async () => {
    const { csrPem, keyPem } = await createCertificateRequest({
      commonName: "jane",
      organizations: ["devs", "ops"],
      dnsNames: ["jane.example"],
      ipAddresses: ["10.0.0.7"],
    });
    const before = Date.now();
    const certPem = await signCertificateRequest({
      ca,
      request: derOf(csrPem),
      usages: ["digital signature", "client auth"],
      lifetimeSeconds: 3600,
    });
    const after = Date.now();

    const cert = parseCertificate(certPem);
    expect(cert.subject).toEqual({ commonName: "jane", organizations: ["devs", "ops"] });
    expect(cert.issuer).toEqual({ commonName: "orch-ca", organizations: [] });
    expect(cert).toMatchObject({ dnsNames: ["jane.example"], ipAddresses: ["10.0.0.7"], isCA: false });
    expect(cert.keyUsages).toEqual(["digital signature"]);
    expect(cert.extKeyUsages).toEqual(["client auth"]);
    // notBefore is 5 minutes before the moment of signing, in whole seconds: that moment lies between
    // `before` and `after`, and may be in the second after `before`'s. A one-hour certificate still
    // lasts an hour from then.
    expect(cert.notBefore.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 300_000);
    expect(cert.notBefore.getTime()).toBeLessThanOrEqual(after - 300_000);
    expect(cert.notAfter.getTime() - cert.notBefore.getTime()).toBe(3900_000);
    expect(verifyChain(certPem, ca.certPem)).toBe(true);
    // The certificate is for the key that signed the request.
    expect(new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
    expect(openssl(["verify", "-CAfile", s.file("ca.pem", ca.certPem), s.file("leaf.pem", certPem)])).toMatch(/OK/);
  });

  it("accepts the request as PEM and caps notAfter at the CA's", async () => {
    const shortCa = await createCA({ commonName: "short-ca", validityDays: 1 });
    const { csrPem } = await createCertificateRequest({ commonName: "x", keyType: "rsa" });
    const certPem = await signCertificateRequest({
      ca: shortCa,
      request: csrPem,
      usages: ["key encipherment", "server auth"],
      lifetimeSeconds: YEAR,
    });
    expect(parseCertificate(certPem).notAfter).toEqual(parseCertificate(shortCa.certPem).notAfter);
  });

  it("refuses a request whose self-signature does not hold, and unknown usages", async () => {
    const { csrPem } = await createCertificateRequest({ commonName: "system:node:n1" });
    const der = derOf(csrPem).slice();
    der[der.length - 1]! ^= 0x01;
    await expect(signCertificateRequest({ ca, request: der, usages: ["client auth"], lifetimeSeconds: 3600 })).rejects.toThrow(
      "unable to verify certificate request signature",
    );
    await expect(
      signCertificateRequest({ ca, request: toPem("CERTIFICATE REQUEST", derOf(csrPem)), usages: ["flying"], lifetimeSeconds: 3600 }),
    ).rejects.toThrow(/unrecognized usage values/);
  });
});
