// Kubernetes' validatingadmissionpolicy-status-controller: each new generation of a
// ValidatingAdmissionPolicy gets `status.observedGeneration` and `status.typeChecking`, the warnings of
// checking its validations' expressions and messageExpressions against the kinds its resourceRules name
// (at most 10, wildcards skipped) and its paramKind. orch's check is the cheap part of Kubernetes' type
// checker: field selections from `object`, `oldObject` and `params` that the kind's schema does not have
// (libs/cel/src/field-check.ts), warned as `apps/v1, Kind=Deployment: ERROR: <input>:1:13: undefined field 'replicax'`.
import { type ObjectHeader, SCHEMA_WRAPPERS, type SchemaNode, type ValidatingAdmissionPolicy } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { errors } from "@orch/machinery";
import {
  type FieldTree,
  type KindDefinition,
  type KindRegistry,
  type RequestContext,
  type ResourceStore,
  undefinedFieldIssues,
} from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";
import { lostRace } from "./write-races.js";

const MAX_TYPES_TO_CHECK = 10;
const ANY: FieldTree = { kind: "any" };

/** A kind's valibot schema as the checker's field tree; what it cannot tell is `any`. */
function fieldTree(node: SchemaNode, depth = 0): FieldTree {
  if (depth > 40) return ANY;
  if (SCHEMA_WRAPPERS.has(node.type)) return fieldTree(node.wrapped!, depth + 1);
  switch (node.type) {
    case "object":
    case "loose_object":
      return {
        kind: "object",
        open: node.type === "loose_object",
        fields: new Map(Object.entries(node.entries ?? {}).map(([name, entry]) => [name, fieldTree(entry, depth + 1)])),
      };
    case "array":
      return { kind: "list", item: fieldTree(node.item!, depth + 1) };
    case "record":
      return { kind: "map", value: fieldTree(node.value!, depth + 1) };
    default:
      return ANY;
  }
}

const trees = new WeakMap<KindDefinition, FieldTree>();
function treeOf(kind: KindDefinition): FieldTree {
  let tree = trees.get(kind);
  if (!tree) trees.set(kind, (tree = fieldTree(kind.schema as unknown as SchemaNode)));
  return tree;
}

const gvkString = (k: KindDefinition) => `${k.group}/${k.version}, Kind=${k.kind}`;

/** typesToCheck: the kinds of the explicit groups, versions and resources of the resource rules. */
function typesToCheck(policy: ValidatingAdmissionPolicy, registry: KindRegistry): KindDefinition[] {
  const found = new Map<string, KindDefinition>();
  const explicit = (list: readonly string[] | undefined) => (list ?? []).filter((x) => x !== "*" && !x.includes("/")).sort();
  for (const rule of policy.spec?.matchConstraints?.resourceRules ?? []) {
    for (const group of explicit(rule.apiGroups)) {
      for (const version of explicit(rule.apiVersions)) {
        for (const resource of explicit(rule.resources)) {
          const kind = registry.lookup(group, version, resource);
          if (kind && !kind.unlisted) found.set(gvkString(kind), kind);
          if (found.size === MAX_TYPES_TO_CHECK) return [...found.values()];
        }
      }
    }
  }
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, k]) => k);
}

/** TypeChecker.Check: a warning per expression that has issues for some kind. */
export function typeCheck(policy: ValidatingAdmissionPolicy, registry: KindRegistry): { fieldRef: string; warning: string }[] {
  const kinds = typesToCheck(policy, registry);
  if (kinds.length === 0) return [];
  const paramKind = policy.spec?.paramKind;
  const [group, version] = (paramKind?.apiVersion ?? "").includes("/")
    ? paramKind!.apiVersion!.split("/")
    : ["", paramKind?.apiVersion ?? ""];
  const params = paramKind
    ? registry.all().find((k) => k.group === group && k.version === version && k.kind === paramKind.kind)
    : undefined;
  const check = (expression: string) =>
    kinds
      .map((kind) => {
        const roots: Record<string, FieldTree> = {
          object: treeOf(kind),
          oldObject: treeOf(kind),
          ...(params ? { params: treeOf(params) } : {}),
        };
        const issues = undefinedFieldIssues(expression, roots);
        return issues.length ? `${gvkString(kind)}: ${issues.join("\n")}\n` : "";
      })
      .filter(Boolean)
      .join("\n");
  const warnings: { fieldRef: string; warning: string }[] = [];
  (policy.spec?.validations ?? []).forEach((validation, i) => {
    const expression = check(validation.expression ?? "");
    if (expression) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: expression });
    if (!validation.messageExpression) return;
    const message = check(validation.messageExpression);
    if (message) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: message });
  });
  return warnings;
}

export class PolicyTypeChecking {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;

  constructor(
    storage: Storage,
    resource: string,
    private readonly policies: ResourceStore,
    private readonly registry: KindRegistry,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    this.informer = new StorageInformer(storage, { resources: [resource], log });
    this.controller = runController({
      name: "validatingadmissionpolicy-status",
      reconciler: (key) => this.reconcile(key.slice(key.indexOf("/") + 1)),
      sources: [{ informer: this.informer, filter: (event) => event.type !== "delete" }],
      log,
    });
  }

  private async reconcile(name: string): Promise<undefined> {
    const policy = (await this.policies.find("", name)) as ValidatingAdmissionPolicy | undefined;
    const generation = policy?.metadata.generation ?? 0;
    if (!policy || generation <= (policy.status?.observedGeneration ?? 0)) return;
    const expressionWarnings = typeCheck(policy, this.registry);
    try {
      await this.policies.update(
        "",
        name,
        "status",
        this.ctx(),
        { fieldManager: "validatingadmissionpolicy-status-controller" },
        (current) => {
          // A newer generation is its own reconcile: its commit queues the key again.
          if (!current || current.metadata.generation !== generation)
            throw errors.conflict({ group: "", resource: "validatingadmissionpolicies" }, name, "changed meanwhile");
          return {
            ...current,
            status: {
              ...(current.status as object),
              observedGeneration: generation,
              typeChecking: expressionWarnings.length ? { expressionWarnings } : {},
            },
          };
        },
      );
    } catch (e) {
      if (lostRace(e)) return;
      throw e;
    }
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
