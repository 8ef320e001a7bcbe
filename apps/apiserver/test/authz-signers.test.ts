// Signer permissions (spec 2.6 rule 1, section 5): `attest` for a ClusterTrustBundle of a signer,
// `approve` to approve or deny a CertificateSigningRequest, `sign` to write its certificate, each on
// resource `signers` named by the signer or by `<domain>/*`, with Kubernetes' admission messages.
import { describe, expect, it } from "vitest";
import { b64, caCertPem, csrRequest } from "./certificate-fixtures.js";
import { useTestServer } from "./harness.js";

const t = useTestServer({ tokens: ["carol-token,carol,u-carol"] });

const CERTS = "certificates.orch.io";
const RBAC = "rbac.authorization.orch.io";
const CSRS = `/apis/${CERTS}/v1/certificatesigningrequests`;
const CTBS = `/apis/${CERTS}/v1beta1/clustertrustbundles`;
const carol = () => t.api.withToken("carol-token");
let counter = 0;

/** Gives carol a fresh ClusterRole with `rules` (on top of whatever she had). */
async function grantCarol(rules: unknown[]): Promise<void> {
  const name = `carol-${++counter}`;
  const role = await t.api.post(`/apis/${RBAC}/v1/clusterroles`, {
    apiVersion: `${RBAC}/v1`,
    kind: "ClusterRole",
    metadata: { name },
    rules,
  });
  expect(role.status, role.text).toBe(201);
  const binding = await t.api.post(`/apis/${RBAC}/v1/clusterrolebindings`, {
    apiVersion: `${RBAC}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name },
    subjects: [{ kind: "User", apiGroup: RBAC, name: "carol" }],
  });
  expect(binding.status, binding.text).toBe(201);
}

const signers = (verb: string, ...resourceNames: string[]) => ({
  apiGroups: [CERTS],
  resources: ["signers"],
  verbs: [verb],
  resourceNames,
});

async function csr(signerName: string): Promise<any> {
  const r = await t.api.post(CSRS, {
    apiVersion: `${CERTS}/v1`,
    kind: "CertificateSigningRequest",
    metadata: { generateName: "req-" },
    spec: { request: csrRequest, signerName, usages: ["digital signature", "client auth"] },
  });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

const approved = (obj: any) => ({
  ...obj,
  status: { conditions: [{ type: "Approved", status: "True", reason: "Test", message: "ok" }] },
});

describe("approve", () => {
  it("needs `approve` on the signer, by name or by domain wildcard", async () => {
    await grantCarol([{ apiGroups: [CERTS], resources: ["certificatesigningrequests/approval"], verbs: ["update"] }]);
    const one = await csr("example.com/approve-one");
    const denied = await carol().put(`${CSRS}/${one.metadata.name}/approval`, approved(one));
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      reason: "Forbidden",
      message: `certificatesigningrequests.${CERTS} "${one.metadata.name}" is forbidden: user not permitted to approve requests with signerName "example.com/approve-one"`,
      details: { name: one.metadata.name, group: CERTS, kind: "certificatesigningrequests" },
    });
    await grantCarol([signers("approve", "example.com/approve-one")]);
    expect((await carol().put(`${CSRS}/${one.metadata.name}/approval`, approved(one))).status).toBe(200);

    const other = await csr("other.org/any");
    expect((await carol().put(`${CSRS}/${other.metadata.name}/approval`, approved(other))).status).toBe(403);
    await grantCarol([signers("approve", "other.org/*")]);
    expect((await carol().put(`${CSRS}/${other.metadata.name}/approval`, approved(other))).status).toBe(200);
  });
});

describe("sign", () => {
  it("needs `sign` on the signer to write the certificate, not to write other status", async () => {
    await grantCarol([{ apiGroups: [CERTS], resources: ["certificatesigningrequests/status"], verbs: ["update"] }]);
    const req = await csr("example.com/sign-one");
    const current = (await t.api.put(`${CSRS}/${req.metadata.name}/approval`, approved(req))).body;
    const failed = {
      ...current,
      status: {
        ...current.status,
        conditions: [...current.status.conditions, { type: "Failed", status: "True", reason: "NoKey", message: "x" }],
      },
    };
    // A condition is not a certificate: no `sign` needed.
    const noted = await carol().put(`${CSRS}/${req.metadata.name}/status`, failed);
    expect(noted.status, noted.text).toBe(200);

    const other = await csr("example.com/sign-two");
    const ready = (await t.api.put(`${CSRS}/${other.metadata.name}/approval`, approved(other))).body;
    const issued = { ...ready, status: { ...ready.status, certificate: b64(caCertPem) } };
    const denied = await carol().put(`${CSRS}/${other.metadata.name}/status`, issued);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      `certificatesigningrequests.${CERTS} "${other.metadata.name}" is forbidden: user not permitted to sign requests with signerName "example.com/sign-two"`,
    );
    await grantCarol([signers("sign", "example.com/*")]);
    expect((await carol().put(`${CSRS}/${other.metadata.name}/status`, issued)).status).toBe(200);
  });
});

describe("attest", () => {
  const bundle = (name: string, signerName?: string) => ({
    apiVersion: `${CERTS}/v1beta1`,
    kind: "ClusterTrustBundle",
    metadata: { name },
    spec: { ...(signerName ? { signerName } : {}), trustBundle: caCertPem },
  });

  it("needs `attest` on the signer to create or update a bundle with a signerName, nothing without one", async () => {
    await grantCarol([{ apiGroups: [CERTS], resources: ["clustertrustbundles"], verbs: ["create", "update", "get"] }]);
    expect((await carol().post(CTBS, bundle("plain-bundle"))).status).toBe(201);
    const denied = await carol().post(CTBS, bundle("example.com:attest:one", "example.com/attest"));
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      message: `clustertrustbundles.${CERTS} "example.com:attest:one" is forbidden: user not permitted to attest for signerName "example.com/attest"`,
      details: { name: "example.com:attest:one", group: CERTS, kind: "clustertrustbundles" },
    });
    // An administrator's bundle cannot be changed by carol either.
    const byAdmin = await t.api.post(CTBS, bundle("example.com:attest:admin", "example.com/attest"));
    expect(byAdmin.status).toBe(201);
    const relabelled = { ...byAdmin.body, metadata: { ...byAdmin.body.metadata, labels: { a: "b" } } };
    expect((await carol().put(`${CTBS}/example.com:attest:admin`, relabelled)).status).toBe(403);

    await grantCarol([signers("attest", "example.com/attest")]);
    expect((await carol().post(CTBS, bundle("example.com:attest:one", "example.com/attest"))).status).toBe(201);
    expect((await carol().put(`${CTBS}/example.com:attest:admin`, relabelled)).status).toBe(200);
  });

  it("lets every authenticated user read trust bundles", async () => {
    expect((await t.api.withToken("carol-token").get(CTBS)).status).toBe(200);
  });
});
