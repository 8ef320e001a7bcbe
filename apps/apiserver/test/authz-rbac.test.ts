// RBAC over real HTTPS: the four kinds' validation, Kubernetes' 403 for every kind of request,
// grants through bindings, escalation prevention, aggregation, the bootstrap policy, and the access
// reviews `kubectl auth can-i` asks.
import { describe, expect, it } from "vitest";
import { type Client, freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer({ tokens: ["alice-token,alice,u-alice", 'bob-token,bob,u-bob,"devs"'] });

const RBAC = "rbac.authorization.orch.io";
const AUTHZ = "authorization.orch.io";
const alice = () => t.api.withToken("alice-token");
const bob = () => t.api.withToken("bob-token");
const roles = (ns: string) => `/apis/${RBAC}/v1/namespaces/${ns}/roles`;
const roleBindings = (ns: string) => `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`;
const clusterRoles = `/apis/${RBAC}/v1/clusterroles`;
const clusterRoleBindings = `/apis/${RBAC}/v1/clusterrolebindings`;

const role = (name: string, rules: unknown[]) => ({ apiVersion: `${RBAC}/v1`, kind: "Role", metadata: { name }, rules });
const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: `${RBAC}/v1`,
  kind: "ClusterRole",
  metadata: { name },
  rules,
  ...extra,
});
const binding = (
  kind: "RoleBinding" | "ClusterRoleBinding",
  name: string,
  roleRef: { kind: string; name: string },
  subjects: unknown[],
) => ({
  apiVersion: `${RBAC}/v1`,
  kind,
  metadata: { name },
  roleRef: { apiGroup: RBAC, ...roleRef },
  subjects,
});
const userSubject = (name: string) => ({ kind: "User", apiGroup: RBAC, name });

async function created(client: Client, path: string, body: unknown) {
  const r = await client.post(path, body);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** A namespace where alice holds exactly `rules`. */
async function grantAlice(rules: unknown[]): Promise<string> {
  const ns = await freshNamespace(t.api);
  await created(t.api, roles(ns), role("alice", rules));
  await created(t.api, roleBindings(ns), binding("RoleBinding", "alice", { kind: "Role", name: "alice" }, [userSubject("alice")]));
  return ns;
}

describe("denials", () => {
  it("answers a namespaced request nobody allows with Kubernetes' 403", async () => {
    const r = await alice().get("/api/v1/namespaces/default/pods");
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Forbidden",
      code: 403,
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
      details: { kind: "pods" },
    });
  });

  it("names the object, the group, the subresource and the cluster scope", async () => {
    const get = await alice().get(`/apis/${RBAC}/v1/clusterroles/admin`);
    expect(get.body.message).toBe(
      `clusterroles.${RBAC} "admin" is forbidden: User "alice" cannot get resource "clusterroles" in API group "${RBAC}" at the cluster scope`,
    );
    expect(get.body.details).toEqual({ name: "admin", group: RBAC, kind: "clusterroles" });
    const status = await alice().put("/apis/apps/v1/namespaces/default/deployments/web/status", {});
    expect(status.body.message).toBe(
      'deployments.apps "web" is forbidden: User "alice" cannot update resource "deployments/status" in API group "apps" in the namespace "default"',
    );
    const watch = await alice().get("/api/v1/secrets?watch=true");
    expect(watch.body.message).toBe(
      'secrets is forbidden: User "alice" cannot watch resource "secrets" in API group "" at the cluster scope',
    );
  });

  it("answers a path nobody allows with the non-resource message", async () => {
    const r = await alice().get("/metrics");
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ reason: "Forbidden", message: 'forbidden: User "alice" cannot get path "/metrics"', details: {} });
    const post = await alice().post("/version", {});
    expect(post.body.message).toBe('forbidden: User "alice" cannot post path "/version"');
  });

  it("leaves health public and lets every authenticated user discover the API", async () => {
    expect((await t.api.anonymous().get("/healthz")).status).toBe(200);
    for (const path of ["/version", "/api", "/apis", "/api/v1", "/apis/apps/v1", "/openapi/v3"]) {
      expect((await alice().get(path)).status, path).toBe(200);
    }
  });

  it("says which role a binding names is missing", async () => {
    const ns = await freshNamespace(t.api);
    await created(
      t.api,
      roleBindings(ns),
      binding("RoleBinding", "dangling", { kind: "ClusterRole", name: "nope" }, [userSubject("alice")]),
    );
    const r = await alice().get(`/api/v1/namespaces/${ns}/pods`);
    expect(r.body.message).toBe(
      `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "${ns}": RBAC: clusterrole.${RBAC} "nope" not found`,
    );
  });
});

