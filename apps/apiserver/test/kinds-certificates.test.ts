// The certificates group's rules (spec 2.5, 2.6, 3.1; Kubernetes' certificates validation and
// strategies): every refusal is a 422 naming the field and stores nothing; every good case works.
import { createCA, createCertificateRequest, issueCertificate, parseCertificateRequest, pemBlocks, toPem } from "@orch/pki";
import type { CertificateAndKey, CreateCertificateRequestOptions } from "@orch/pki";
import { beforeAll, describe, expect, it } from "vitest";
import { b64 } from "./certificate-fixtures.js";
import { RFC3339, type Reply, useTestServer } from "./harness.js";

const t = useTestServer();
const CSRS = "/apis/certificates.orch.io/v1/certificatesigningrequests";
const CTBS = "/apis/certificates.orch.io/v1beta1/clustertrustbundles";
const q = encodeURIComponent;

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

/** A fresh request (ECDSA unless said), base64 as `spec.request` carries it, and its PEM. */
async function request(options: Partial<CreateCertificateRequestOptions> = {}) {
  const { csrPem } = await createCertificateRequest({ commonName: "someone", ...options });
  return { pem: csrPem, request: b64(csrPem) };
}

function csr(name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { apiVersion: "certificates.orch.io/v1", kind: "CertificateSigningRequest", metadata: { name }, spec, ...extra };
}

function ctb(name: string, trustBundle: string, signerName?: string) {
  return {
    apiVersion: "certificates.orch.io/v1beta1",
    kind: "ClusterTrustBundle",
    metadata: { name },
    spec: { ...(signerName === undefined ? {} : { signerName }), trustBundle },
  };
}

/** A 422 Invalid whose causes are exactly these `[field, message]` pairs, in order. */
function expectInvalid(r: Reply, causes: [string, string][]) {
  expect(r.status, r.text).toBe(422);
  expect(r.body.reason).toBe("Invalid");
  expect(r.body.details.causes.map((c: { field: string; message: string }) => [c.field, c.message])).toEqual(causes);
}

/** Nothing by that name was stored. */
async function expectAbsent(base: string, name: string) {
  expect((await t.api.get(`${base}/${name}`)).status).toBe(404);
}

/** The stored object is still exactly `before`. */
async function expectUnchanged(base: string, before: { metadata: { name: string } }) {
  expect((await t.api.get(`${base}/${before.metadata.name}`)).body).toEqual(before);
}

const signers = {
  client: "orch.io/orch-apiserver-client",
  nodeClient: "orch.io/orch-apiserver-client-orchlet",
  serving: "orch.io/orchlet-serving",
};
const custom = "example.com/signer";
const clientUsages = ["digital signature", "key encipherment", "client auth"];
const servingUsages = ["digital signature", "key encipherment", "server auth"];

let good: string;
beforeAll(async () => {
  good = (await request()).request;
  // The names the tests use are the orch profile's.
  expect(t.config.profile.signers).toMatchObject({
    apiserverClient: signers.client,
    apiserverClientNodeAgent: signers.nodeClient,
    nodeAgentServing: signers.serving,
  });
});

/** Creates a valid request for the custom signer and returns it as stored. */
async function created(name = unique("csr"), spec: Record<string, unknown> = {}) {
  const r = await t.api.post(CSRS, csr(name, { request: good, signerName: custom, usages: clientUsages, ...spec }));
  expect(r.status, r.text).toBe(201);
  return r.body;
}

