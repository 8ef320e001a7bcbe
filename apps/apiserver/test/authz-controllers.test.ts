// The built-in controller apps' identities: a client certificate and kubeconfig per app, written at
// first start, each bound to a role with exactly what the app needs (allowed and denied cases).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { caCertPem, csrRequest } from "./certificate-fixtures.js";
import { Client, useTestServer } from "./harness.js";

const t = useTestServer();

const CERTS = "certificates.orch.io";
const CSRS = `/apis/${CERTS}/v1/certificatesigningrequests`;
const LEASES = "/apis/coordination.orch.io/v1/namespaces/default/leases";

/** A client with the credentials of the app's kubeconfig, as the app would load them. */
function controller(app: string): Client {
  const config = parseYaml(readFileSync(join(t.dataDir, "controllers", `${app}.kubeconfig`), "utf8"));
  const user = config.users[0].user;
  const cluster = config.clusters[0].cluster;
  expect(cluster.server).toBe(t.server.url);
  const pem = (b64: string) => Buffer.from(b64, "base64").toString("utf8");
  return new Client(t.server.url, {
    ca: pem(cluster["certificate-authority-data"]),
    cert: pem(user["client-certificate-data"]),
    key: pem(user["client-key-data"]),
  });
}

const lease = (name: string) => ({
  apiVersion: "coordination.orch.io/v1",
  kind: "Lease",
  metadata: { name },
  spec: { holderIdentity: name },
});

