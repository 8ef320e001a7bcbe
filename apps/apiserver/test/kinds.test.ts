// Every built-in kind goes through the same generic store: create, get, list, update, patch and
// delete work for each with a minimal valid object.
import { eventually } from "@orch/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { caCertPem, csrRequest } from "./certificate-fixtures.js";
import { deployment, freshNamespace, secret, useTestServer } from "./harness.js";

const t = useTestServer();
let ns: string;
beforeAll(async () => {
  ns = await freshNamespace(t.api, "kinds");
});

const podSpec = { containers: [{ name: "c", image: "nginx" }] };
const template = { metadata: { labels: { app: "k" } }, spec: podSpec };

interface Case {
  kind: string;
  /** The collection path; `NS` is replaced by the test namespace. */
  path: string;
  body: (name: string) => Record<string, unknown>;
  /** What DELETE answers: the object, or a Status. */
  deleteReturns: "object" | "Status";
  name?: string;
  /** Deletion waits for a controller's finalizer, which the test removes as that controller would. */
  heldByController?: boolean;
}

const cases: Case[] = [
  { kind: "Namespace", path: "/api/v1/namespaces", body: (name) => ({ metadata: { name } }), deleteReturns: "object" },
  { kind: "Secret", path: "/api/v1/namespaces/NS/secrets", body: (name) => secret(name), deleteReturns: "Status" },
  {
    kind: "ServiceAccount",
    path: "/api/v1/namespaces/NS/serviceaccounts",
    body: (name) => ({ metadata: { name } }),
    deleteReturns: "object",
  },
  { kind: "Pod", path: "/api/v1/namespaces/NS/pods", body: (name) => ({ metadata: { name }, spec: podSpec }), deleteReturns: "object" },
  {
    kind: "PodTemplate",
    path: "/api/v1/namespaces/NS/podtemplates",
    body: (name) => ({ metadata: { name }, template }),
    deleteReturns: "object",
  },
  {
    kind: "ReplicationController",
    path: "/api/v1/namespaces/NS/replicationcontrollers",
    body: (name) => ({ metadata: { name }, spec: { replicas: 1, selector: { app: "k" }, template } }),
    deleteReturns: "Status",
  },
  { kind: "Deployment", path: "/apis/apps/v1/namespaces/NS/deployments", body: (name) => deployment(name), deleteReturns: "Status" },
  {
    kind: "ReplicaSet",
    path: "/apis/apps/v1/namespaces/NS/replicasets",
    body: (name) => ({ metadata: { name }, spec: { replicas: 1, selector: { matchLabels: { app: "k" } }, template } }),
    deleteReturns: "Status",
  },
  {
    kind: "Service",
    path: "/api/v1/namespaces/NS/services",
    body: (name) => ({ metadata: { name }, spec: { selector: { app: "k" }, ports: [{ port: 80 }] } }),
    deleteReturns: "object",
  },
  {
    kind: "Endpoints",
    path: "/api/v1/namespaces/NS/endpoints",
    body: (name) => ({ metadata: { name }, subsets: [{ addresses: [{ ip: "10.1.2.3" }], ports: [{ port: 80 }] }] }),
    deleteReturns: "Status",
  },
  {
    kind: "EndpointSlice",
    path: "/apis/discovery.orch.io/v1/namespaces/NS/endpointslices",
    body: (name) => ({ metadata: { name }, addressType: "IPv4", endpoints: [{ addresses: ["10.1.2.3"] }], ports: [{ port: 80 }] }),
    deleteReturns: "Status",
  },
  {
    kind: "CertificateSigningRequest",
    path: "/apis/certificates.orch.io/v1/certificatesigningrequests",
    body: (name) => ({
      metadata: { name },
      spec: {
        request: csrRequest,
        signerName: "example.com/signer",
        usages: ["client auth"],
      },
    }),
    deleteReturns: "Status",
  },
  {
    kind: "ClusterTrustBundle",
    path: "/apis/certificates.orch.io/v1beta1/clustertrustbundles",
    body: (name) => ({ metadata: { name }, spec: { trustBundle: caCertPem } }),
    deleteReturns: "Status",
  },
  {
    kind: "DeviceClass",
    path: "/apis/resource.orch.io/v1/deviceclasses",
    body: (name) => ({ metadata: { name }, spec: {} }),
    deleteReturns: "object",
  },
  {
    kind: "PriorityClass",
    path: "/apis/scheduling.orch.io/v1/priorityclasses",
    body: (name) => ({ metadata: { name }, value: 1000 }),
    deleteReturns: "Status",
  },
  {
    kind: "CustomResourceDefinition",
    path: "/apis/apiextensions.orch.io/v1/customresourcedefinitions",
    name: "widgets.example.com",
    body: (name) => ({
      metadata: { name },
      spec: {
        group: "example.com",
        names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
        scope: "Namespaced",
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }],
      },
    }),
    // Held by the clean-up finalizer until the crd-controller has deleted the instances.
    deleteReturns: "object",
    heldByController: true,
  },
];

describe.each(cases)("$kind", (c) => {
  it("create, get, list, update, patch, delete", async () => {
    const path = c.path.replace("NS", ns);
    const name = c.name ?? `k-${c.kind.toLowerCase()}`;
    const group = path.startsWith("/apis/") ? path.split("/")[2] : "";

    const created = await t.api.post(path, c.body(name));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.kind).toBe(c.kind);
    expect(created.body.metadata.name).toBe(name);

    const got = await t.api.get(`${path}/${name}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const list = await t.api.get(path);
    expect(list.status).toBe(200);
    expect(list.body.kind).toBe(`${c.kind}List`);
    expect(list.body.items.map((i: any) => i.metadata.name)).toContain(name);

    const changed = structuredClone(got.body);
    changed.metadata.labels = { ...changed.metadata.labels, updated: "yes" };
    const updated = await t.api.put(`${path}/${name}`, changed);
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.metadata.labels.updated).toBe("yes");
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.body.metadata.resourceVersion));

    const patched = await t.api.patch(`${path}/${name}`, { metadata: { annotations: { patched: "yes" } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.metadata.annotations.patched).toBe("yes");
    expect(patched.body.metadata.labels.updated).toBe("yes");

    const deleted = await t.api.delete(`${path}/${name}`);
    expect(deleted.status).toBe(200);
    if (c.deleteReturns === "Status") {
      expect(deleted.body).toMatchObject({
        kind: "Status",
        status: "Success",
        details: { name, kind: path.split("/").pop(), uid: created.body.metadata.uid, ...(group ? { group } : {}) },
      });
    } else {
      expect(deleted.body.kind).toBe(c.kind);
      expect(deleted.body.metadata.uid).toBe(created.body.metadata.uid);
    }
    if (c.heldByController) {
      expect(deleted.body.metadata.finalizers).toHaveLength(1);
      expect((await t.api.patch(`${path}/${name}`, { metadata: { finalizers: null } })).status).toBe(200);
    }
    // A namespace goes through Terminating; it is gone once emptied.
    await eventually(`${name} to be gone`, async () => (await t.api.get(`${path}/${name}`)).status !== 200);
    expect((await t.api.get(`${path}/${name}`)).status).toBe(404);
  });
});