describe("CertificateSigningRequest create", () => {
  it("takes the requester from the caller and starts with an empty status", async () => {
    const name = unique("requester");
    const r = await t.api.post(
      CSRS,
      csr(
        name,
        {
          request: good,
          signerName: custom,
          usages: clientUsages,
          username: "mallory",
          uid: "u-1",
          groups: ["system:masters"],
          extra: { k: ["v"] },
        },
        { status: { conditions: [{ type: "Approved", status: "True" }], certificate: b64("x") } },
      ),
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.spec).toEqual({
      request: good,
      signerName: custom,
      usages: clientUsages,
      username: "orch-admin",
      groups: ["system:masters", "system:authenticated"],
    });
    expect(r.body.status).toEqual({});
    expect((await t.api.get(`${CSRS}/${name}`)).body).toEqual(r.body);
  });

  it.each([
    ["RSA", "rsa"],
    ["ECDSA", "ecdsa"],
    ["Ed25519", "ed25519"],
  ] as const)("accepts an %s request whose signature verifies", async (_, keyType) => {
    const r = await t.api.post(
      CSRS,
      csr(unique(keyType), { request: (await request({ keyType })).request, signerName: custom, usages: clientUsages }),
    );
    expect(r.status, r.text).toBe(201);
  });

  it.each([
    ["RSA", "rsa", "crypto/rsa: verification error"],
    ["ECDSA", "ecdsa", "x509: ECDSA verification failure"],
    ["Ed25519", "ed25519", "x509: Ed25519 verification failure"],
  ] as const)("refuses a tampered %s request (its signature no longer verifies)", async (_, keyType, message) => {
    const { pem } = await request({ commonName: "system:node:n1", keyType });
    const der = Buffer.from(pemBlocks(pem)[0]!.der);
    der[der.indexOf("system:node:n1") + 13] = "2".charCodeAt(0);
    const tampered = toPem("CERTIFICATE REQUEST", new Uint8Array(der));
    expect(parseCertificateRequest(tampered)).toMatchObject({ subject: { commonName: "system:node:n2" }, signatureValid: false });
    const name = unique("tampered");
    const r = await t.api.post(CSRS, csr(name, { request: b64(tampered), signerName: custom, usages: clientUsages }));
    expectInvalid(r, [["spec.request", `Invalid value: "${b64(tampered)}": ${message}`]]);
    await expectAbsent(CSRS, name);
  });

  it("refuses a request that is not a CERTIFICATE REQUEST PEM block, or not base64", async () => {
    const ca = await createCA({ commonName: "ca" });
    const cases: [string, string][] = [
      [b64("hello"), "PEM block type must be CERTIFICATE REQUEST"],
      [b64(ca.certPem), "PEM block type must be CERTIFICATE REQUEST"],
      // Only the first block counts, as Go's pem.Decode.
      [b64(ca.certPem + (await request()).pem), "PEM block type must be CERTIFICATE REQUEST"],
    ];
    for (const [value, message] of cases) {
      const name = unique("not-a-request");
      expectInvalid(await t.api.post(CSRS, csr(name, { request: value, signerName: custom, usages: clientUsages })), [
        ["spec.request", `Invalid value: "${value}": ${message}`],
      ]);
      await expectAbsent(CSRS, name);
    }
    // `[]byte` that is not base64 fails decoding, before validation: 400 with Go's offset.
    const notBase64 = await t.api.post(CSRS, csr(unique("b64"), { request: "not base64!", signerName: custom, usages: clientUsages }));
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.message).toBe(
      'CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: illegal base64 data at input byte 3',
    );
    // A CERTIFICATE REQUEST block whose content is not a PKCS#10 request.
    const garbage = b64(toPem("CERTIFICATE REQUEST", Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x01)));
    const r = await t.api.post(CSRS, csr(unique("garbage"), { request: garbage, signerName: custom, usages: clientUsages }));
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["spec.request"]);
  });

  it("accepts text around the request block and later blocks, as Kubernetes reads only the first block", async () => {
    const { pem } = await request();
    const r = await t.api.post(
      CSRS,
      csr(unique("around"), { request: b64(`notes\n${pem}\nmore notes\n${pem}`), signerName: custom, usages: clientUsages }),
    );
    expect(r.status, r.text).toBe(201);
  });

  it("requires a qualified signerName", async () => {
    const cases: [string, [string, string][]][] = [
      ["", [["spec.signerName", "Required value"]]],
      [
        "signer",
        [["spec.signerName", `Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name'`]],
      ],
      [
        "a/b/c",
        [["spec.signerName", `Invalid value: "a/b/c": must be a fully qualified domain and path of the form 'example.com/signer-name'`]],
      ],
      [
        "example/signer",
        [["spec.signerName", `Invalid value: "example": should be a domain with at least two segments separated by dots`]],
      ],
      [
        "Example.com/signer",
        [
          [
            "spec.signerName",
            `Invalid value: "Example.com": validating label "Example": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
          ],
        ],
      ],
      [
        "example.com/Signer",
        [
          [
            "spec.signerName",
            `Invalid value: "Signer": validating label "Signer": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
          ],
        ],
      ],
      [`${"abcdefghij.".repeat(24)}com/signer`, [["spec.signerName", "Too long: may not be more than 253 bytes"]]],
      [`example.com/${"abcdefghij.".repeat(52)}x`, [["spec.signerName", "Too long: may not be more than 571 bytes"]]],
      [
        "orch.io/legacy-unknown",
        [["spec.signerName", `Invalid value: "orch.io/legacy-unknown": the legacy signerName is not allowed via this API version`]],
      ],
    ];
    for (const [signerName, causes] of cases) {
      const name = unique("signer");
      expectInvalid(await t.api.post(CSRS, csr(name, { request: good, signerName, usages: clientUsages })), causes);
      await expectAbsent(CSRS, name);
    }
    // Custom signers with a path of several labels are fine.
    await created(unique("custom"), { signerName: "signers.example.com/team.prod-issuer" });
  });

  it("refuses expirationSeconds below 600", async () => {
    const name = unique("short");
    expectInvalid(await t.api.post(CSRS, csr(name, { request: good, signerName: custom, usages: clientUsages, expirationSeconds: 599 })), [
      ["spec.expirationSeconds", "Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"],
    ]);
    await expectAbsent(CSRS, name);
    expect((await created(unique("ten-minutes"), { expirationSeconds: 600 })).spec.expirationSeconds).toBe(600);
  });

  it("requires usages, only the known ones, without duplicates", async () => {
    const supported =
      'supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"';
    const cases: [unknown, [string, string][]][] = [
      [undefined, [["spec.usages", "Required value"]]],
      [[], [["spec.usages", "Required value"]]],
      [["client auth", "flying"], [["spec.usages[1]", `Unsupported value: "flying": ${supported}`]]],
      [["client auth", "signing", "client auth"], [["spec.usages[2]", 'Duplicate value: "client auth"']]],
    ];
    for (const [usages, causes] of cases) {
      const name = unique("usages");
      const spec = { request: good, signerName: custom, ...(usages === undefined ? {} : { usages }) };
      expectInvalid(await t.api.post(CSRS, csr(name, spec)), causes);
      await expectAbsent(CSRS, name);
    }
    await created(unique("every-usage"), { usages: ["any", "s/mime", "ocsp signing", "netscape sgc"] });
  });

  it("accepts any name that is a path segment (Kubernetes does not care what requests are called)", async () => {
    expect((await created("Node_CSR.1")).metadata.name).toBe("Node_CSR.1");
    expectInvalid(await t.api.post(CSRS, csr("a%b", { request: good, signerName: custom, usages: clientUsages })), [
      ["metadata.name", `Invalid value: "a%b": may not contain '%'`],
    ]);
    const list = await t.api.get(CSRS);
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).not.toContain("a%b");
  });
});

