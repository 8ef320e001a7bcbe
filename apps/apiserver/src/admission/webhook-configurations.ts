// The admission webhooks in force, kept from commits of the two configuration kinds (a
// StorageInformer delivers each commit before the write is answered, so a configuration applies from
// the next request), in Kubernetes' call order: configurations by name, webhooks as declared.
import type { MutatingWebhook, MutatingWebhookConfiguration, NamingProfile, ObjectHeader, ValidatingWebhook } from "@orch/api";
import { type LabelSelector, labelSelectorFromObject, labelSelectorIsEverything } from "@orch/machinery";
import {
  type CompiledMatchCondition,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  compileMatchCondition,
} from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";
import type { Logger } from "@orch/log";

/** One webhook of a configuration, with its selectors parsed once. */
export interface Webhook {
  /** The webhook's own name: what Kubernetes' messages quote. */
  name: string;
  configuration: string;
  mutating: boolean;
  spec: MutatingWebhook;
  /** Undefined when it selects everything: nothing to look up. */
  namespaceSelector: LabelSelector | undefined;
  objectSelector: LabelSelector | undefined;
  matchConditions: { name: string; expression: string; compiled: CompiledMatchCondition }[];
}

const compile = (selector: MutatingWebhook["namespaceSelector"]): LabelSelector | undefined => {
  const parsed = labelSelectorFromObject(selector ?? {});
  return labelSelectorIsEverything(parsed) ? undefined : parsed;
};

function webhooksOf(config: ObjectHeader, mutating: boolean): Webhook[] {
  const name = config.metadata.name ?? "";
  return ((config as MutatingWebhookConfiguration).webhooks ?? []).map((spec: MutatingWebhook | ValidatingWebhook) => ({
    name: spec.name ?? "",
    configuration: name,
    mutating,
    spec: spec as MutatingWebhook,
    namespaceSelector: compile(spec.namespaceSelector),
    objectSelector: compile(spec.objectSelector),
    matchConditions: (spec.matchConditions ?? []).map((c) => ({
      name: c.name ?? "",
      expression: c.expression ?? "",
      compiled: compileMatchCondition(c.expression ?? ""),
    })),
  }));
}

class ConfigurationSet {
  private readonly byName = new Map<string, Webhook[]>();
  private ordered: Webhook[] | undefined;

  constructor(private readonly mutating: boolean) {}

  set(config: ObjectHeader): void {
    this.byName.set(config.metadata.name ?? "", webhooksOf(config, this.mutating));
    this.ordered = undefined;
  }
  remove(config: ObjectHeader): void {
    this.byName.delete(config.metadata.name ?? "");
    this.ordered = undefined;
  }
  get size(): number {
    return this.byName.size;
  }
  /** Every webhook, configurations sorted by name (byte order, as Go sorts strings). */
  get webhooks(): readonly Webhook[] {
    this.ordered ??= [...this.byName.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).flatMap((name) => this.byName.get(name) ?? []);
    return this.ordered;
  }
}

export class WebhookConfigurations {
  readonly mutating = new ConfigurationSet(true);
  readonly validating = new ConfigurationSet(false);
  private readonly informer: StorageInformer<ObjectHeader>;

  private constructor(storage: Storage, profile: NamingProfile, log: Logger) {
    const group = profile.group("admissionregistration");
    const mutatingResource = `${group}/${MUTATING_WEBHOOK_CONFIGURATIONS}`;
    const validatingResource = `${group}/${VALIDATING_WEBHOOK_CONFIGURATIONS}`;
    this.informer = new StorageInformer(storage, { resources: [mutatingResource, validatingResource], log });
    const setOf = (resource: string) => (resource === mutatingResource ? this.mutating : this.validating);
    this.informer.addEventHandler({
      onAdd: (obj, key) => setOf(key.resource).set(obj),
      onUpdate: (_old, obj, key) => setOf(key.resource).set(obj),
      onDelete: (obj, key) => setOf(key.resource).remove(obj),
    });
  }

  static async start(storage: Storage, profile: NamingProfile, log: Logger): Promise<WebhookConfigurations> {
    const configurations = new WebhookConfigurations(storage, profile, log);
    await configurations.informer.waitForSync();
    return configurations;
  }

  /** Whether any configuration exists: without one, admission costs nothing. */
  get empty(): boolean {
    return this.mutating.size === 0 && this.validating.size === 0;
  }

  stop(): void {
    this.informer.stop();
  }
}