describe("grants", () => {
  it("allows what a RoleBinding grants, only in its namespace, from the moment it is created", async () => {
    const ns = await grantAlice([{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }]);
    expect((await alice().get(`/api/v1/namespaces/${ns}/secrets`)).status).toBe(200);
    expect((await alice().get("/api/v1/namespaces/default/secrets")).status).toBe(403);
    expect(
      (await alice().post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } })).status,
    ).toBe(403);
  });

  it("grants to groups and service accounts, and stops when the binding is deleted", async () => {
    const ns = await freshNamespace(t.api);
    await created(
      t.api,
      roleBindings(ns),
      binding("RoleBinding", "devs", { kind: "ClusterRole", name: "view" }, [{ kind: "Group", name: "devs" }]),
    );
    expect((await bob().get(`/api/v1/namespaces/${ns}/pods`)).status).toBe(200);
    expect((await alice().get(`/api/v1/namespaces/${ns}/pods`)).status).toBe(403);
    expect((await t.api.delete(`${roleBindings(ns)}/devs`)).status).toBe(200);
    expect((await bob().get(`/api/v1/namespaces/${ns}/pods`)).status).toBe(403);
  });

  it("applies resourceNames to gets and to lists and watches of one name", async () => {
    const ns = await grantAlice([{ apiGroups: [""], resources: ["secrets"], resourceNames: ["mine"], verbs: ["get", "list", "watch"] }]);
    expect((await alice().get(`/api/v1/namespaces/${ns}/secrets/mine`)).status).toBe(404);
    expect((await alice().get(`/api/v1/namespaces/${ns}/secrets/other`)).status).toBe(403);
    expect((await alice().get(`/api/v1/namespaces/${ns}/secrets?fieldSelector=metadata.name%3Dmine`)).status).toBe(200);
    expect((await alice().get(`/api/v1/namespaces/${ns}/secrets`)).status).toBe(403);
  });
});

describe("validation of the RBAC kinds", () => {
  it("requires verbs, groups and resources, and keeps non-resource URLs out of Roles and away from resources", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(roles(ns), role("bad", [{ resources: ["pods"] }, { verbs: ["get"], nonResourceURLs: ["/x"] }]));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'Role.rbac.authorization.orch.io "bad" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, ' +
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group, " +
        'rules[1].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs]',
    );
    const mixed = await t.api.post(clusterRoles, clusterRole("mixed", [{ verbs: ["get"], apiGroups: [""], nonResourceURLs: ["/x"] }]));
    expect(mixed.body.message).toContain(
      'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs',
    );
    const names = await t.api.post(
      clusterRoles,
      clusterRole("names", [{ verbs: ["get"], apiGroups: [""], resources: ["a", "b"], resourceNames: ["x"] }]),
    );
    expect(names.body.message).toContain("rules[0].resourceNames: Required value: resource names cannot apply to multiple resources");
    const slash = await t.api.post(clusterRoles, clusterRole("a/b", []));
    expect(slash.status).toBe(422);
    expect(slash.body.message).toContain("metadata.name: Invalid value: \"a/b\": may not contain '/'");
    // Colons are fine: Kubernetes' own role names have them.
    expect((await t.api.post(clusterRoles, clusterRole("team:reader", []))).status).toBe(201);
  });

  it("checks an aggregationRule's selectors", async () => {
    const r = await t.api.post(clusterRoles, clusterRole("agg-bad", [], { aggregationRule: { clusterRoleSelectors: [] } }));
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(
      "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
    );
  });

  it("checks roleRef and subjects, defaults the RBAC group, and never changes roleRef", async () => {
    const ns = await freshNamespace(t.api);
    const bad = await t.api.post(roleBindings(ns), {
      ...binding("RoleBinding", "bad", { kind: "Thing", name: "" }, [
        { kind: "Robot", name: "r" },
        { kind: "ServiceAccount", name: "sa", apiGroup: "x" },
      ]),
    });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toEqual([
      {
        reason: "FieldValueNotSupported",
        message: 'Unsupported value: "Thing": supported values: "Role", "ClusterRole"',
        field: "roleRef.kind",
      },
      { reason: "FieldValueRequired", message: "Required value", field: "roleRef.name" },
      {
        reason: "FieldValueNotSupported",
        message: 'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        field: "subjects[0].kind",
      },
      { reason: "FieldValueNotSupported", message: 'Unsupported value: "x": supported values: ""', field: "subjects[1].apiGroup" },
    ]);
    const cluster = await t.api.post(
      clusterRoleBindings,
      binding("ClusterRoleBinding", `sa-${ns}`, { kind: "Role", name: "x" }, [{ kind: "ServiceAccount", name: "sa" }]),
    );
    expect(cluster.body.details.causes).toEqual([
      { reason: "FieldValueNotSupported", message: 'Unsupported value: "Role": supported values: "ClusterRole"', field: "roleRef.kind" },
      { reason: "FieldValueRequired", message: "Required value", field: "subjects[0].namespace" },
    ]);

    const ok = await created(t.api, roleBindings(ns), {
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: { name: "ok" },
      roleRef: { kind: "ClusterRole", name: "view" },
      subjects: [
        { kind: "User", name: "alice" },
        { kind: "ServiceAccount", name: "robot" },
      ],
    });
    expect(ok.roleRef.apiGroup).toBe(RBAC);
    expect(ok.subjects).toEqual([
      { kind: "User", apiGroup: RBAC, name: "alice" },
      { kind: "ServiceAccount", name: "robot" },
    ]);
    const changed = await t.api.put(`${roleBindings(ns)}/ok`, { ...ok, roleRef: { ...ok.roleRef, name: "edit" } });
    expect(changed.status).toBe(422);
    expect(changed.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: `Invalid value: {"APIGroup":"${RBAC}","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef`,
        field: "roleRef",
      },
    ]);
  });
});