describe("CertificateSigningRequest well-known signers", () => {
  /** Creates and expects one refusal, and that nothing was stored. */
  async function refused(spec: Record<string, unknown>, field: string, message: string) {
    const name = unique("signer-rule");
    const r = await t.api.post(CSRS, csr(name, spec));
    expect(r.status, r.text).toBe(422);
    expect(r.body.details.causes).toHaveLength(1);
    expect(r.body.details.causes[0]).toMatchObject({ reason: "FieldValueInvalid", field });
    expect(r.body.details.causes[0].message).toMatch(new RegExp(`: ${message.replace(/[[\]]/g, "\\$&")}$`));
    await expectAbsent(CSRS, name);
  }

  it("API server client signer: client auth required, never server auth", async () => {
    const spec = { request: good, signerName: signers.client };
    await refused({ ...spec, usages: ["client auth", "server auth"] }, "spec.usages", "invalid usage for client certificate: server auth");
    await refused({ ...spec, usages: ["digital signature"] }, "spec.usages", "missing required usage for client certificate: client auth");
    await created(unique("client"), { ...spec, usages: clientUsages });
    await created(unique("client-only"), { ...spec, usages: ["client auth"] });
  });

  it("node client signer: system:node:<name> in system:nodes, no SANs, client usages", async () => {
    const node = { commonName: "system:node:n1", organizations: ["system:nodes"] };
    const spec = async (options: Partial<CreateCertificateRequestOptions>, usages = clientUsages) => ({
      request: (await request({ ...node, ...options })).request,
      signerName: signers.nodeClient,
      usages,
    });
    await refused(await spec({ organizations: ["system:masters"] }), "spec.request", "subject organization is not system:nodes");
    await refused(await spec({ organizations: ["system:nodes", "extra"] }), "spec.request", "subject organization is not system:nodes");
    await refused(await spec({ commonName: "n1" }), "spec.request", "subject common name does not begin with system:node:");
    await refused(await spec({ dnsNames: ["n1.example.com"] }), "spec.request", "DNS subjectAltNames are not allowed");
    await refused(await spec({ emailAddresses: ["n1@example.com"] }), "spec.request", "Email subjectAltNames are not allowed");
    await refused(await spec({ ipAddresses: ["10.0.0.1"] }), "spec.request", "IP subjectAltNames are not allowed");
    await refused(await spec({ uris: ["spiffe://n1"] }), "spec.request", "URI subjectAltNames are not allowed");
    await refused(
      await spec({}, ["digital signature", "client auth", "server auth"]),
      "spec.usages",
      "usages did not match [client auth digital signature key encipherment]",
    );
    await created(unique("node-client"), await spec({}));
    await created(unique("node-client-ec"), await spec({}, ["digital signature", "client auth"]));
  });

  it("node serving signer: server auth required, DNS or IP names, a node's subject", async () => {
    const node = { commonName: "system:node:n1", organizations: ["system:nodes"], dnsNames: ["n1.example.com"] };
    const spec = async (options: Partial<CreateCertificateRequestOptions>, usages = servingUsages) => ({
      request: (await request({ ...node, ...options })).request,
      signerName: signers.serving,
      usages,
    });
    await refused(await spec({}, clientUsages), "spec.usages", "usages did not match [digital signature key encipherment server auth]");
    await refused(await spec({ dnsNames: [] }), "spec.request", "DNS or IP subjectAltName is required");
    await refused(await spec({ organizations: [] }), "spec.request", "subject organization is not system:nodes");
    await refused(await spec({ emailAddresses: ["n1@example.com"] }), "spec.request", "Email subjectAltNames are not allowed");
    await refused(await spec({ uris: ["spiffe://n1"] }), "spec.request", "URI subjectAltNames are not allowed");
    await refused(await spec({ commonName: "n1" }), "spec.request", "subject common name does not begin with system:node:");
    await created(unique("serving"), await spec({}));
    await created(unique("serving-ip"), await spec({ dnsNames: [], ipAddresses: ["10.0.0.1"] }, ["digital signature", "server auth"]));
  });

  it("custom signers have no such rules", async () => {
    await created(unique("custom-any"), { usages: ["server auth", "client auth", "cert sign"] });
  });
});

