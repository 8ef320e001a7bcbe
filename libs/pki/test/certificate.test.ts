import { X509Certificate, createPrivateKey } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createCA,
  createCertificateRequest,
  issueCertificate,
  parseCertificate,
  parseCertificateRequest,
  parseCertificates,
  verifyChain,
} from "../src/index.js";
import type { CertificateAndKey } from "../src/index.js";
import { openssl, scratchDir } from "./helpers.js";

const s = scratchDir();
let ca: CertificateAndKey;
let caPath: string;

beforeAll(async () => {
  ca = await createCA({ commonName: "orch-ca" });
  caPath = s.file("ca.pem", ca.certPem);
});

describe("createCA", () => {
  it("is a self-signed P-256 CA with critical basicConstraints and keyUsage", () => {
    const text = openssl(["x509", "-noout", "-text", "-in", caPath]);
    expect(text).toMatch(/Issuer: CN = orch-ca/);
    expect(text).toMatch(/Subject: CN = orch-ca/);
    expect(text).toMatch(/NIST CURVE: P-256/);
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
    expect(text).toMatch(/Subject Key Identifier/);
    expect(openssl(["verify", "-CAfile", caPath, caPath])).toMatch(/OK/);

    const parsed = parseCertificate(ca.certPem);
    expect(parsed.isCA).toBe(true);
    expect(parsed.subject).toEqual({ commonName: "orch-ca", organizations: [] });
    expect(parsed.keyUsages).toEqual(["digital signature", "cert sign", "crl sign"]);
    const days = (parsed.notAfter.getTime() - parsed.notBefore.getTime()) / 86_400_000;
    expect(days).toBe(3650);
    expect(verifyChain(ca.certPem, ca.certPem)).toBe(true);
  });
});