describe("escalation prevention", () => {
  const manageRoles = { apiGroups: [RBAC], resources: ["roles", "rolebindings"], verbs: ["create", "update", "get"] };
  const readPods = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] };

  it("lets a caller create a Role with rules it holds, and refuses more with Kubernetes' message", async () => {
    const ns = await grantAlice([manageRoles, readPods]);
    expect((await alice().post(roles(ns), role("readers", [readPods]))).status).toBe(201);
    const r = await alice().post(
      roles(ns),
      role("writers", [{ apiGroups: [""], resources: ["pods", "secrets"], verbs: ["get", "delete"] }]),
    );
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ reason: "Forbidden", details: { name: "writers", group: RBAC, kind: "roles" } });
    expect(r.body.message).toBe(
      `roles.${RBAC} "writers" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    );
    // Nor can an existing role be widened.
    const readers = (await alice().get(`${roles(ns)}/readers`)).body;
    expect((await alice().put(`${roles(ns)}/readers`, { ...readers, rules: [{ ...readPods, verbs: ["*"] }] })).status).toBe(403);
  });

  it("lets a caller with `escalate` grant anything", async () => {
    const ns = await grantAlice([manageRoles, { apiGroups: [RBAC], resources: ["roles"], verbs: ["escalate"] }]);
    expect((await alice().post(roles(ns), role("all", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]))).status).toBe(201);
  });

  it("lets a caller bind a role it could have written, or one it may `bind`, and nothing else", async () => {
    const ns = await grantAlice([manageRoles, readPods]);
    await created(t.api, roles(ns), role("pod-reader", [readPods]));
    expect(
      (await alice().post(roleBindings(ns), binding("RoleBinding", "b1", { kind: "Role", name: "pod-reader" }, [userSubject("bob")])))
        .status,
    ).toBe(201);
    const edit = await alice().post(
      roleBindings(ns),
      binding("RoleBinding", "b2", { kind: "ClusterRole", name: "edit" }, [userSubject("bob")]),
    );
    expect(edit.status).toBe(403);
    expect(edit.body.message).toMatch(
      new RegExp(
        `^rolebindings\\.${RBAC.replace(/\./g, "\\.")} "b2" is forbidden: user "alice" \\(groups=\\["system:authenticated"\\]\\) is attempting to grant RBAC permissions not currently held:\\n`,
      ),
    );
    const missing = await alice().post(
      roleBindings(ns),
      binding("RoleBinding", "b3", { kind: "Role", name: "nope" }, [userSubject("bob")]),
    );
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(`roles.${RBAC} "nope" not found`);

    await created(
      t.api,
      roles(ns),
      role("binder", [{ apiGroups: [RBAC], resources: ["clusterroles"], verbs: ["bind"], resourceNames: ["edit"] }]),
    );
    await created(
      t.api,
      roleBindings(ns),
      binding("RoleBinding", "alice-binder", { kind: "Role", name: "binder" }, [userSubject("alice")]),
    );
    expect(
      (await alice().post(roleBindings(ns), binding("RoleBinding", "b2", { kind: "ClusterRole", name: "edit" }, [userSubject("bob")])))
        .status,
    ).toBe(201);
    expect(
      (await alice().post(roleBindings(ns), binding("RoleBinding", "b4", { kind: "ClusterRole", name: "admin" }, [userSubject("bob")])))
        .status,
    ).toBe(403);
  });

  it("keeps aggregationRule for cluster admins", async () => {
    await created(t.api, clusterRoles, clusterRole("role-maker", [{ apiGroups: [RBAC], resources: ["clusterroles"], verbs: ["create"] }]));
    await created(
      t.api,
      clusterRoleBindings,
      binding("ClusterRoleBinding", "alice-role-maker", { kind: "ClusterRole", name: "role-maker" }, [userSubject("alice")]),
    );
    const r = await alice().post(
      clusterRoles,
      clusterRole("gather", [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: "y" } }] } }),
    );
    expect(r.status).toBe(403);
    expect(r.body.message).toBe(
      `clusterroles.${RBAC} "gather" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
    );
  });
});

