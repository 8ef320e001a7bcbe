// PriorityClass rules that need other objects, through the generic store with a ClusterReader over
// the same storage: the one-default rule (Kubernetes' Priority admission plugin) and the system classes.
import { namingProfile, type ObjectHeader } from "@orch/api";
import { StatusError } from "@orch/machinery";
import { SqliteStorage } from "@orch/storage";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RequestContext, ResourceStore, WatchHub, ensureBuiltinObjects, storageClusterReader } from "../src/index.js";
import { priorityClasses } from "../src/kinds/scheduling/priority-class.js";

const profile = namingProfile("orch");
const ctx = (): RequestContext => ({ user: { username: "test", groups: [] }, profile, warnings: [] });
const pc = (name: string, value: number, globalDefault?: boolean) => ({
  value: { metadata: { name }, value, ...(globalDefault === undefined ? {} : { globalDefault }) },
});

let storage: SqliteStorage;
let hub: WatchHub;
let store: ResourceStore;

beforeEach(async () => {
  storage = new SqliteStorage({ path: ":memory:" });
  hub = await WatchHub.create(storage);
  store = new ResourceStore(priorityClasses(profile), { storage, hub, cluster: storageClusterReader(storage) });
});

afterEach(async () => {
  hub.close();
  await storage.close();
});

async function refusal(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("PriorityClass one-default rule", () => {
  it("refuses a second default on create and on update, with Kubernetes' 403", async () => {
    await store.create("", pc("first", 10, true), ctx(), {});
    const second = await refusal(store.create("", pc("second", 20, true), ctx(), {}));
    expect(second.status).toMatchObject({
      code: 403,
      reason: "Forbidden",
      message:
        'priorityclasses.scheduling.orch.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist',
      details: { name: "second", group: "scheduling.orch.io", kind: "priorityclasses" },
    });
    expect(await storage.get(store.key("", "second"))).toBeUndefined();

    await store.create("", pc("third", 30), ctx(), {});
    const marked = await refusal(store.update("", "third", undefined, ctx(), {}, (current) => ({ ...current!, globalDefault: true })));
    expect(marked.code).toBe(403);
    // The default itself may be written again.
    const self = await store.update("", "first", undefined, ctx(), {}, (current) => ({ ...current!, description: "d" }));
    expect(self.object.globalDefault).toBe(true);
  });

  it("a class that is not a default is never checked against others", async () => {
    await store.create("", pc("first", 10, true), ctx(), {});
    await expect(store.create("", pc("plain", 5, false), ctx(), {})).resolves.toMatchObject({ code: 201 });
  });
});

describe("ensureBuiltinObjects", () => {
  it("creates the system classes once, and leaves them alone afterwards", async () => {
    await ensureBuiltinObjects({ storage, hub }, profile);
    const first = (await store.list({})).items.map((o) => JSON.parse(o.value) as ObjectHeader);
    expect(first.map((o) => [o.metadata.name, o.value, o.preemptionPolicy])).toEqual([
      ["system-cluster-critical", 2000000000, "PreemptLowerPriority"],
      ["system-node-critical", 2000001000, "PreemptLowerPriority"],
    ]);
    await ensureBuiltinObjects({ storage, hub }, profile);
    const again = (await store.list({})).items.map((o) => JSON.parse(o.value) as ObjectHeader);
    expect(again).toEqual(first);
  });

  it("names the apiVersion after the profile", async () => {
    const k8s = namingProfile("kubernetes");
    await ensureBuiltinObjects({ storage, hub }, k8s);
    const stored = await storage.get({ resource: "scheduling.k8s.io/priorityclasses", namespace: "", name: "system-node-critical" });
    expect((JSON.parse(stored!.value) as ObjectHeader).apiVersion).toBe("scheduling.k8s.io/v1");
  });
});
