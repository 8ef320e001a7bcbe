// ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller does it
// (pkg/controller/clusterroleaggregation): a ClusterRole with an aggregationRule gets the rules of
// every other ClusterRole its selectors match, in name order, without duplicates. Runs in the
// apiserver; a change it writes brings its role back once more, which then finds nothing to do.
import type { ClusterRole, ObjectHeader, PolicyRule } from "@orch/api";
import { StatusError, errors, jsonEqual, labelSelectorFromObject, labelSelectorMatches } from "@orch/machinery";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { type RequestContext, type ResourceStore, storageResource } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";
import type { RbacAuthorizer } from "../authz/rbac-authorizer.js";

/** The rules an aggregated role should have, given every ClusterRole. */
export function aggregatedRules(role: ClusterRole & ObjectHeader, all: readonly (ClusterRole & ObjectHeader)[]): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const sorted = [...all].sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
  for (const selectorObject of role.aggregationRule?.clusterRoleSelectors ?? []) {
    let selector: ReturnType<typeof labelSelectorFromObject>;
    try {
      selector = labelSelectorFromObject(selectorObject);
    } catch {
      continue;
    }
    for (const other of sorted) {
      if (other.metadata.name === role.metadata.name) continue;
      if (!labelSelectorMatches(selector, other.metadata.labels ?? {})) continue;
      for (const rule of other.rules ?? []) if (!rules.some((r) => jsonEqual(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

/** Reconciles each aggregating ClusterRole (by name) on a work queue, as the controller manager does. */
export class ClusterRoleAggregator {
  private readonly informer: StorageInformer<ClusterRole & ObjectHeader>;
  private readonly controller: Controller;

  constructor(
    storage: Storage,
    private readonly rbac: RbacAuthorizer,
    private readonly store: ResourceStore,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    this.informer = new StorageInformer(storage, { resources: [storageResource(store.kind)], log });
    this.controller = runController({
      name: "cluster-role-aggregation",
      reconciler: (name) => this.reconcile(name),
      // Any ClusterRole may now match (or no longer match) any aggregating role's selectors.
      sources: [{ informer: this.informer, toKeys: (role) => this.aggregatingRoles(role) }],
      log,
    });
  }

  private aggregatingRoles(changed: ClusterRole & ObjectHeader): string[] {
    const names = this.rbac
      .allClusterRoles()
      .filter((r) => r.aggregationRule)
      .map((r) => r.metadata.name!);
    return changed.aggregationRule ? [changed.metadata.name!, ...names] : names;
  }

  private async reconcile(name: string): Promise<void> {
    // The RBAC index is current: it hears each commit before the queue hands the key out.
    const role = this.rbac.clusterRole(name);
    if (!role?.aggregationRule) return;
    const rules = aggregatedRules(role, this.rbac.allClusterRoles());
    if (jsonEqual(rules, role.rules ?? [])) return;
    try {
      await this.store.update("", name, undefined, this.ctx(), {}, (current) => {
        if (!current) throw errors.notFound({ group: this.store.kind.group, resource: "clusterroles" }, name);
        return { ...current, rules };
      });
    } catch (e) {
      // Deleted meanwhile: nothing to aggregate into. A conflict is retried by the store itself.
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