describe("aggregation and the bootstrap policy", () => {
  it("binds cluster-admin to system:masters and gives admin, edit and view their aggregated rules", async () => {
    const admin = (await t.api.get(`${clusterRoleBindings}/cluster-admin`)).body;
    expect(admin.roleRef).toEqual({ apiGroup: RBAC, kind: "ClusterRole", name: "cluster-admin" });
    expect(admin.subjects).toEqual([{ kind: "Group", apiGroup: RBAC, name: "system:masters" }]);
    const view = (await t.api.get(`${clusterRoles}/view`)).body;
    expect(view.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { [`${RBAC}/aggregate-to-view`]: "true" } }] });
    expect(view.rules).toContainEqual(expect.objectContaining({ apiGroups: ["apps"], verbs: ["get", "list", "watch"] }));
    const edit = (await t.api.get(`${clusterRoles}/edit`)).body;
    // edit gathers view (labelled aggregate-to-edit) and its own.
    expect(edit.rules).toEqual(expect.arrayContaining(view.rules));
    expect(edit.rules).toContainEqual(expect.objectContaining({ resources: ["serviceaccounts/token"], verbs: ["create"] }));
    expect(edit.rules).toContainEqual(expect.objectContaining({ resources: ["pods/eviction"], verbs: ["create"] }));
  });

  it("adds a labelled ClusterRole's rules to the aggregate, and takes them away when it goes", async () => {
    const extra = { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get"] };
    await created(t.api, clusterRoles, {
      ...clusterRole("widget-viewer", [extra]),
      metadata: { name: "widget-viewer", labels: { [`${RBAC}/aggregate-to-view`]: "true" } },
    });
    const rulesOf = async (name: string) => (await t.api.get(`${clusterRoles}/${name}`)).body.rules as unknown[];
    await expect.poll(() => rulesOf("view")).toContainEqual(extra);
    await expect.poll(() => rulesOf("admin")).toContainEqual(extra);
    await t.api.delete(`${clusterRoles}/widget-viewer`);
    await expect.poll(() => rulesOf("view")).not.toContainEqual(extra);
  });

  it("keeps the policy as it is across restarts, administrator's edits included", async () => {
    const before = (await t.api.get(`${clusterRoles}/system:basic-user`)).body;
    await t.api.put(`${clusterRoles}/system:basic-user`, { ...before, metadata: { ...before.metadata, labels: { edited: "yes" } } });
    await t.restart();
    const after = (await t.api.get(`${clusterRoles}/system:basic-user`)).body;
    expect(after.metadata.labels).toEqual({ edited: "yes" });
    expect(after.metadata.uid).toBe(before.metadata.uid);
  });
});

