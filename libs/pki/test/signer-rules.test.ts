import { describe, expect, it } from "vitest";
import {
  apiserverClientUsagesRefusal,
  createCertificateRequest,
  nodeClientRequestRefusal,
  nodeServingRequestRefusal,
  parseCertificateRequest,
} from "../src/index.js";
import type { CreateCertificateRequestOptions } from "../src/index.js";

const nodes = { group: "system:nodes", userPrefix: "system:node:" };
const request = async (options: CreateCertificateRequestOptions) =>
  parseCertificateRequest((await createCertificateRequest(options)).csrPem);
const node = { commonName: "system:node:n1", organizations: ["system:nodes"] };
const CLIENT = ["digital signature", "key encipherment", "client auth"];
const SERVING = ["digital signature", "key encipherment", "server auth"];

describe("nodeClientRequestRefusal (ValidateKubeletClientCSR)", () => {
  it("accepts a node's identity with the client usages, key encipherment optional, in any order", async () => {
    const csr = await request(node);
    expect(nodeClientRequestRefusal(csr, CLIENT, nodes)).toBeUndefined();
    expect(nodeClientRequestRefusal(csr, ["client auth", "digital signature"], nodes)).toBeUndefined();
    expect(nodeClientRequestRefusal(csr, ["client auth", "digital signature", "client auth"], nodes)).toBeUndefined();
  });

  it("refuses anything else with Kubernetes' message, checks in Kubernetes' order", async () => {
    expect(nodeClientRequestRefusal(await request({ ...node, organizations: ["system:nodes", "x"] }), CLIENT, nodes)).toBe(
      "subject organization is not system:nodes",
    );
    expect(nodeClientRequestRefusal(await request({ ...node, dnsNames: ["n1"] }), CLIENT, nodes)).toBe(
      "DNS subjectAltNames are not allowed",
    );
    expect(nodeClientRequestRefusal(await request({ ...node, emailAddresses: ["a@b.c"] }), CLIENT, nodes)).toBe(
      "Email subjectAltNames are not allowed",
    );
    expect(nodeClientRequestRefusal(await request({ ...node, ipAddresses: ["10.0.0.1"] }), CLIENT, nodes)).toBe(
      "IP subjectAltNames are not allowed",
    );
    expect(nodeClientRequestRefusal(await request({ ...node, uris: ["spiffe://n1"] }), CLIENT, nodes)).toBe(
      "URI subjectAltNames are not allowed",
    );
    expect(nodeClientRequestRefusal(await request({ ...node, commonName: "n1" }), CLIENT, nodes)).toBe(
      "subject common name does not begin with system:node:",
    );
    const csr = await request(node);
    for (const usages of [["client auth"], ["key encipherment", "client auth"], [...CLIENT, "server auth"]]) {
      expect(nodeClientRequestRefusal(csr, usages, nodes)).toBe("usages did not match [client auth digital signature key encipherment]");
    }
  });
});

describe("nodeServingRequestRefusal (ValidateKubeletServingCSR)", () => {
  it("needs a DNS or IP SAN and the serving usages", async () => {
    expect(nodeServingRequestRefusal(await request({ ...node, ipAddresses: ["10.0.0.1"] }), SERVING, nodes)).toBeUndefined();
    expect(
      nodeServingRequestRefusal(await request({ ...node, dnsNames: ["n1"] }), ["server auth", "digital signature"], nodes),
    ).toBeUndefined();
    expect(nodeServingRequestRefusal(await request(node), SERVING, nodes)).toBe("DNS or IP subjectAltName is required");
    expect(nodeServingRequestRefusal(await request({ ...node, dnsNames: ["n1"] }), CLIENT, nodes)).toBe(
      "usages did not match [digital signature key encipherment server auth]",
    );
    // Usages are checked before the common name.
    expect(nodeServingRequestRefusal(await request({ ...node, commonName: "n1", dnsNames: ["n1"] }), CLIENT, nodes)).toMatch(
      /^usages did not match/,
    );
    expect(nodeServingRequestRefusal(await request({ ...node, commonName: "n1", dnsNames: ["n1"] }), SERVING, nodes)).toBe(
      "subject common name does not begin with system:node:",
    );
  });
});

describe("apiserverClientUsagesRefusal (validAPIServerClientUsages)", () => {
  it("requires client auth and allows only digital signature and key encipherment besides", () => {
    expect(apiserverClientUsagesRefusal(CLIENT)).toBeUndefined();
    expect(apiserverClientUsagesRefusal(["client auth"])).toBeUndefined();
    expect(apiserverClientUsagesRefusal(["digital signature"])).toBe("missing required usage for client certificate: client auth");
    expect(apiserverClientUsagesRefusal(["client auth", "server auth"])).toBe("invalid usage for client certificate: server auth");
  });
});
