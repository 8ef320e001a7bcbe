// The RBAC authorizer (plugin/pkg/auth/authorizer/rbac, pkg/registry/rbac/validation/rule.go) over an
// in-memory index of roles and bindings, kept by a storage informer: complete at start, then updated by
// each commit synchronously, so a binding is in force before its create returns.
// Members of system:masters may do everything, as Kubernetes' privileged-group authorizer allows.
import type { ClusterRole, ObjectHeader, PolicyRule, Role, RoleBinding, Subject } from "@orch/api";
import { goQuote } from "@orch/machinery";
import type { AuthorizationAttributes, Authorizer, Decision, RuleSet, UserInfo } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";
import { ruleAllows } from "./rules.js";

export const SYSTEM_MASTERS = "system:masters";
const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

type Binding = RoleBinding & { metadata: { name?: string; namespace?: string } };
type RoleObject = (Role | ClusterRole) & ObjectHeader;

/** What a visit yields: a rule with the binding that grants it, or a binding whose role is missing. */
type Visit = { rule: PolicyRule; source: () => string } | { error: string };

export class RbacAuthorizer implements Authorizer {
  private readonly roles = new Map<string, RoleObject>();
  private readonly clusterRoles = new Map<string, RoleObject>();
  /** namespace → name → binding */
  private readonly roleBindings = new Map<string, Map<string, Binding>>();
  private readonly clusterRoleBindings = new Map<string, Binding>();
  private readonly resources: Record<string, "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings">;
  private readonly informer: StorageInformer<ObjectHeader>;

  private constructor(storage: Storage, rbacGroup: string) {
    this.resources = {
      [`${rbacGroup}/roles`]: "roles",
      [`${rbacGroup}/clusterroles`]: "clusterroles",
      [`${rbacGroup}/rolebindings`]: "rolebindings",
      [`${rbacGroup}/clusterrolebindings`]: "clusterrolebindings",
    };
    this.informer = new StorageInformer(storage, { resources: Object.keys(this.resources) });
    this.informer.addEventHandler({
      onAdd: (obj, key) => this.put(key.resource, obj),
      onUpdate: (_old, obj, key) => this.put(key.resource, obj),
      onDelete: (obj, key) => this.remove(key.resource, obj),
    });
  }

  /** Reads every role and binding, then follows commits; resolves once the index is complete. */
  static async start(storage: Storage, rbacGroup: string): Promise<RbacAuthorizer> {
    const authorizer = new RbacAuthorizer(storage, rbacGroup);
    await authorizer.informer.waitForSync();
    return authorizer;
  }

  stop(): void {
    this.informer.stop();
  }

  /** The storage resources of roles and bindings (what the index follows). */
  storageResources(): string[] {
    return Object.keys(this.resources);
  }

  /** Every ClusterRole, as last committed. */
  allClusterRoles(): RoleObject[] {
    return [...this.clusterRoles.values()];
  }

  clusterRole(name: string): RoleObject | undefined {
    return this.clusterRoles.get(name);
  }

  /** The users (subjects of kind User) that some binding names. */
  boundUsers(): Set<string> {
    const users = new Set<string>();
    const bindings = [...this.clusterRoleBindings.values(), ...[...this.roleBindings.values()].flatMap((m) => [...m.values()])];
    for (const binding of bindings) for (const s of binding.subjects ?? []) if (s.kind === "User") users.add(s.name);
    return users;
  }

  /** Namespaces that hold role bindings: the only ones where a user may have rights beyond the cluster-wide. */
  bindingNamespaces(): string[] {
    return [...this.roleBindings].filter(([, bindings]) => bindings.size > 0).map(([namespace]) => namespace);
  }

  private put(resource: string, obj: ObjectHeader): void {
    const name = obj.metadata.name ?? "";
    const namespace = obj.metadata.namespace ?? "";
    switch (this.resources[resource]) {
      case "roles":
        this.roles.set(`${namespace}/${name}`, obj as RoleObject);
        break;
      case "clusterroles":
        this.clusterRoles.set(name, obj as RoleObject);
        break;
      case "rolebindings": {
        let inNamespace = this.roleBindings.get(namespace);
        if (!inNamespace) this.roleBindings.set(namespace, (inNamespace = new Map()));
        inNamespace.set(name, obj as unknown as Binding);
        break;
      }
      case "clusterrolebindings":
        this.clusterRoleBindings.set(name, obj as unknown as Binding);
        break;
    }
  }