describe("issueCertificate", () => {
  it("issues a leaf that openssl verifies, with the SANs and usages asked for", async () => {
    const notBefore = new Date(Date.now() - 60_000);
    const leaf = await issueCertificate({
      ca,
      subject: { commonName: "kube-apiserver", organizations: ["orch", "system:masters"] },
      dnsNames: ["localhost", "kubernetes.default.svc"],
      ipAddresses: ["127.0.0.1", "::1", "2001:db8::8:800:200c:417a"],
      emailAddresses: ["ops@example.com"],
      uris: ["spiffe://cluster.local/ns/a/sa/b"],
      usages: ["digital signature", "key encipherment", "server auth", "client auth"],
      notBefore,
      validitySeconds: 3600,
    });
    expect(leaf.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const path = s.file("leaf.pem", leaf.certPem);
    expect(openssl(["verify", "-CAfile", caPath, "-purpose", "sslserver", path])).toMatch(/: OK/);
    expect(openssl(["verify", "-CAfile", caPath, "-purpose", "sslclient", path])).toMatch(/: OK/);

    const text = openssl(["x509", "-noout", "-text", "-in", path]);
    expect(text).toMatch(/Subject: O = orch, O = system:masters, CN = kube-apiserver/);
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(text).toMatch(/Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/);
    expect(text).toMatch(
      /DNS:localhost, DNS:kubernetes.default.svc, email:ops@example.com, URI:spiffe:\/\/cluster.local\/ns\/a\/sa\/b, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:2001:DB8:0:0:8:800:200C:417A/,
    );
    // AKI of the leaf is the CA's SKI.
    const caSki = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(openssl(["x509", "-noout", "-text", "-in", caPath]))?.[1];
    expect(text).toMatch(new RegExp(`Authority Key Identifier:\\s+(keyid:)?${caSki}`));

    const parsed = parseCertificate(leaf.certPem);
    expect(parsed).toMatchObject({
      subject: { commonName: "kube-apiserver", organizations: ["orch", "system:masters"] },
      issuer: { commonName: "orch-ca", organizations: [] },
      isCA: false,
      dnsNames: ["localhost", "kubernetes.default.svc"],
      ipAddresses: ["127.0.0.1", "::1", "2001:db8::8:800:200c:417a"],
      emailAddresses: ["ops@example.com"],
      uris: ["spiffe://cluster.local/ns/a/sa/b"],
      keyUsages: ["digital signature", "key encipherment"],
      extKeyUsages: ["server auth", "client auth"],
    });
    expect(parsed.notBefore.getTime()).toBe(Math.floor(notBefore.getTime() / 1000) * 1000);
    expect(parsed.notAfter.getTime() - parsed.notBefore.getTime()).toBe(3600_000);
    // Node's own X.509 parser agrees on the serial and the SANs.
    const x509 = new X509Certificate(leaf.certPem);
    expect(x509.serialNumber.toLowerCase()).toBe(parsed.serialNumber);
    expect(x509.subjectAltName).toContain("IP Address:2001:DB8:0:0:8:800:200C:417A");
    expect(verifyChain(leaf.certPem, ca.certPem)).toBe(true);
  });

  it("writes IPv4 SANs as 4 bytes, IPv6 as 16, and prints IPv6 the way Go does", async () => {
    const ips = ["10.0.0.1", "1:0:0:2:0:0:0:3", "1:0:0:2:0:0:3:4", "::", "fe80::", "::ffff:192.0.2.1", "2001:DB8::1"];
    const { certPem } = await issueCertificate({
      ca,
      subject: { commonName: "ip" },
      ipAddresses: ips,
      usages: ["server auth"],
      validitySeconds: 60,
    });
    expect(parseCertificate(certPem).ipAddresses).toEqual([
      "10.0.0.1",
      "1:0:0:2::3",
      "1::2:0:0:3:4",
      "::",
      "fe80::",
      "192.0.2.1",
      "2001:db8::1",
    ]);
    expect(new X509Certificate(certPem).subjectAltName).toBe(
      "IP Address:10.0.0.1, IP Address:1:0:0:2:0:0:0:3, IP Address:1:0:0:2:0:0:3:4, IP Address:0:0:0:0:0:0:0:0, IP Address:FE80:0:0:0:0:0:0:0, IP Address:0:0:0:0:0:FFFF:C000:201, IP Address:2001:DB8:0:0:0:0:0:1",
    );
  });

  it("uses random positive serials of up to 128 bits", async () => {
    const serials = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const { certPem } = await issueCertificate({ ca, subject: { commonName: "s" }, usages: ["client auth"], validitySeconds: 60 });
        return parseCertificate(certPem).serialNumber;
      }),
    );
    expect(new Set(serials).size).toBe(8);
    for (const serial of serials) {
      expect(serial.length).toBeLessThanOrEqual(32);
      expect(BigInt(`0x${serial}`) > 0n).toBe(true);
    }
  });

  it("maps every Kubernetes usage string and rejects unknown ones like the signer", async () => {
    const { certPem } = await issueCertificate({
      ca,
      subject: { commonName: "all" },
      usages: [
        "signing",
        "content commitment",
        "data encipherment",
        "key agreement",
        "decipher only",
        "any",
        "code signing",
        "s/mime",
        "ipsec end system",
        "ipsec tunnel",
        "ipsec user",
        "timestamping",
        "ocsp signing",
        "microsoft sgc",
        "netscape sgc",
      ],
      validitySeconds: 60,
    });
    const parsed = parseCertificate(certPem);
    expect(parsed.keyUsages).toEqual(["digital signature", "content commitment", "data encipherment", "key agreement", "decipher only"]);
    expect(parsed.extKeyUsages).toEqual([
      "any",
      "code signing",
      "email protection",
      "ipsec end system",
      "ipsec tunnel",
      "ipsec user",
      "timestamping",
      "ocsp signing",
      "microsoft sgc",
      "netscape sgc",
    ]);
    const text = openssl(["x509", "-noout", "-text", "-in", s.file("all.pem", certPem)]);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Non Repudiation, Data Encipherment, Key Agreement, Decipher Only/);
    expect(text).toMatch(
      /Any Extended Key Usage, Code Signing, E-mail Protection, IPSec End System, IPSec Tunnel, IPSec User, Time Stamping, OCSP Signing, Microsoft Server Gated Crypto, Netscape Server Gated Crypto/,
    );

    await expect(
      issueCertificate({ ca, subject: { commonName: "x" }, usages: ["server auth", "bogus" as never], validitySeconds: 60 }),
    ).rejects.toThrow('unrecognized usage values: ["bogus"]');
  });

  it("certifies a given public key (from a CSR) and returns no private key", async () => {
    const csr = await createCertificateRequest({ commonName: "system:node:n1", organizations: ["system:nodes"], keyType: "rsa" });
    const request = parseCertificateRequest(csr.csrPem);
    const issued = await issueCertificate({
      ca,
      subject: request.subject,
      usages: ["client auth"],
      validitySeconds: 600,
      publicKeyPem: request.publicKeyPem,
    });
    expect(issued.keyPem).toBeUndefined();
    const parsed = parseCertificate(issued.certPem);
    expect(parsed.publicKeyPem).toBe(request.publicKeyPem);
    expect(new X509Certificate(issued.certPem).checkPrivateKey(createPrivateKey(csr.keyPem))).toBe(true);
    // A private key passed where the public key belongs is a mix-up, not something to derive from.
    await expect(
      issueCertificate({ ca, subject: request.subject, usages: [], validitySeconds: 60, publicKeyPem: csr.keyPem }),
    ).rejects.toThrow(/no PUBLIC KEY PEM block/);
  });

  it("caps notAfter at the CA's notAfter and refuses to sign with an expired CA", async () => {
    const caNotAfter = parseCertificate(ca.certPem).notAfter;
    const { certPem } = await issueCertificate({
      ca,
      subject: { commonName: "long" },
      usages: ["client auth"],
      validitySeconds: 20 * 365 * 86_400,
    });
    expect(parseCertificate(certPem).notAfter).toEqual(caNotAfter);

    const old = await issueCertificate({
      ca,
      subject: { commonName: "old-ca" },
      usages: [],
      isCA: true,
      notBefore: new Date(Date.now() - 7200_000),
      validitySeconds: 3600,
    });
    await expect(
      issueCertificate({
        ca: { certPem: old.certPem, keyPem: old.keyPem ?? "" },
        subject: { commonName: "x" },
        usages: [],
        validitySeconds: 60,
      }),
    ).rejects.toThrow(/CA certificate expired/);
  });

  it("issues an intermediate CA whose leaves chain to the root", async () => {
    const intermediate = await issueCertificate({
      ca,
      subject: { commonName: "intermediate" },
      usages: ["digital signature"],
      isCA: true,
      validitySeconds: 3600,
    });
    const parsedIntermediate = parseCertificate(intermediate.certPem);
    expect(parsedIntermediate.isCA).toBe(true);
    expect(parsedIntermediate.keyUsages).toEqual(["digital signature", "cert sign"]);
    const leaf = await issueCertificate({
      ca: { certPem: intermediate.certPem, keyPem: intermediate.keyPem ?? "" },
      subject: { commonName: "leaf" },
      usages: ["client auth"],
      validitySeconds: 60,
    });
    const out = openssl([
      "verify",
      "-CAfile",
      caPath,
      "-untrusted",
      s.file("int.pem", intermediate.certPem),
      s.file("int-leaf.pem", leaf.certPem),
    ]);
    expect(out).toMatch(/: OK/);
    expect(verifyChain(leaf.certPem, intermediate.certPem)).toBe(true);
    expect(verifyChain(leaf.certPem, ca.certPem)).toBe(false);
  });

  it("signs with RSA, P-384 and Ed25519 CA keys made by openssl (PKCS#8, SEC1 after EC PARAMETERS)", async () => {
    for (const name of ["rsa-ca", "ed25519-ca"]) {
      const key = name === "rsa-ca" ? "rsa:2048" : "ed25519";
      openssl([
        "req",
        "-x509",
        "-newkey",
        key,
        "-nodes",
        "-subj",
        `/CN=${name}`,
        "-days",
        "1",
        "-keyout",
        `${s.dir}/${name}.key`,
        "-out",
        `${s.dir}/${name}.pem`,
      ]);
    }
    openssl(["ecparam", "-genkey", "-name", "secp384r1", "-out", `${s.dir}/p384-ca.key`]);
    openssl(["req", "-x509", "-key", `${s.dir}/p384-ca.key`, "-subj", "/O=orch/CN=p384-ca", "-days", "1", "-out", `${s.dir}/p384-ca.pem`]);
    expect(s.read("p384-ca.key")).toMatch(/BEGIN EC PARAMETERS[\s\S]*BEGIN EC PRIVATE KEY/);

    const cases = [
      ["rsa-ca", "sha256WithRSAEncryption"],
      ["p384-ca", "ecdsa-with-SHA384"],
      ["ed25519-ca", "ED25519"],
    ] as const;
    for (const [name, algorithm] of cases) {
      const other = { certPem: s.read(`${name}.pem`), keyPem: s.read(`${name}.key`) };
      const leaf = await issueCertificate({
        ca: other,
        subject: { commonName: `leaf-of-${name}` },
        dnsNames: ["x.test"],
        usages: ["server auth"],
        validitySeconds: 300,
      });
      const path = s.file(`leaf-${name}.pem`, leaf.certPem);
      expect(openssl(["verify", "-CAfile", `${s.dir}/${name}.pem`, "-purpose", "sslserver", path])).toMatch(/: OK/);
      expect(openssl(["x509", "-noout", "-text", "-in", path])).toContain(`Signature Algorithm: ${algorithm}`);
      expect(verifyChain(leaf.certPem, other.certPem)).toBe(true);
      expect(parseCertificate(leaf.certPem).issuer.commonName).toBe(name);
    }
  });

  it("refuses a CA key that does not belong to the CA certificate, and a non-CA certificate", async () => {
    const other = await createCA({ commonName: "other" });
    await expect(
      issueCertificate({
        ca: { certPem: ca.certPem, keyPem: other.keyPem },
        subject: { commonName: "x" },
        usages: [],
        validitySeconds: 60,
      }),
    ).rejects.toThrow(/does not match/);
    const leaf = await issueCertificate({ ca, subject: { commonName: "leaf" }, usages: [], validitySeconds: 60 });
    await expect(
      issueCertificate({
        ca: { certPem: leaf.certPem, keyPem: leaf.keyPem ?? "" },
        subject: { commonName: "x" },
        usages: [],
        validitySeconds: 60,
      }),
    ).rejects.toThrow(/not a CA/);
  });
});