async function csr(signerName: string, usages = ["digital signature", "client auth"]) {
  const r = await t.api.post(CSRS, {
    apiVersion: `${CERTS}/v1`,
    kind: "CertificateSigningRequest",
    metadata: { generateName: "c-" },
    spec: { request: csrRequest, signerName, usages },
  });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

describe("controller identities", () => {
  it("gives each app its own user, not system:masters", async () => {
    for (const app of ["csr-approver", "csr-signer", "crd-controller", "deployment-controller", "scheduler"]) {
      const r = await controller(app).post("/apis/authentication.orch.io/v1/selfsubjectreviews", {
        apiVersion: "authentication.orch.io/v1",
        kind: "SelfSubjectReview",
      });
      expect(r.body.status.userInfo).toEqual({ username: `system:orch:${app}`, groups: ["system:authenticated"] });
    }
  });

  it("lets each app hold its own leader-election lease and no other", async () => {
    const approver = controller("csr-approver");
    expect((await approver.post(LEASES, lease("csr-approver"))).status).toBe(201);
    const own = await approver.get(`${LEASES}/csr-approver`);
    expect(own.status).toBe(200);
    expect((await approver.put(`${LEASES}/csr-approver`, own.body)).status).toBe(200);
    expect((await approver.get(`${LEASES}/csr-signer`)).body.message).toBe(
      'leases.coordination.orch.io "csr-signer" is forbidden: User "system:orch:csr-approver" cannot get resource "leases" in API group "coordination.orch.io" in the namespace "default"',
    );
    expect((await approver.delete(`${LEASES}/csr-approver`)).status).toBe(403);
  });

  it("csr-approver reads requests and approves only the node client signer", async () => {
    const approver = controller("csr-approver");
    expect((await approver.get(CSRS)).status).toBe(200);
    const custom = await csr("example.com/custom");
    const approve = (obj: any) => ({
      ...obj,
      status: { conditions: [{ type: "Approved", status: "True", reason: "AutoApproved", message: "ok" }] },
    });
    const denied = await approver.put(`${CSRS}/${custom.metadata.name}/approval`, approve(custom));
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('user not permitted to approve requests with signerName "example.com/custom"');
    expect((await approver.put(`${CSRS}/${custom.metadata.name}/status`, custom)).status).toBe(403);
    const review = await approver.post("/apis/authorization.orch.io/v1/subjectaccessreviews", {
      apiVersion: "authorization.orch.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "someone",
        resourceAttributes: { group: CERTS, resource: "certificatesigningrequests", subresource: "nodeclient", verb: "create" },
      },
    });
    expect(review.status).toBe(201);
    expect((await approver.get("/api/v1/secrets")).status).toBe(403);
  });

  it("csr-signer writes certificates of the well-known signers only", async () => {
    const signer = controller("csr-signer");
    expect((await signer.get(`${CSRS}?watch=true&timeoutSeconds=1`)).status).toBe(200);
    const custom = await csr("example.com/custom");
    const withCert = { ...custom, status: { certificate: Buffer.from(caCertPem).toString("base64") } };
    expect((await signer.put(`${CSRS}/${custom.metadata.name}/status`, withCert)).body.message).toContain(
      'user not permitted to sign requests with signerName "example.com/custom"',
    );
    expect((await signer.put(`${CSRS}/${custom.metadata.name}/approval`, custom)).status).toBe(403);
    expect((await signer.delete(`${CSRS}/${custom.metadata.name}`)).status).toBe(403);
    const reviews = await signer.post("/apis/authorization.orch.io/v1/selfsubjectaccessreviews", {
      apiVersion: "authorization.orch.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { group: CERTS, resource: "signers", verb: "sign", name: "orch.io/orch-apiserver-client" } },
    });
    expect(reviews.body.status.allowed).toBe(true);
  });

  it("crd-controller manages definitions and cleans up instances of any group, and nothing else", async () => {
    const crds = controller("crd-controller");
    expect((await crds.get("/apis/apiextensions.orch.io/v1/customresourcedefinitions")).status).toBe(200);
    const can = async (verb: string, group: string, resource: string, subresource = "") =>
      (
        await crds.post("/apis/authorization.orch.io/v1/selfsubjectaccessreviews", {
          apiVersion: "authorization.orch.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: { resourceAttributes: { verb, group, resource, subresource, namespace: "x" } },
        })
      ).body.status.allowed;
    expect(await can("update", "apiextensions.orch.io", "customresourcedefinitions", "status")).toBe(true);
    expect(await can("deletecollection", "stable.example.com", "crontabs")).toBe(true);
    expect(await can("create", "stable.example.com", "crontabs")).toBe(false);
    // RBAC cannot say "custom resources only": the clean-up rule covers any group, but only list and delete.
    expect(await can("create", "apiextensions.orch.io", "customresourcedefinitions")).toBe(false);
    expect(await can("get", "", "secrets")).toBe(false);
    expect(await can("update", "stable.example.com", "crontabs")).toBe(false);
  });

  it("deployment-controller manages replica sets and pods, and may not read secrets", async () => {
    const deployments = controller("deployment-controller");
    expect((await deployments.get("/apis/apps/v1/deployments")).status).toBe(200);
    expect((await deployments.get("/api/v1/pods")).status).toBe(200);
    expect((await deployments.get("/api/v1/replicationcontrollers")).status).toBe(200);
    const rs = await deployments.post("/apis/apps/v1/namespaces/default/replicasets", {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web-1" },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
      },
    });
    expect(rs.status, rs.text).toBe(201);
    expect((await deployments.delete("/apis/apps/v1/namespaces/default/replicasets/web-1")).status).toBe(200);
    expect((await deployments.post("/apis/apps/v1/namespaces/default/deployments", {})).status).toBe(403);
    expect((await deployments.get("/api/v1/namespaces/default/secrets")).status).toBe(403);
  });

  it("deployment-controller writes a Deployment's status and its revision annotation through /status, as the app does", async () => {
    const created = await t.api.post("/apis/apps/v1/namespaces/default/deployments", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "rev" },
      spec: {
        selector: { matchLabels: { app: "rev" } },
        template: { metadata: { labels: { app: "rev" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
      },
    });
    expect(created.status, created.text).toBe(201);
    const deployments = controller("deployment-controller");
    const path = "/apis/apps/v1/namespaces/default/deployments/rev/status";
    const patched = await deployments.patch(path, { metadata: { annotations: { "deployment.kubernetes.io/revision": "1" } } });
    expect(patched.status, patched.text).toBe(200);
    const status = { ...patched.body, status: { observedGeneration: 1 } };
    expect((await deployments.put(path, status)).status).toBe(200);
  });

  it("scheduler reads nodes and pods, binds pods, writes their status, deletes them; nothing else", async () => {
    const scheduler = controller("scheduler");
    const pods = "/api/v1/namespaces/default/pods";
    expect((await scheduler.get("/api/v1/nodes")).status).toBe(200);
    expect((await scheduler.get("/api/v1/pods")).status).toBe(200);
    const pod = await t.api.post(pods, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "to-bind" },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
    expect(pod.status, pod.text).toBe(201);
    const status = await scheduler.patch(`${pods}/to-bind/status`, { status: { nominatedNodeName: "n1" } });
    expect(status.status, status.text).toBe(200);
    const bound = await scheduler.post(`${pods}/to-bind/binding`, {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "to-bind" },
      target: { kind: "Node", name: "n1" },
    });
    expect(bound.status, bound.text).toBe(201);
    expect((await scheduler.post(pods, pod.body)).status).toBe(403);
    expect((await scheduler.patch(`${pods}/to-bind`, { metadata: { labels: { a: "b" } } })).status).toBe(403);
    expect((await scheduler.patch("/api/v1/nodes/n1", { spec: { unschedulable: true } })).status).toBe(403);
    expect((await scheduler.get("/api/v1/namespaces/default/secrets")).status).toBe(403);
    expect((await scheduler.delete(`${pods}/to-bind`)).status).toBe(200);
  });
});
