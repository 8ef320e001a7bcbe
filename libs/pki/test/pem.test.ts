import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCA, issueCertificate, pemBlocks, toPem } from "../src/index.js";
import { openssl, scratchDir } from "./helpers.js";

// Made at the file's top level: the helper removes it after the file (a hook registered inside a test never runs).
const s = scratchDir();

describe("pemBlocks / toPem", () => {
  it("round-trips DER through 64-column PEM", () => {
    const der = new Uint8Array(randomBytes(200));
    const pem = toPem("CERTIFICATE", der);
    const lines = pem.trimEnd().split("\n");
    expect(lines[0]).toBe("-----BEGIN CERTIFICATE-----");
    expect(lines.at(-1)).toBe("-----END CERTIFICATE-----");
    expect(lines.slice(1, -1).every((l) => l.length <= 64)).toBe(true);
    const [block] = pemBlocks(pem);
    expect(block?.type).toBe("CERTIFICATE");
    expect(block?.der).toEqual(der);
    expect(block?.headers).toEqual({});
  });

  it("finds blocks among surrounding text and reports their offsets", () => {
    const a = toPem("CERTIFICATE", Uint8Array.of(1, 2, 3));
    const b = toPem("PRIVATE KEY", Uint8Array.of(4, 5));
    const text = `subject=CN = something\nissuer=...\n${a}\nsome notes in between\r\n${b.replace(/\n/g, "\r\n")}trailer`;
    const blocks = pemBlocks(text);
    expect(blocks.map((x) => x.type)).toEqual(["CERTIFICATE", "PRIVATE KEY"]);
    expect(blocks[1]?.der).toEqual(Uint8Array.of(4, 5));
    for (const block of blocks) {
      expect(text.slice(block.start, block.end)).toMatch(new RegExp(`^-----BEGIN ${block.type}-----[\\s\\S]*-----END ${block.type}-----$`));
    }
  });

  it("skips malformed blocks: no END, mismatched END, bad base64", () => {
    const good = toPem("CERTIFICATE", Uint8Array.of(9));
    const text = [
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END PUBLIC KEY-----",
      "-----BEGIN X-----\nnot*base64\n-----END X-----",
      "-----BEGIN Y-----\nAAA\n-----END Y-----", // unpadded
      good,
      "-----BEGIN DANGLING-----\nAAAA\n",
    ].join("\n");
    const blocks = pemBlocks(text);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]?.der).toEqual(Uint8Array.of(9));
  });

  it("reports RFC 1421 headers of an encrypted key written by openssl", () => {
    openssl(["ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", `${s.dir}/k.pem`]);
    const encrypted = openssl(["ec", "-in", `${s.dir}/k.pem`, "-aes128", "-passout", "pass:secret"]);
    const [block] = pemBlocks(encrypted);
    expect(block?.type).toBe("EC PRIVATE KEY");
    expect(block?.headers["Proc-Type"]).toBe("4,ENCRYPTED");
    expect(block?.headers["DEK-Info"]).toMatch(/^AES-128-CBC,[0-9A-F]{32}$/);
    expect(block?.der.length).toBeGreaterThan(100);
  });

  it("an encrypted CA key is refused with a clear error", async () => {
    const ca = await createCA({ commonName: "enc" });
    const encrypted = openssl(["ec", "-in", s.file("ca.key", ca.keyPem), "-aes128", "-passout", "pass:x"]);
    await expect(
      issueCertificate({ ca: { certPem: ca.certPem, keyPem: encrypted }, subject: { commonName: "x" }, usages: [], validitySeconds: 60 }),
    ).rejects.toThrow(/encrypted private keys are not supported/);
  });
});
