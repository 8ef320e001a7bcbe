// Deletes Events a time-to-live after they were last written, as Kubernetes' --event-ttl does with etcd
// leases. A controller on the work queue, one key per Event, queued for when the Event it heard of will
// have expired (reading each new Event at once was a twentieth of an Event's create): the reconcile reads
// the Event as it is then and either deletes it or looks again later, so a restart costs only a relist.
import type { Event, ObjectHeader } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import type { RequestContext, ResourceStore } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";
import { lostRace } from "./write-races.js";

/** Kubernetes' default --event-ttl. */
export const DEFAULT_EVENT_TTL_MS = 3600 * 1000;

/**
 * When an Event was last written, as far as the object tells: the newest of its server-set creation and
 * managedFields times and the times its recorder set (a repeat updates lastTimestamp or the series).
 */
export function lastWritten(event: Event): number {
  const times = [
    event.metadata.creationTimestamp,
    ...(event.metadata.managedFields ?? []).map((entry) => entry.time),
    event.lastTimestamp,
    event.eventTime,
    event.series?.lastObservedTime,
  ];
  return Math.max(0, ...times.map((t) => (t ? Date.parse(t) : Number.NaN)).filter((ms) => !Number.isNaN(ms)));
}

export class EventTtl {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;

  constructor(
    storage: Storage,
    private readonly events: ResourceStore,
    private readonly ttlMs: number,
    private readonly ctx: () => RequestContext,
    log: Logger,
  ) {
    this.informer = new StorageInformer(storage, { resources: ["core/events"], log });
    this.controller = runController({
      name: "event-ttl",
      reconciler: (key) => this.reconcile(key),
      sources: [
        {
          informer: this.informer,
          filter: (event) => event.type !== "delete",
          delay: (obj) => this.remaining(obj as Event),
        },
      ],
      log,
    });
  }

  private async reconcile(key: string): Promise<{ requeueAfter: number } | undefined> {
    // Keys are `namespace/name`: a namespace never holds a slash.
    const slash = key.indexOf("/");
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const event = (await this.events.find(namespace, name)) as Event | undefined;
    if (!event) return;
    const remaining = this.remaining(event);
    if (remaining > 0) return { requeueAfter: remaining };
    try {
      // Only the version read: an Event written again meanwhile lives on, and its update queues it again.
      const resourceVersion = event.metadata.resourceVersion;
      await this.events.delete(namespace, name, this.ctx(), resourceVersion ? { preconditions: { resourceVersion } } : {}, false);
    } catch (e) {
      if (lostRace(e)) return;
      throw e;
    }
  }

  private remaining(event: Event): number {
    return lastWritten(event) + this.ttlMs - Date.now();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
