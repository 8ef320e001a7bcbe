import { describe, expect, it } from "vitest";
import { createCertificateRequest, parseCertificateRequest, pemBlocks, toPem } from "../src/index.js";
import type { KeyType } from "../src/index.js";
import { openssl, scratchDir } from "./helpers.js";

const s = scratchDir();
const SUBJECT = "/O=system:nodes/O=extra/CN=system:node:n1";
const SAN = "subjectAltName=DNS:n1.local,IP:10.0.0.1,IP:fd00::1,email:ops@example.com,URI:https://n1.example/x";

/** A CSR made by `openssl req` with a fresh key; returns its PEM and the public key openssl reports. */
function opensslCsr(name: string, keyArgs: string[], extra: string[] = []): { csr: string; pub: string } {
  const out = `${s.dir}/${name}.csr`;
  openssl([
    "req",
    "-new",
    ...keyArgs,
    "-nodes",
    "-keyout",
    `${s.dir}/${name}.key`,
    "-subj",
    SUBJECT,
    "-addext",
    SAN,
    ...extra,
    "-out",
    out,
  ]);
  return { csr: s.read(`${name}.csr`), pub: openssl(["req", "-in", out, "-noout", "-pubkey"]) };
}

function derOf(pem: string): Uint8Array {
  const der = pemBlocks(pem)[0]?.der;
  if (!der) throw new Error("no PEM block");
  return new Uint8Array(der);
}

describe("parseCertificateRequest", () => {
  const cases = [
    ["RSA", ["-newkey", "rsa:2048"], []],
    ["ECDSA", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"], []],
    ["ECDSA", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:secp384r1"], ["-sha384"]],
    ["Ed25519", ["-newkey", "ed25519"], []],
    ["RSA", ["-newkey", "rsa:2048"], ["-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"]],
  ] as const;

  it.each(cases)("reads and verifies an openssl %s request %#", (algorithm, keyArgs, extra) => {
    const { csr, pub } = opensslCsr(`csr-${algorithm}-${extra.length}`, [...keyArgs], [...extra]);
    const parsed = parseCertificateRequest(csr);
    expect(parsed).toEqual({
      subject: { commonName: "system:node:n1", organizations: ["system:nodes", "extra"] },
      dnsNames: ["n1.local"],
      ipAddresses: ["10.0.0.1", "fd00::1"],
      emailAddresses: ["ops@example.com"],
      uris: ["https://n1.example/x"],
      publicKeyAlgorithm: algorithm,
      publicKeyPem: pub,
      signatureValid: true,
    });
  });

  it("fails verification when a byte of the signed content or of the signature changes", () => {
    for (const keyArgs of [
      ["-newkey", "rsa:2048"],
      ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
      ["-newkey", "ed25519"],
    ]) {
      const { csr } = opensslCsr("tamper", keyArgs);
      const der = derOf(csr);
      const at = Buffer.from(der).indexOf("system:node:n1");
      expect(at).toBeGreaterThan(0);

      const renamed = der.slice();
      renamed[at + 13] = "2".charCodeAt(0); // system:node:n2
      const parsed = parseCertificateRequest(toPem("CERTIFICATE REQUEST", renamed));
      expect(parsed.subject.commonName).toBe("system:node:n2");
      expect(parsed.signatureValid).toBe(false);

      const badSignature = der.slice();
      badSignature[badSignature.length - 1]! ^= 0x01;
      expect(parseCertificateRequest(badSignature).signatureValid).toBe(false);
      expect(parseCertificateRequest(der).signatureValid).toBe(true);
    }
  });

  it("throws a clear error on garbage and on unsupported key types", () => {
    expect(() => parseCertificateRequest("not a csr")).toThrow(/no CERTIFICATE REQUEST or NEW CERTIFICATE REQUEST PEM block/);
    expect(() => parseCertificateRequest(toPem("CERTIFICATE REQUEST", Uint8Array.of(0x30, 0x01, 0x00)))).toThrow(
      /invalid certificate request/,
    );
    expect(() => parseCertificateRequest(Uint8Array.of(0xff, 0xff))).toThrow(/invalid certificate request/);
    const { csr } = opensslCsr("ed448", ["-newkey", "ed448"]);
    expect(() => parseCertificateRequest(csr)).toThrow(/unsupported public key algorithm 1\.3\.101\.113/);
  });
});

describe("createCertificateRequest", () => {
  it.each(["ecdsa", "rsa", "ed25519"] as const)(
    "makes a %s request that openssl and parseCertificateRequest verify",
    async (keyType: KeyType) => {
      const { csrPem, keyPem } = await createCertificateRequest({
        commonName: "system:node:n2",
        organizations: ["system:nodes"],
        dnsNames: ["n2"],
        ipAddresses: ["192.168.1.2", "::ffff:10.0.0.9"],
        keyType,
      });
      expect(keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      const path = s.file(`own-${keyType}.csr`, csrPem);
      const text = openssl(["req", "-in", path, "-noout", "-text", "-verify"]);
      expect(text).toMatch(/verify OK/);
      expect(text).toMatch(/Subject: O = system:nodes, CN = system:node:n2/);
      expect(text).toMatch(/DNS:n2, IP Address:192.168.1.2, IP Address:0:0:0:0:0:FFFF:A00:9/);
      // The key openssl derives from our private key is the one in the request.
      const pubFromKey = openssl(["pkey", "-in", s.file(`own-${keyType}.key`, keyPem), "-pubout"]);

      const parsed = parseCertificateRequest(csrPem);
      expect(parsed.signatureValid).toBe(true);
      expect(parsed.publicKeyPem).toBe(pubFromKey);
      expect(parsed.publicKeyAlgorithm).toBe({ ecdsa: "ECDSA", rsa: "RSA", ed25519: "Ed25519" }[keyType]);
      expect(parsed.subject).toEqual({ commonName: "system:node:n2", organizations: ["system:nodes"] });
      // IPv4-mapped IPv6 prints as a dotted quad, as Go's net.IP does.
      expect(parsed.ipAddresses).toEqual(["192.168.1.2", "10.0.0.9"]);
    },
  );

  it("omits the extension request when there are no SANs and rejects bad IPs", async () => {
    const { csrPem } = await createCertificateRequest({ commonName: "plain" });
    const path = s.file("plain.csr", csrPem);
    const text = openssl(["req", "-in", path, "-noout", "-text", "-verify"]);
    expect(text).toMatch(/Attributes:\s+\(none\)/);
    expect(text).toMatch(/verify OK/);
    expect(text).not.toMatch(/Subject Alternative Name/);
    expect(parseCertificateRequest(csrPem)).toMatchObject({ signatureValid: true, dnsNames: [], ipAddresses: [] });
    await expect(createCertificateRequest({ commonName: "x", ipAddresses: ["10.0.0.256"] })).rejects.toThrow(/invalid IP address/);
    await expect(createCertificateRequest({ commonName: "x", dnsNames: ["bücher.example"] })).rejects.toThrow(/invalid DNS name/);
  });
});
