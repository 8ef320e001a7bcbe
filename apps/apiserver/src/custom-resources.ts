// Serves the kinds CustomResourceDefinitions declare: keeps the kind registry in step with the stored
// CRDs (one scan at start, then every committed CRD change), so routing, discovery and OpenAPI follow.
// A CRD is served once its Established condition is True, one kind per served version; a deleted CRD,
// an unserved version or a changed spec takes its kinds out or replaces them. A CRD converting by
// webhook gets its webhook's converter (conversion/webhook-converter.ts) on each of its kinds.
import { type CustomResourceDefinition, type NamingProfile, crdConditionTrue } from "@orch/api";
import { type KindDefinition, type KindRegistry, customResourceKinds, storageResource } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";
import type { Logger } from "@orch/log";
import { type WebhookConverterOptions, webhookConverter } from "./conversion/webhook-converter.js";

interface Served {
  /** What the kinds were built from; an equal CRD state needs no rebuild. */
  fingerprint: string;
  kinds: KindDefinition[];
}

export class CustomResourceServing {
  private readonly served = new Map<string, Served>();

  private constructor(
    private readonly informer: StorageInformer<CustomResourceDefinition>,
    private readonly registry: KindRegistry,
    private readonly profile: NamingProfile,
    private readonly log: Logger,
    private readonly conversion: WebhookConverterOptions,
  ) {
    // Commits are heard synchronously, so a CRD write is served by the time its response is sent.
    informer.addEventHandler({
      onAdd: (crd) => this.apply(crd),
      onUpdate: (_old, crd) => this.apply(crd),
      onDelete: (crd) => this.withdraw(crd.metadata.name!),
    });
  }

  /** Registers the kinds of every established CRD, then follows changes. */
  static async start(
    storage: Storage,
    registry: KindRegistry,
    profile: NamingProfile,
    log: Logger,
    conversion: WebhookConverterOptions,
  ): Promise<CustomResourceServing> {
    const resource = storageResource({ group: profile.group("apiextensions"), plural: "customresourcedefinitions" });
    const informer = new StorageInformer<CustomResourceDefinition>(storage, { resources: [resource], log });
    const serving = new CustomResourceServing(informer, registry, profile, log, conversion);
    await informer.waitForSync();
    return serving;
  }

  private apply(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    if (!crdConditionTrue(crd, "Established")) {
      this.withdraw(name);
      return;
    }
    const terminating = crdConditionTrue(crd, "Terminating");
    const fingerprint = JSON.stringify([crd.metadata.uid, crd.spec, crd.status?.acceptedNames, terminating]);
    if (this.served.get(name)?.fingerprint === fingerprint) return;
    let kinds: KindDefinition[];
    try {
      const converter = crd.spec.conversion.strategy === "Webhook" ? webhookConverter(crd, this.conversion) : undefined;
      kinds = customResourceKinds(crd, this.profile, { terminating, ...(converter ? { converter } : {}) });
    } catch (e) {
      // CRD validation should make this impossible; serving nothing beats serving it wrong.
      this.log.error(`cannot serve the custom resource definition ${name}`, e);
      this.withdraw(name);
      return;
    }
    this.withdraw(name);
    // A built-in kind keeps its URL: a CRD cannot take it over.
    const free = kinds.filter((k) => this.registry.lookup(k.group, k.version, k.plural) === undefined);
    for (const kind of free) this.registry.add(kind);
    this.served.set(name, { fingerprint, kinds: free });
  }

  private withdraw(name: string): void {
    const served = this.served.get(name);
    if (!served) return;
    this.served.delete(name);
    for (const k of served.kinds) {
      if (this.registry.lookup(k.group, k.version, k.plural) === k) this.registry.remove(k.group, k.version, k.plural);
    }
  }

  stop(): void {
    this.informer.stop();
  }
}
