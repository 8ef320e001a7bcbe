// The RBAC policy every cluster starts with, after Kubernetes' bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go), limited to what orch serves, plus one
// role per built-in controller app with exactly what it needs. Created at first start, only where
// missing: an administrator's later edits are kept.
import type { ClusterRole, NamingProfile, ObjectHeader, PolicyRule, Role, RoleBinding, Subject } from "@orch/api";
import { StatusError } from "@orch/machinery";
import type { KindDefinition, KindRegistry, RequestContext, ResourceStore } from "@orch/registry";

/** The controller apps that get their own identity (a client certificate with CN `system:orch:<name>`). */
export const CONTROLLER_APPS = [
  "csr-approver",
  "csr-signer",
  "crd-controller",
  "deployment-controller",
  "scheduler",
  "node-lifecycle-controller",
] as const;
export type ControllerApp = (typeof CONTROLLER_APPS)[number];

export const controllerUser = (app: string): string => `system:orch:${app}`;

/** The group of bootstrap identities (Kubernetes' bootstrap tokens): they may only ask for node certificates. */
export const BOOTSTRAPPERS = "system:bootstrappers";

/** Where the controller apps keep their leader-election leases (libs/controller's default). */
export const LEADER_ELECTION_NAMESPACE = "default";

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];
const READ_WRITE = [...READ, ...WRITE];

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

export interface BootstrapPolicy {
  clusterRoles: ObjectHeader[];
  clusterRoleBindings: ObjectHeader[];
  roles: ObjectHeader[];
  roleBindings: ObjectHeader[];
}