describe("parseCertificate / verifyChain", () => {
  it("throws a clear error on garbage", () => {
    expect(() => parseCertificate("hello")).toThrow(/no CERTIFICATE PEM block found/);
    expect(() => parseCertificate(Uint8Array.of(1, 2, 3))).toThrow(/invalid certificate/);
    expect(() => parseCertificate(Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x01))).toThrow(/invalid certificate/);
    const der = Buffer.from(
      ca.certPem
        .split("\n")
        .filter((l) => !l.startsWith("-----"))
        .join(""),
      "base64",
    );
    expect(() => parseCertificate(Buffer.concat([der, Buffer.of(0)]))).toThrow(/trailing data/);
    expect(parseCertificate(new Uint8Array(der)).subject.commonName).toBe("orch-ca");
  });

  it("rejects another CA's leaf and certificates outside their validity", async () => {
    const other = await createCA({ commonName: "orch-ca" }); // same name, different key
    const leaf = await issueCertificate({ ca, subject: { commonName: "leaf" }, usages: ["client auth"], validitySeconds: 3600 });
    expect(verifyChain(leaf.certPem, other.certPem)).toBe(false);
    expect(verifyChain(leaf.certPem, ca.certPem, new Date(Date.now() + 2 * 3600_000))).toBe(false);
    expect(verifyChain(leaf.certPem, ca.certPem, new Date(Date.now() - 3600_000))).toBe(false);
    expect(() => verifyChain("nope", ca.certPem)).toThrow(/no CERTIFICATE PEM block/);
  });
});

