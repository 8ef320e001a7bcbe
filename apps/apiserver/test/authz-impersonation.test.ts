// Impersonation over real HTTPS: each Impersonate-* header needs the `impersonate` verb on users,
// groups, serviceaccounts, uids or userextras/<key>; the request then acts as (and is authorized as)
// the impersonated user, and SelfSubjectReview shows that user.
import { describe, expect, it } from "vitest";
import { freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer({ tokens: ["alice-token,alice,u-alice"] });

const RBAC = "rbac.authorization.orch.io";
const AUTHN = "authentication.orch.io";
const alice = () => t.api.withToken("alice-token");
const whoami = (headers: Record<string, string>, client = alice()) =>
  client.post(`/apis/${AUTHN}/v1/selfsubjectreviews`, { apiVersion: `${AUTHN}/v1`, kind: "SelfSubjectReview" }, { headers });
let counter = 0;

async function grantAlice(rules: unknown[], namespace?: string): Promise<void> {
  const name = `alice-imp-${++counter}`;
  const base = namespace ? `/apis/${RBAC}/v1/namespaces/${namespace}` : `/apis/${RBAC}/v1`;
  const kind = namespace ? "Role" : "ClusterRole";
  expect((await t.api.post(`${base}/${kind.toLowerCase()}s`, { apiVersion: `${RBAC}/v1`, kind, metadata: { name }, rules })).status).toBe(
    201,
  );
  const binding = {
    apiVersion: `${RBAC}/v1`,
    kind: `${kind}Binding`,
    metadata: { name },
    roleRef: { apiGroup: RBAC, kind, name },
    subjects: [{ kind: "User", apiGroup: RBAC, name: "alice" }],
  };
  expect((await t.api.post(`${base}/${kind.toLowerCase()}bindings`, binding)).status).toBe(201);
}

describe("impersonation", () => {
  it("refuses a user without `impersonate`, with Kubernetes' 403", async () => {
    const r = await whoami({ "Impersonate-User": "bob" });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      reason: "Forbidden",
      message: 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      details: { name: "bob", kind: "users" },
    });
  });

  it("acts as the user, with system:authenticated, once allowed; and authorizes the request as that user", async () => {
    await grantAlice([{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["bob"] }]);
    const r = await whoami({ "Impersonate-User": "bob" });
    expect(r.status).toBe(201);
    expect(r.body.status.userInfo).toEqual({ username: "bob", groups: ["system:authenticated"] });
    expect((await whoami({ "Impersonate-User": "carol" })).status).toBe(403);
    const list = await alice().get("/api/v1/namespaces/default/pods", { headers: { "Impersonate-User": "bob" } });
    expect(list.body.message).toBe('pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"');
  });

  it("checks each group, and takes the groups given as the whole list", async () => {
    await grantAlice([{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["dave"] }]);
    const denied = await whoami({ "Impersonate-User": "dave", "Impersonate-Group": "ops" });
    expect(denied.body.message).toBe(
      'groups "ops" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    await grantAlice([{ apiGroups: [""], resources: ["groups"], verbs: ["impersonate"] }]);
    const client = alice();
    // Two Impersonate-Group headers: two groups.
    const r = await client.request("POST", `/apis/${AUTHN}/v1/selfsubjectreviews`, {
      body: { apiVersion: `${AUTHN}/v1`, kind: "SelfSubjectReview" },
      headers: { "Impersonate-User": "dave", "Impersonate-Group": ["ops", "devs"] as unknown as string },
    });
    expect(r.body.status.userInfo).toEqual({ username: "dave", groups: ["ops", "devs", "system:authenticated"] });
  });

  it("impersonates a service account in its namespace, with its groups", async () => {
    const ns = await freshNamespace(t.api);
    const sa = `system:serviceaccount:${ns}:robot`;
    const denied = await whoami({ "Impersonate-User": sa });
    expect(denied.body.message).toBe(
      `serviceaccounts "robot" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${ns}"`,
    );
    await grantAlice([{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] }], ns);
    const r = await whoami({ "Impersonate-User": sa });
    expect(r.body.status.userInfo).toEqual({
      username: sa,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
    });
  });

  it("sets extra keys (lowercase, unescaped) and the uid, each checked in the authentication group", async () => {
    await grantAlice([{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["erin"] }]);
    const headers = { "Impersonate-User": "erin", "Impersonate-Extra-Scopes": "read", "Impersonate-Extra-Example.com%2FTeam": "blue" };
    const denied = await whoami(headers);
    expect(denied.body.message).toMatch(
      /^userextras\.authentication\.orch\.io "(read|blue)" is forbidden: User "alice" cannot impersonate resource "userextras\/(scopes|example\.com\/team)" in API group "authentication\.orch\.io" at the cluster scope$/,
    );
    await grantAlice([
      { apiGroups: [AUTHN], resources: ["userextras/scopes", "userextras/example.com/team", "uids"], verbs: ["impersonate"] },
    ]);
    const r = await whoami({ ...headers, "Impersonate-Uid": "u-42" });
    expect(r.status, r.text).toBe(201);
    expect(r.body.status.userInfo).toEqual({
      username: "erin",
      uid: "u-42",
      groups: ["system:authenticated"],
      extra: { scopes: ["read"], "example.com/team": ["blue"] },
    });
  });

  it("refuses groups, extras or a uid without a user (500, as Kubernetes)", async () => {
    const r = await whoami({ "Impersonate-Group": "ops" }, t.api);
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({
      reason: "InternalError",
      message: "Internal error occurred: requested [{Group  ops    }] without impersonating a user",
    });
  });

  it("lets the admin impersonate anyone", async () => {
    const r = await whoami({ "Impersonate-User": "zed", "Impersonate-Group": "system:masters" }, t.api);
    expect(r.body.status.userInfo).toEqual({ username: "zed", groups: ["system:masters", "system:authenticated"] });
  });
});