export function bootstrapPolicy(p: NamingProfile): BootstrapPolicy {
  const rbac = p.group("rbac.authorization");
  const authorization = p.group("authorization");
  const authentication = p.group("authentication");
  const certificates = p.group("certificates");
  const coordination = p.group("coordination");
  const apiextensions = p.group("apiextensions");
  const events = p.group("events");
  const apiVersion = `${rbac}/v1`;
  const labels = { [`${p.wellKnownDomain}/bootstrapping`]: "rbac-defaults" };
  const annotations = { [`rbac.authorization.${p.wellKnownDomain}/autoupdate`]: "true" };
  const aggregateTo = (role: string) => ({ [`${rbac}/aggregate-to-${role}`]: "true" });

  const clusterRole = (
    name: string,
    rules: PolicyRule[],
    extra: Partial<ClusterRole> & { labels?: Record<string, string> } = {},
  ): ObjectHeader => ({
    apiVersion,
    kind: "ClusterRole",
    metadata: { name, labels: { ...labels, ...extra.labels }, annotations },
    ...(extra.aggregationRule ? { aggregationRule: extra.aggregationRule } : {}),
    rules,
  });
  const aggregated = (name: string, from: string, more: Record<string, string> = {}) =>
    clusterRole(name, [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: aggregateTo(from) }] }, labels: more });
  const group = (name: string): Subject => ({ kind: "Group", apiGroup: rbac, name });
  const user = (name: string): Subject => ({ kind: "User", apiGroup: rbac, name });
  const binding = (
    kind: "ClusterRoleBinding" | "RoleBinding",
    name: string,
    roleKind: string,
    subjects: Subject[],
    namespace?: string,
  ): ObjectHeader => ({
    apiVersion,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels, annotations },
    roleRef: { apiGroup: rbac, kind: roleKind, name } satisfies RoleBinding["roleRef"],
    subjects,
  });

  const leases = (app: string) => [
    rule(["get", "update"], [coordination], ["leases"], [app]),
    rule(["create"], [coordination], ["leases"]),
  ];
  // Kubernetes' eventsRule(): every controller may record events, in either API.
  const recordEvents = rule(["create", "update", "patch"], ["", events], ["events"]);
  const { signers } = p;
  const controllers: Record<ControllerApp, PolicyRule[]> = {
    "csr-approver": [
      rule(READ, [certificates], ["certificatesigningrequests"]),
      rule(["update"], [certificates], ["certificatesigningrequests/approval"]),
      rule(["approve"], [certificates], ["signers"], [signers.apiserverClientNodeAgent]),
      // It asks whether the requester may ask for a node client certificate.
      rule(["create"], [authorization], ["subjectaccessreviews"]),
    ],
    "csr-signer": [
      rule(READ, [certificates], ["certificatesigningrequests"]),
      rule(["update"], [certificates], ["certificatesigningrequests/status"]),
      rule(["sign"], [certificates], ["signers"], [signers.apiserverClient, signers.apiserverClientNodeAgent, signers.nodeAgentServing]),
      // It publishes each signer's CA as a ClusterTrustBundle of that signer.
      rule([...READ, "create", "delete"], [certificates], ["clustertrustbundles"]),
      rule(["attest"], [certificates], ["signers"], [signers.apiserverClient, signers.apiserverClientNodeAgent, signers.nodeAgentServing]),
    ],
    "crd-controller": [
      rule([...READ, "update"], [apiextensions], ["customresourcedefinitions"]),
      rule(["update"], [apiextensions], ["customresourcedefinitions/status"]),
      // Instances of a deleted definition are cleaned up, whatever their group.
      rule(["list", "delete", "deletecollection"], ["*"], ["*"]),
    ],
    "deployment-controller": [
      // Patch: the revision annotation of a Deployment goes through the main endpoint.
      rule([...READ, "update", "patch"], ["apps"], ["deployments", "replicasets"]),
      rule([...READ, "update", "patch"], [""], ["replicationcontrollers"]),
      // Patch: the revision annotation goes through /status (a status write keeps the generation).
      rule(["update", "patch"], ["apps"], ["deployments/status"]),
      rule(["update"], ["apps"], ["replicasets/status"]),
      rule(["update"], [""], ["replicationcontrollers/status"]),
      rule(["create", "delete"], ["apps"], ["replicasets"]),
      rule([...READ, "create", "delete", "patch", "update"], [""], ["pods"]),
    ],
    // Kubernetes' system:kube-scheduler, for what orch serves: read nodes and pods, bind pods, write
    // their scheduling status, delete the pods it preempts.
    scheduler: [
      rule(READ, [""], ["nodes"]),
      rule([...READ, "delete"], [""], ["pods"]),
      rule(["create"], [""], ["pods/binding", "bindings"]),
      rule(["patch", "update"], [""], ["pods/status"]),
    ],
    "node-lifecycle-controller": [
      // Taints are in the spec; conditions in /status.
      rule([...READ, "update", "patch"], [""], ["nodes"]),
      rule(["update", "patch"], [""], ["nodes/status"]),
      rule(READ, [coordination], ["leases"]),
      rule(READ, [""], ["pods"]),
      rule(["update", "patch"], [""], ["pods/status"]),
    ],
  };

  // Node agents (Kubernetes' NodeRules and its TLS bootstrap roles). A node's writes are limited to its
  // own Node, Lease and pods by the node restriction in admission; reads are as Kubernetes' system:node.
  const nodeRoles = [
    clusterRole("system:node-bootstrapper", [rule(["create", "get", "list", "watch"], [certificates], ["certificatesigningrequests"])]),
    clusterRole(`system:${certificates}:certificatesigningrequests:nodeclient`, [
      rule(["create"], [certificates], ["certificatesigningrequests/nodeclient"]),
    ]),
    clusterRole(`system:${certificates}:certificatesigningrequests:selfnodeclient`, [
      rule(["create"], [certificates], ["certificatesigningrequests/selfnodeclient"]),
    ]),
    clusterRole("system:node", [
      rule(["create"], [authentication], ["tokenreviews"]),
      rule(["create"], [authorization], ["subjectaccessreviews", "localsubjectaccessreviews"]),
      rule(READ, [""], ["services", "endpoints"]),
      rule([...READ, "create", "update", "patch", "delete"], [""], ["nodes"]),
      rule(["patch", "update"], [""], ["nodes/status"]),
      rule(["create", "update", "patch"], ["", events], ["events"]),
      rule([...READ, "create", "delete"], [""], ["pods"]),
      rule(["patch", "update"], [""], ["pods/status"]),
      rule(["create"], [""], ["pods/eviction"]),
      rule(["get"], [""], ["secrets", "configmaps"]),
      rule(["create"], [""], ["serviceaccounts/token"]),
      rule(["create", "get", "list", "watch"], [certificates], ["certificatesigningrequests"]),
      rule(["get", "create", "update", "patch", "delete"], [coordination], ["leases"]),
    ]),
  ];
  const nodeBindings = [
    binding("ClusterRoleBinding", "system:node-bootstrapper", "ClusterRole", [group(BOOTSTRAPPERS)]),
    binding("ClusterRoleBinding", `system:${certificates}:certificatesigningrequests:nodeclient`, "ClusterRole", [group(BOOTSTRAPPERS)]),
    binding("ClusterRoleBinding", `system:${certificates}:certificatesigningrequests:selfnodeclient`, "ClusterRole", [
      group(p.nodes.group),
    ]),
    // Kubernetes leaves system:node unbound and lets its Node authorizer decide; orch has none, so RBAC binds it.
    binding("ClusterRoleBinding", "system:node", "ClusterRole", [group(p.nodes.group)]),
  ];

  return {
    clusterRoles: [
      ...nodeRoles,
      clusterRole("cluster-admin", [rule(["*"], ["*"], ["*"]), urls(["*"], ["*"])]),
      clusterRole("system:discovery", [
        urls(
          ["get"],
          ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
        ),
      ]),
      clusterRole("system:public-info-viewer", [urls(["get"], ["/healthz", "/livez", "/readyz", "/version", "/version/"])]),
      // Metrics and health for monitoring agents: members of the group system:monitoring, as in Kubernetes.
      clusterRole("system:monitoring", [
        urls(["get"], ["/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"]),
      ]),
      clusterRole("system:basic-user", [
        // In the orch profile kubectl's self reviews are served under Kubernetes' names as well.
        rule(["create"], [...new Set([authorization, "authorization.k8s.io"])], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        rule(["create"], [...new Set([authentication, "authentication.k8s.io"])], ["selfsubjectreviews"]),
      ]),
      // orch lets every authenticated caller check a token (Kubernetes grants it with system:auth-delegator).
      clusterRole("system:token-reviewer", [rule(["create"], [authentication], ["tokenreviews"])]),
      clusterRole("system:service-account-issuer-discovery", [
        urls(["get"], ["/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"]),
      ]),
      // Trust bundles are for everyone: pods mount them (spec 2.6, 5.5).
      clusterRole("system:cluster-trust-bundle-reader", [rule(READ, [certificates], ["clustertrustbundles"])]),
      aggregated("admin", "admin"),
      aggregated("edit", "edit", aggregateTo("admin")),
      aggregated("view", "view", aggregateTo("edit")),
      clusterRole(
        "system:aggregate-to-admin",
        [rule(["create"], [authorization], ["localsubjectaccessreviews"]), rule(READ_WRITE, [rbac], ["roles", "rolebindings"])],
        { labels: aggregateTo("admin") },
      ),
      clusterRole(
        "system:aggregate-to-edit",
        [
          rule(READ, [""], ["secrets"]),
          rule(["impersonate"], [""], ["serviceaccounts"]),
          rule(WRITE, [""], ["pods"]),
          rule(
            WRITE,
            [""],
            [
              "replicationcontrollers",
              "replicationcontrollers/scale",
              "serviceaccounts",
              "services",
              "configmaps",
              "secrets",
              "podtemplates",
            ],
          ),
          rule(["create"], [""], ["serviceaccounts/token"]),
          // Evicting a pod (kubectl drain) is deleting it through its disruption budgets.
          rule(["create"], [""], ["pods/eviction"]),
          rule(WRITE, ["apps"], ["deployments", "deployments/scale", "replicasets", "replicasets/scale"]),
        ],
        { labels: aggregateTo("edit") },
      ),
      clusterRole(
        "system:aggregate-to-view",
        [
          rule(
            READ,
            [""],
            [
              "pods",
              "pods/status",
              "replicationcontrollers",
              "replicationcontrollers/scale",
              "replicationcontrollers/status",
              "serviceaccounts",
              "podtemplates",
              "configmaps",
              "services",
              "services/status",
              "endpoints",
            ],
          ),
          rule(READ, [p.group("discovery")], ["endpointslices"]),
          rule(READ, [""], ["events"]),
          rule(READ, [""], ["namespaces", "namespaces/status"]),
          rule(
            READ,
            ["apps"],
            ["deployments", "deployments/status", "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale"],
          ),
          rule(READ, [coordination], ["leases"]),
        ],
        { labels: aggregateTo("view") },
      ),
      ...CONTROLLER_APPS.map((app) => clusterRole(controllerUser(app), [...controllers[app], recordEvents])),
    ],
    clusterRoleBindings: [
      ...nodeBindings,
      binding("ClusterRoleBinding", "cluster-admin", "ClusterRole", [group("system:masters")]),
      binding("ClusterRoleBinding", "system:discovery", "ClusterRole", [group("system:authenticated")]),
      binding("ClusterRoleBinding", "system:public-info-viewer", "ClusterRole", [group("system:authenticated")]),
      binding("ClusterRoleBinding", "system:monitoring", "ClusterRole", [group("system:monitoring")]),
      binding("ClusterRoleBinding", "system:basic-user", "ClusterRole", [group("system:authenticated")]),
      binding("ClusterRoleBinding", "system:token-reviewer", "ClusterRole", [group("system:authenticated")]),
      binding("ClusterRoleBinding", "system:service-account-issuer-discovery", "ClusterRole", [group("system:serviceaccounts")]),
      binding("ClusterRoleBinding", "system:cluster-trust-bundle-reader", "ClusterRole", [
        group("system:authenticated"),
        group("system:serviceaccounts"),
      ]),
      ...CONTROLLER_APPS.map((app) => binding("ClusterRoleBinding", controllerUser(app), "ClusterRole", [user(controllerUser(app))])),
    ],
    roles: CONTROLLER_APPS.map(
      (app): ObjectHeader => ({
        apiVersion,
        kind: "Role",
        metadata: { name: controllerUser(app), namespace: LEADER_ELECTION_NAMESPACE, labels, annotations },
        rules: leases(app) satisfies Role["rules"],
      }),
    ),
    roleBindings: CONTROLLER_APPS.map((app) =>
      binding("RoleBinding", controllerUser(app), "Role", [user(controllerUser(app))], LEADER_ELECTION_NAMESPACE),
    ),
  };
}

/** Creates the objects of the bootstrap policy that do not exist yet, through the RBAC kinds' stores. */
export async function ensureBootstrapPolicy(
  profile: NamingProfile,
  registry: KindRegistry,
  storeFor: (kind: KindDefinition) => ResourceStore,
  ctx: RequestContext,
): Promise<void> {
  const policy = bootstrapPolicy(profile);
  const rbac = profile.group("rbac.authorization");
  const sets: [string, ObjectHeader[]][] = [
    ["clusterroles", policy.clusterRoles],
    ["clusterrolebindings", policy.clusterRoleBindings],
    ["roles", policy.roles],
    ["rolebindings", policy.roleBindings],
  ];
  for (const [plural, objects] of sets) {
    const store = storeFor(registry.lookup(rbac, "v1", plural)!);
    for (const obj of objects) {
      const namespace = obj.metadata.namespace ?? "";
      try {
        await store.get(namespace, obj.metadata.name!);
        continue;
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
      try {
        await store.create(namespace, { value: structuredClone(obj) }, ctx, { fieldValidation: "Strict" });
      } catch (e) {
        // Created meanwhile by someone else: it exists, which is all this wants.
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
  }
}