  private remove(resource: string, obj: ObjectHeader): void {
    const name = obj.metadata.name ?? "";
    const namespace = obj.metadata.namespace ?? "";
    switch (this.resources[resource]) {
      case "roles":
        this.roles.delete(`${namespace}/${name}`);
        break;
      case "clusterroles":
        this.clusterRoles.delete(name);
        break;
      case "rolebindings":
        this.roleBindings.get(namespace)?.delete(name);
        break;
      case "clusterrolebindings":
        this.clusterRoleBindings.delete(name);
        break;
    }
  }

  async authorize(attributes: AuthorizationAttributes): Promise<Decision> {
    return this.authorizeNow(attributes);
  }

  /** The synchronous core of `authorize`: the index is in memory. */
  authorizeNow(attributes: AuthorizationAttributes): Decision {
    if (attributes.user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: "" };
    const problems: string[] = [];
    for (const visit of this.visit(attributes.user, attributes.resourceRequest ? attributes.namespace : "")) {
      if ("error" in visit) problems.push(visit.error);
      else if (ruleAllows(attributes, visit.rule)) return { allowed: true, reason: `RBAC: allowed by ${visit.source()}` };
    }
    return { allowed: false, reason: problems.length ? `RBAC: ${aggregate(problems)}` : "" };
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RuleSet> {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    for (const visit of this.visit(user, namespace)) {
      if ("error" in visit) errors.push(visit.error);
      else rules.push(visit.rule);
    }
    return { rules, errors };
  }

  /** VisitRulesFor: cluster role bindings, then the namespace's role bindings. */
  private *visit(user: UserInfo, namespace: string): Generator<Visit> {
    for (const binding of this.clusterRoleBindings.values()) {
      const subject = firstSubjectFor(user, binding.subjects, "");
      if (!subject) continue;
      const role = this.roleOf(binding, "");
      if (typeof role === "string") {
        yield { error: role };
        continue;
      }
      const source = () =>
        `ClusterRoleBinding ${goQuote(binding.metadata.name ?? "")} of ${binding.roleRef.kind} ${goQuote(binding.roleRef.name)} to ${describeSubject(subject, "")}`;
      for (const rule of role) yield { rule, source };
    }
    if (!namespace) return;
    for (const binding of this.roleBindings.get(namespace)?.values() ?? []) {
      const subject = firstSubjectFor(user, binding.subjects, namespace);
      if (!subject) continue;
      const role = this.roleOf(binding, namespace);
      if (typeof role === "string") {
        yield { error: role };
        continue;
      }
      const source = () =>
        `RoleBinding ${goQuote(`${binding.metadata.name ?? ""}/${namespace}`)} of ${binding.roleRef.kind} ${goQuote(binding.roleRef.name)} to ${describeSubject(subject, namespace)}`;
      for (const rule of role) yield { rule, source };
    }
  }

  /** GetRoleReferenceRules: the role's rules, or the lister's not-found message. */
  private roleOf(binding: Binding, namespace: string): PolicyRule[] | string {
    const { kind, name, apiGroup } = binding.roleRef;
    if (kind === "Role") {
      const role = this.roles.get(`${namespace}/${name}`);
      return role ? (role.rules ?? []) : `role.${apiGroup} ${goQuote(name)} not found`;
    }
    if (kind === "ClusterRole") {
      const role = this.clusterRoles.get(name);
      return role ? (role.rules ?? []) : `clusterrole.${apiGroup} ${goQuote(name)} not found`;
    }
    return `unsupported role reference kind: ${goQuote(kind)}`;
  }
}

function firstSubjectFor(user: UserInfo, subjects: readonly Subject[] | undefined, namespace: string): Subject | undefined {
  return subjects?.find((s) => appliesToUser(user, s, namespace));
}

/** appliesToUser: a service account subject without a namespace means the binding's own. */
function appliesToUser(user: UserInfo, subject: Subject, namespace: string): boolean {
  switch (subject.kind) {
    case "User":
      return user.username === subject.name;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount": {
      const saNamespace = subject.namespace || namespace;
      return saNamespace !== "" && user.username === `${SERVICE_ACCOUNT_PREFIX}${saNamespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === "ServiceAccount") return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name)}`;
}

/** utilerrors.NewAggregate: one message alone, several in brackets. */
const aggregate = (messages: string[]) => (messages.length === 1 ? messages[0]! : `[${messages.join(", ")}]`);