describe("access reviews", () => {
  const ssar = (spec: unknown, metadata: unknown = {}) => ({ apiVersion: `${AUTHZ}/v1`, kind: "SelfSubjectAccessReview", metadata, spec });
  const selfReviews = `/apis/${AUTHZ}/v1/selfsubjectaccessreviews`;

  it("answers may-I for any authenticated user", async () => {
    const ns = await grantAlice([{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["list"] }]);
    const yes = await alice().post(
      selfReviews,
      ssar({ resourceAttributes: { namespace: ns, verb: "list", group: "apps", resource: "deployments" } }),
    );
    expect(yes.status).toBe(201);
    expect(yes.body.status).toEqual({
      allowed: true,
      reason: `RBAC: allowed by RoleBinding "alice/${ns}" of Role "alice" to User "alice"`,
    });
    const no = await alice().post(
      selfReviews,
      ssar({ resourceAttributes: { namespace: ns, verb: "delete", group: "apps", resource: "deployments" } }),
    );
    expect(no.body.status).toEqual({ allowed: false });
    const path = await alice().post(selfReviews, ssar({ nonResourceAttributes: { path: "/version", verb: "get" } }));
    expect(path.body.status.allowed).toBe(true);
  });

  it("validates a self review as Kubernetes does", async () => {
    const neither = await alice().post(selfReviews, ssar({}));
    expect(neither.status).toBe(422);
    expect(neither.body.message).toBe(
      `SelfSubjectAccessReview.${AUTHZ} "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`,
    );
    const both = await alice().post(selfReviews, ssar({ resourceAttributes: {}, nonResourceAttributes: {} }));
    expect(both.body.details.causes[0]).toMatchObject({ field: "spec.nonResourceAttributes" });
    const named = await alice().post(selfReviews, ssar({ resourceAttributes: {} }, { name: "x" }));
    expect(named.status).toBe(422);
    expect(named.body.details.causes[0]).toMatchObject({ field: "metadata", message: expect.stringContaining("must be empty") });
  });

  it("answers about another user for those allowed to ask, in a namespace with a LocalSubjectAccessReview", async () => {
    const ns = await grantAlice([{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }]);
    const sar = {
      apiVersion: `${AUTHZ}/v1`,
      kind: "SubjectAccessReview",
      spec: { user: "alice", resourceAttributes: { namespace: ns, verb: "get", resource: "pods" } },
    };
    const r = await t.api.post(`/apis/${AUTHZ}/v1/subjectaccessreviews`, sar);
    expect(r.status).toBe(201);
    expect(r.body.status.allowed).toBe(true);
    // Plain users may not ask about others.
    expect((await alice().post(`/apis/${AUTHZ}/v1/subjectaccessreviews`, sar)).status).toBe(403);
    const nobody = await t.api.post(`/apis/${AUTHZ}/v1/subjectaccessreviews`, { ...sar, spec: { resourceAttributes: {} } });
    expect(nobody.body.details.causes).toEqual([
      { reason: "FieldValueInvalid", message: 'Invalid value: "": at least one of user or group must be specified', field: "spec.user" },
    ]);
    const local = `/apis/${AUTHZ}/v1/namespaces/${ns}/localsubjectaccessreviews`;
    const lsar = { ...sar, kind: "LocalSubjectAccessReview" };
    expect((await t.api.post(local, lsar)).body.status.allowed).toBe(true);
    const elsewhere = await t.api.post(local, {
      ...lsar,
      spec: { ...lsar.spec, resourceAttributes: { ...sar.spec.resourceAttributes, namespace: "default" } },
    });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: 'Invalid value: "default": must match metadata.namespace',
        field: "spec.resourceAttributes.namespace",
      },
    ]);
  });

  it("lists what the caller may do in a namespace", async () => {
    const ns = await grantAlice([{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] }]);
    const r = await alice().post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, {
      apiVersion: `${AUTHZ}/v1`,
      kind: "SelfSubjectRulesReview",
      spec: { namespace: ns },
    });
    expect(r.status).toBe(201);
    expect(r.body.status.incomplete).toBe(false);
    expect(r.body.status.resourceRules).toContainEqual({ verbs: ["get", "list"], apiGroups: ["apps"], resources: ["deployments"] });
    // kubectl's self reviews are served under Kubernetes' group name too, so system:basic-user names both.
    expect(r.body.status.resourceRules).toContainEqual({
      verbs: ["create"],
      apiGroups: [AUTHZ, "authorization.k8s.io"],
      resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    });
    expect(r.body.status.nonResourceRules).toContainEqual(
      expect.objectContaining({ nonResourceURLs: expect.arrayContaining(["/api", "/version"]) }),
    );
    const none = await alice().post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, {
      apiVersion: `${AUTHZ}/v1`,
      kind: "SelfSubjectRulesReview",
      spec: {},
    });
    expect(none.status).toBe(400);
    expect(none.body.message).toBe("no namespace on request");
  });
});
