// The namespaces and service accounts a cluster has without anyone creating them: the system namespaces
// from the first start, and a `default` ServiceAccount in every namespace (Kubernetes'
// serviceaccounts-controller), so that a token can be requested for it in a namespace just made.
import { eventually } from "@orch/testing";
import { expect, it } from "vitest";
import { freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();
const defaultAccount = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`;

it("starts with default and the system namespaces of the profile", async () => {
  const names = (await t.api.get("/api/v1/namespaces")).body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
  expect(names).toEqual(expect.arrayContaining(["default", "orch-system", "orch-public", "orch-node-lease"]));
});

it("gives every namespace a default ServiceAccount, and gives it back when it is deleted", async () => {
  const ns = await freshNamespace(t.api);
  const first = await eventually("the default ServiceAccount", async () => {
    const r = await t.api.get(defaultAccount(ns));
    return r.status === 200 && r.body;
  });
  const token = await t.api.post(`${defaultAccount(ns)}/token`, {
    apiVersion: "authentication.orch.io/v1",
    kind: "TokenRequest",
    spec: {},
  });
  expect(token.status).toBe(201);
  expect(token.body.status.token).toMatch(/^ey/);

  expect((await t.api.delete(defaultAccount(ns))).status).toBe(200);
  const second = await eventually("the default ServiceAccount again", async () => {
    const r = await t.api.get(defaultAccount(ns));
    return r.status === 200 && r.body;
  });
  expect(second.metadata.uid).not.toBe(first.metadata.uid);
});

it("leaves a terminating namespace without one", async () => {
  const ns = await freshNamespace(t.api);
  await eventually("the default ServiceAccount", async () => (await t.api.get(defaultAccount(ns))).status === 200);
  expect((await t.api.delete(`/api/v1/namespaces/${ns}`)).status).toBe(200);
  // The namespace finalizer empties the namespace, the account included, and the namespace goes.
  await eventually("the namespace gone", async () => (await t.api.get(`/api/v1/namespaces/${ns}`)).status === 404, { timeoutMs: 15_000 });
  expect((await t.api.get(defaultAccount(ns))).status).toBe(404);
});
