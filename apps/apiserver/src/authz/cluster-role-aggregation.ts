// ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller does it
// (pkg/controller/clusterroleaggregation): a ClusterRole with an aggregationRule gets the rules of
// every other ClusterRole its selectors match, in name order, without duplicates. Runs in the
// apiserver after every ClusterRole change; a pass that changes a role triggers one more, which
// finds nothing left to do.
import type { ClusterRole, ObjectHeader, PolicyRule } from "@orch/api";
import { StatusError, errors, jsonEqual, labelSelectorFromObject, labelSelectorMatches } from "@orch/machinery";
import type { RequestContext, ResourceStore } from "@orch/registry";
import { serialTask } from "../serial-task.js";
import type { Logger } from "@orch/log";
import type { RbacAuthorizer } from "./rbac-authorizer.js";

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

export class ClusterRoleAggregator {
  private readonly run = serialTask(
    () => this.pass(),
    (e) => this.log.error("cluster role aggregation failed", e),
  );
  private readonly unsubscribe: () => void;

  constructor(
    private readonly rbac: RbacAuthorizer,
    private readonly store: ResourceStore,
    private readonly ctx: () => RequestContext,
    private readonly log: Logger,
  ) {
    this.unsubscribe = rbac.onChange((kind) => {
      if (kind === "ClusterRole") this.run();
    });
    this.run();
  }

  private async pass(): Promise<void> {
    const all = this.rbac.allClusterRoles();
    for (const role of all) {
      if (!role.aggregationRule) continue;
      const rules = aggregatedRules(role, all);
      if (jsonEqual(rules, role.rules ?? [])) continue;
      try {
        await this.store.update("", role.metadata.name!, undefined, this.ctx(), {}, (current) => {
          if (!current) throw errors.notFound({ group: this.store.kind.group, resource: "clusterroles" }, role.metadata.name!);
          return { ...current, rules };
        });
      } catch (e) {
        // Deleted meanwhile: nothing to aggregate into. A conflict is retried by the store itself.
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    }
  }

  stop(): void {
    this.unsubscribe();
  }
}