describe("parseCertificates", () => {
  const derOf = (pem: string) =>
    Buffer.from(
      pem
        .split("\n")
        .filter((l) => !l.startsWith("-----"))
        .join(""),
      "base64",
    );

  it("reads every certificate of a back-to-back DER chain, as Go's x509.ParseCertificates", async () => {
    const leaf = await issueCertificate({ ca, subject: { commonName: "leaf" }, usages: ["client auth"], validitySeconds: 60 });
    const chain = new Uint8Array(Buffer.concat([derOf(leaf.certPem), derOf(ca.certPem)]));
    expect(parseCertificates(chain).map((c) => [c.subject.commonName, c.isCA])).toEqual([
      ["leaf", false],
      ["orch-ca", true],
    ]);
    expect(parseCertificates(new Uint8Array(derOf(ca.certPem)))).toHaveLength(1);
    expect(parseCertificates(new Uint8Array())).toEqual([]);
  });

  it("throws when any element is not a certificate", () => {
    const der = derOf(ca.certPem);
    expect(() => parseCertificates(new Uint8Array(Buffer.concat([der, Buffer.of(0x30, 0x03, 0x02, 0x01, 0x01)])))).toThrow(
      /invalid certificate/,
    );
    expect(() => parseCertificates(new Uint8Array(Buffer.concat([der, Buffer.of(0x30, 0x05, 0x01)])))).toThrow(/invalid certificate/);
    expect(() => parseCertificates(Uint8Array.of(0xff))).toThrow(/invalid certificate/);
  });
});