describe("CertificateSigningRequest main endpoint", () => {
  it("keeps spec and status as they are: changes to them are dropped, metadata changes apply", async () => {
    const before = await created();
    const name = before.metadata.name;
    const changed = structuredClone(before);
    changed.metadata.labels = { team: "a" };
    changed.spec = { ...changed.spec, signerName: "other.example.com/x", usages: ["server auth"], username: "mallory" };
    changed.status = { conditions: [{ type: "Approved", status: "True" }], certificate: b64("x") };
    const r = await t.api.put(`${CSRS}/${name}`, changed);
    expect(r.status, r.text).toBe(200);
    expect(r.body.metadata.labels).toEqual({ team: "a" });
    expect(r.body.spec).toEqual(before.spec);
    expect(r.body.status).toEqual({});
    const patched = await t.api.patch(`${CSRS}/${name}`, { spec: { usages: ["any"] }, status: { certificate: b64("y") } });
    expect(patched.status).toBe(200);
    expect(patched.body.spec).toEqual(before.spec);
    expect(patched.body.status).toEqual({});
    expect((await t.api.get(`${CSRS}/${name}`)).body.spec).toEqual(before.spec);
  });
});

describe("CertificateSigningRequest /approval", () => {
  const approval = (name: string) => `${CSRS}/${name}/approval`;
  const withConditions = (obj: any, conditions: unknown[]) => ({ ...obj, status: { ...obj.status, conditions } });

  it("adds Approved with timestamps, and changes nothing else", async () => {
    const before = await created();
    const body = withConditions(before, [{ type: "Approved", status: "True", reason: "AutoApproved", message: "ok" }]);
    body.spec = { ...body.spec, usages: ["any"] };
    body.status.certificate = b64("not a certificate");
    // Kubernetes' approval strategy resets only spec and status: metadata sent here applies.
    body.metadata = { ...body.metadata, labels: { via: "approval" } };
    const r = await t.api.put(approval(before.metadata.name), body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.metadata.labels).toEqual({ via: "approval" });
    expect(r.body.spec).toEqual(before.spec);
    expect(r.body.status.certificate).toBeUndefined();
    const [c] = r.body.status.conditions;
    expect(c).toMatchObject({ type: "Approved", status: "True", reason: "AutoApproved", message: "ok" });
    expect(c.lastUpdateTime).toMatch(RFC3339);
    expect(c.lastTransitionTime).toMatch(RFC3339);
    expect(Math.abs(Date.parse(c.lastTransitionTime) - Date.now())).toBeLessThan(10_000);
    expect((await t.api.get(`${CSRS}/${before.metadata.name}`)).body).toEqual(r.body);
  });

  it("adds Denied", async () => {
    const before = await created();
    const r = await t.api.put(approval(before.metadata.name), withConditions(before, [{ type: "Denied", status: "True" }]));
    expect(r.status, r.text).toBe(200);
    expect(r.body.status.conditions.map((c: any) => c.type)).toEqual(["Denied"]);
  });

  it("refuses Approved with Denied, a status other than True, two of a type, and removals", async () => {
    const before = await created();
    const name = before.metadata.name;
    expectInvalid(
      await t.api.put(
        approval(name),
        withConditions(before, [
          { type: "Approved", status: "True" },
          { type: "Denied", status: "True" },
        ]),
      ),
      [["status.conditions[1].type", 'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive']],
    );
    expectInvalid(await t.api.put(approval(name), withConditions(before, [{ type: "Approved", status: "False" }])), [
      ["status.conditions[0].status", 'Unsupported value: "False": supported values: "True"'],
    ]);
    expectInvalid(
      await t.api.put(
        approval(name),
        withConditions(before, [
          { type: "Approved", status: "True" },
          { type: "Approved", status: "True" },
        ]),
      ),
      [["status.conditions[1].type", 'Duplicate value: "Approved"']],
    );
    expectInvalid(await t.api.put(approval(name), withConditions(before, [{ type: "Custom", status: "Maybe" }])), [
      ["status.conditions[0].status", 'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'],
    ]);
    expectInvalid(await t.api.put(approval(name), withConditions(before, [{ type: "", status: "True" }])), [
      ["status.conditions[0].type", "Required value"],
    ]);
    await expectUnchanged(CSRS, before);

    const approved = await t.api.put(approval(name), withConditions(before, [{ type: "Approved", status: "True" }]));
    expect(approved.status).toBe(200);
    expectInvalid(await t.api.put(approval(name), withConditions(approved.body, [])), [
      ["status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"'],
    ]);
    // Turning an approval into a denial is a removal too.
    expectInvalid(await t.api.put(approval(name), withConditions(approved.body, [{ type: "Denied", status: "True" }])), [
      ["status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"'],
    ]);
    await expectUnchanged(CSRS, approved.body);
  });

  it("keeps lastTransitionTime while a condition's status stays, and sets it to now when the status changes", async () => {
    const before = await created();
    const name = before.metadata.name;
    const first = await t.api.put(
      approval(name),
      withConditions(before, [
        { type: "Reviewed", status: "False", lastTransitionTime: "2020-01-01T00:00:00Z", lastUpdateTime: "2020-01-01T00:00:00Z" },
      ]),
    );
    expect(first.status, first.text).toBe(200);
    expect(first.body.status.conditions[0]).toMatchObject({
      lastTransitionTime: "2020-01-01T00:00:00Z",
      lastUpdateTime: "2020-01-01T00:00:00Z",
    });

    const same = await t.api.put(approval(name), withConditions(first.body, [{ type: "Reviewed", status: "False", message: "still" }]));
    expect(same.status).toBe(200);
    expect(same.body.status.conditions[0].lastTransitionTime).toBe("2020-01-01T00:00:00Z");
    expect(same.body.status.conditions[0].lastUpdateTime).not.toBe("2020-01-01T00:00:00Z");

    const flipped = await t.api.put(approval(name), withConditions(same.body, [{ type: "Reviewed", status: "True" }]));
    expect(flipped.status).toBe(200);
    const c = flipped.body.status.conditions[0];
    expect(c.lastTransitionTime).toMatch(RFC3339);
    expect(Math.abs(Date.parse(c.lastTransitionTime) - Date.now())).toBeLessThan(10_000);
  });

  it("takes a merge patch too", async () => {
    const before = await created();
    const r = await t.api.patch(approval(before.metadata.name), {
      status: { conditions: [{ type: "Approved", status: "True", reason: "KubectlApprove" }] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status.conditions[0]).toMatchObject({ type: "Approved", reason: "KubectlApprove" });
  });
});

describe("CertificateSigningRequest /status", () => {
  const statusOf = (name: string) => `${CSRS}/${name}/status`;
  let ca: CertificateAndKey;
  let issued: string;
  let other: string;

  beforeAll(async () => {
    ca = await createCA({ commonName: "signer-ca" });
    const { publicKeyPem } = parseCertificateRequest(Buffer.from(good, "base64").toString());
    const issue = async () =>
      (await issueCertificate({ ca, subject: { commonName: "someone" }, usages: ["client auth"], validitySeconds: 3600, publicKeyPem }))
        .certPem;
    issued = await issue();
    other = await issue();
  });

  async function approved() {
    const before = await created();
    const r = await t.api.put(`${CSRS}/${before.metadata.name}/approval`, {
      ...before,
      status: { conditions: [{ type: "Approved", status: "True" }] },
    });
    expect(r.status, r.text).toBe(200);
    return r.body;
  }

  it("sets the certificate (chain and surrounding text allowed), keeping spec and Approved as stored", async () => {
    const before = await approved();
    const certificate = b64(`issued by signer-ca\n${issued}\n${ca.certPem}trailer`);
    const body = { ...before, spec: { ...before.spec, usages: ["any"] }, status: { ...before.status, certificate } };
    body.status.conditions = [{ ...before.status.conditions[0], reason: "rewritten" }];
    const r = await t.api.put(statusOf(before.metadata.name), body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.status.certificate).toBe(certificate);
    expect(r.body.spec).toEqual(before.spec);
    expect(r.body.status.conditions).toEqual(before.status.conditions);
    expect((await t.api.get(`${CSRS}/${before.metadata.name}`)).body).toEqual(r.body);

    // Once set, the certificate is immutable; sending it again is fine.
    const again = await t.api.put(statusOf(before.metadata.name), r.body);
    expect(again.status).toBe(200);
    expectInvalid(await t.api.put(statusOf(before.metadata.name), { ...r.body, status: { ...r.body.status, certificate: b64(other) } }), [
      ["status.certificate", "Forbidden: updates may not modify existing certificate content"],
    ]);
    expectInvalid(await t.api.put(statusOf(before.metadata.name), { ...r.body, status: { ...r.body.status, certificate: "" } }), [
      ["status.certificate", "Forbidden: updates may not modify existing certificate content"],
    ]);
    await expectUnchanged(CSRS, r.body);
  });

  it("refuses a certificate that is not header-less CERTIFICATE blocks of X.509", async () => {
    const before = await approved();
    const key = (await createCertificateRequest({ commonName: "k" })).keyPem;
    const withHeader = issued.replace("-----BEGIN CERTIFICATE-----\n", "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n");
    const cases: [string, string][] = [
      [b64("no blocks here"), "must contain at least one CERTIFICATE PEM block"],
      [b64(issued + key), 'only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"'],
      [b64(withHeader), "no PEM block headers are permitted"],
      [b64(toPem("CERTIFICATE", Uint8Array.of(1, 2, 3))), "x509: malformed certificate"],
      [b64(toPem("CERTIFICATE", new Uint8Array())), "found CERTIFICATE PEM block containing 0 certificates"],
    ];
    for (const [certificate, message] of cases) {
      expectInvalid(await t.api.put(statusOf(before.metadata.name), { ...before, status: { ...before.status, certificate } }), [
        ["status.certificate", `Invalid value: "<certificate data>": ${message}`],
      ]);
    }
    const notBase64 = await t.api.put(statusOf(before.metadata.name), { ...before, status: { ...before.status, certificate: "%%%" } });
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.message).toMatch(/cannot be handled as a CertificateSigningRequest: illegal base64 data at input byte 0$/);
    await expectUnchanged(CSRS, before);
  });

  it("cannot add or remove Approved/Denied", async () => {
    const pending = await created();
    expectInvalid(
      await t.api.put(statusOf(pending.metadata.name), { ...pending, status: { conditions: [{ type: "Approved", status: "True" }] } }),
      [["status.conditions", 'Forbidden: updates may not add a condition of type "Approved"']],
    );
    await expectUnchanged(CSRS, pending);
    const before = await approved();
    expectInvalid(await t.api.put(statusOf(before.metadata.name), { ...before, status: { conditions: [] } }), [
      ["status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"'],
    ]);
    await expectUnchanged(CSRS, before);
  });

  it("adds Failed (status True only), which then cannot be removed", async () => {
    const before = await approved();
    const name = before.metadata.name;
    const failed = { type: "Failed", status: "True", reason: "SignerValidationFailure", message: "no" };
    expectInvalid(
      await t.api.put(statusOf(name), {
        ...before,
        status: { conditions: [...before.status.conditions, { ...failed, status: "Unknown" }] },
      }),
      [["status.conditions[1].status", 'Unsupported value: "Unknown": supported values: "True"']],
    );
    const r = await t.api.put(statusOf(name), { ...before, status: { conditions: [...before.status.conditions, failed] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status.conditions[1]).toMatchObject(failed);
    expect(r.body.status.conditions[1].lastTransitionTime).toMatch(RFC3339);
    expect(r.body.status.certificate).toBeUndefined();
    expectInvalid(await t.api.put(statusOf(name), { ...r.body, status: { conditions: before.status.conditions } }), [
      ["status.conditions", 'Forbidden: updates may not remove a condition of type "Failed"'],
    ]);
    await expectUnchanged(CSRS, r.body);
  });
});

describe("CertificateSigningRequest spec.signerName field selector", () => {
  it("filters list and watch", async () => {
    const signer = "select.example.com/only";
    const mine = await created(unique("selected"), { signerName: signer });
    await created(unique("not-selected"));
    const list = await t.api.get(`${CSRS}?fieldSelector=${q(`spec.signerName=${signer}`)}`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual([mine.metadata.name]);

    const watch = await t.api.watch(
      `${CSRS}?fieldSelector=${q(`spec.signerName=${signer}`)}&resourceVersion=${list.body.metadata.resourceVersion}`,
    );
    try {
      await created(unique("not-selected"));
      const next = await created(unique("selected"), { signerName: signer });
      const event = await watch.next();
      expect(event).toMatchObject({ type: "ADDED", object: { metadata: { name: next.metadata.name } } });
    } finally {
      watch.close();
    }
  });
});

describe("ClusterTrustBundle", () => {
  let ca1: string;
  let ca2: string;
  let leaf: string;

  beforeAll(async () => {
    const ca = await createCA({ commonName: "bundle-ca-1" });
    ca1 = ca.certPem;
    ca2 = (await createCA({ commonName: "bundle-ca-2" })).certPem;
    leaf = (await issueCertificate({ ca, subject: { commonName: "leaf" }, usages: ["server auth"], validitySeconds: 3600 })).certPem;
  });

  it("accepts CA certificates, with text between them", async () => {
    const name = unique("bundle");
    const r = await t.api.post(CTBS, ctb(name, `# first\n${ca1}\n# second\n${ca2}`));
    expect(r.status, r.text).toBe(201);
    expect((await t.api.get(`${CTBS}/${name}`)).body).toEqual(r.body);
  });

  it("refuses anything but distinct header-less CA certificates, and an empty bundle", async () => {
    const csrPem = (await createCertificateRequest({ commonName: "x" })).csrPem;
    const withHeader = ca1.replace("-----BEGIN CERTIFICATE-----\n", "-----BEGIN CERTIFICATE-----\nComment: hi\n");
    const cases: [string, string[]][] = [
      [`${ca1}${leaf}`, ["entry 1 does not have the CA bit set"]],
      [`${ca1}${csrPem}`, ["entry 1 has bad block type: CERTIFICATE REQUEST"]],
      [withHeader, ["entry 0 has PEM block headers"]],
      [toPem("CERTIFICATE", Uint8Array.of(1, 2, 3)), ["entry 0 does not parse as X.509"]],
      [`${leaf}${csrPem}`, ["entry 0 does not have the CA bit set", "entry 1 has bad block type: CERTIFICATE REQUEST"]],
      [`${ca1}${ca2}${ca1}`, ["duplicate trust anchor (indices [0 2])"]],
      ["", ["at least one trust anchor must be provided"]],
      ["just some text", ["at least one trust anchor must be provided"]],
    ];
    for (const [bundle, messages] of cases) {
      const name = unique("bad-bundle");
      expectInvalid(
        await t.api.post(CTBS, ctb(name, bundle)),
        messages.map((m) => ["spec.trustBundle", `Invalid value: "<value omitted>": ${m}`]),
      );
      await expectAbsent(CTBS, name);
    }
    const name = unique("huge-bundle");
    expectInvalid(await t.api.post(CTBS, ctb(name, `${ca1}${"#".repeat(1024 * 1024)}`)), [
      ["spec.trustBundle", "Too long: may not be more than 1048576 bytes"],
    ]);
    await expectAbsent(CTBS, name);
  });

  it("names a signer's bundle <signer with : for />:<suffix>, and others without a colon", async () => {
    const cases: [string, string | undefined, string][] = [
      ["wrong-name", custom, "ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:"],
      [
        "example.com:signer:Upper",
        custom,
        `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
      ["example.com:signer:x", undefined, 'ClusterTrustBundle without signer name must not have ":" in its name'],
    ];
    for (const [name, signerName, message] of cases) {
      expectInvalid(await t.api.post(CTBS, ctb(name, ca1, signerName)), [["metadata.name", `Invalid value: "${name}": ${message}`]]);
      await expectAbsent(CTBS, name);
    }
    expect((await t.api.post(CTBS, ctb("example.com:signer:good", ca1, custom))).status).toBe(201);
  });

  it("requires a qualified signerName when one is set", async () => {
    const name = "signer:x";
    expectInvalid(await t.api.post(CTBS, ctb(name, ca1, "signer")), [
      ["spec.signerName", `Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name'`],
    ]);
    await expectAbsent(CTBS, name);
  });

  it("keeps signerName immutable and checks a changed trustBundle", async () => {
    const name = "example.com:signer:immutable";
    const created = await t.api.post(CTBS, ctb(name, ca1, custom));
    expect(created.status, created.text).toBe(201);
    const before = created.body;

    const moved = structuredClone(before);
    moved.spec.signerName = "example.com/other";
    const r = await t.api.put(`${CTBS}/${name}`, moved);
    expect(r.status).toBe(422);
    // The name no longer fits the new signer either.
    expect(r.body.details.causes.map((c: any) => [c.field, c.message])).toEqual([
      [
        "metadata.name",
        `Invalid value: "${name}": ClusterTrustBundle for signerName example.com/other must be named with prefix example.com:other:`,
      ],
      ["spec.signerName", 'Invalid value: "example.com/other": field is immutable'],
    ]);
    expectInvalid(await t.api.patch(`${CTBS}/${name}`, { spec: { trustBundle: leaf } }), [
      ["spec.trustBundle", 'Invalid value: "<value omitted>": entry 0 does not have the CA bit set'],
    ]);
    await expectUnchanged(CTBS, before);

    const relabelled = await t.api.patch(`${CTBS}/${name}`, { metadata: { labels: { a: "b" } } });
    expect(relabelled.status).toBe(200);
    const rotated = await t.api.patch(`${CTBS}/${name}`, { spec: { trustBundle: `${ca1}${ca2}` } });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.spec.trustBundle).toBe(`${ca1}${ca2}`);
  });

  it("filters by spec.signerName", async () => {
    const signer = "bundles.example.com/filtered";
    expect((await t.api.post(CTBS, ctb("bundles.example.com:filtered:a", ca1, signer))).status).toBe(201);
    expect((await t.api.post(CTBS, ctb(unique("unsigned"), ca1))).status).toBe(201);
    const r = await t.api.get(`${CTBS}?fieldSelector=${q(`spec.signerName=${signer}`)}`);
    expect(r.body.items.map((i: any) => i.metadata.name)).toEqual(["bundles.example.com:filtered:a"]);
  });
});
