// The crd-controller as it runs in production: its bundled process against a real nats-server and a real
// apiserver process. A CRD gets its names accepted and becomes Established (then the apiserver serves
// it), names taken by another CRD of the group are refused with Kubernetes' reasons, and deleting a CRD
// deletes its instances before the CRD itself goes.
import { ApiClient, type KubeObject, type ResourceRef, isNotFound } from "@orch/client";
import { type ApiserverProcess, type NatsServer, eventually, startApiserverProcess, startNatsServer } from "@orch/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const bundle = resolve(import.meta.dirname, "..", "dist", "main.mjs");

const crds: ResourceRef = { group: "apiextensions.orch.io", version: "v1", plural: "customresourcedefinitions", namespaced: false };
const namespaces: ResourceRef = { group: "", version: "v1", plural: "namespaces", namespaced: false };

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}
interface Crd extends KubeObject {
  spec: Record<string, any>;
  status?: { conditions?: Condition[]; acceptedNames?: Record<string, unknown>; observedGeneration?: number };
}

let nats: NatsServer;
let apiserver: ApiserverProcess;
let controller: ChildProcess;
let client: ApiClient;
let output = "";

beforeAll(async () => {
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first`);
  nats = await startNatsServer();
  apiserver = await startApiserverProcess({ natsUrl: nats.url });
  client = ApiClient.fromKubeconfig(apiserver.kubeconfigPath);
  controller = spawn(process.execPath, [bundle], {
    env: { ...process.env, ORCH_DATA_DIR: apiserver.dataDir, ORCH_NATS_URL: nats.url, ORCH_SUPERVISED: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  for (const stream of [controller.stdout!, controller.stderr!])
    stream.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
});

afterAll(async () => {
  if (controller && controller.exitCode === null) {
    const exited = new Promise((r) => controller.once("exit", r));
    controller.kill("SIGTERM");
    await exited;
  }
  client?.close();
  await apiserver?.dispose();
  await nats?.stop();
});

async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  try {
    return await eventually(what, read, { timeoutMs, intervalMs: 100 });
  } catch (e) {
    throw new Error(`${(e as Error).message}\ncontroller output:\n${output}`);
  }
}

const condition = (crd: Crd | undefined, type: string) => crd?.status?.conditions?.find((c) => c.type === type);

function crd(group: string, plural: string, kind: string, extra: { shortNames?: string[] } = {}): Crd {
  return {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural, kind, ...extra },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" } } } } },
          },
        },
      ],
    },
  };
}

const getCrd = (name: string) => client.get<Crd>(crds, name).catch((e) => (isNotFound(e) ? undefined : Promise.reject(e)));

const waitForCondition = (name: string, type: string, status: string) =>
  until(async () => {
    const current = await getCrd(name);
    return condition(current, type)?.status === status ? current : undefined;
  }, `${name} ${type}=${status}`);

describe("crd-controller", () => {
  it("accepts the names of a new CRD and establishes it, and the apiserver then serves the kind", async () => {
    await client.create(crds, crd("stable.example.com", "crontabs", "CronTab", { shortNames: ["ct"] }));
    const established = await waitForCondition("crontabs.stable.example.com", "Established", "True");
    expect(condition(established, "Established")).toMatchObject({
      reason: "InitialNamesAccepted",
      message: "the initial names have been accepted",
    });
    expect(condition(established, "NamesAccepted")).toMatchObject({
      status: "True",
      reason: "NoConflicts",
      message: "no conflicts found",
      observedGeneration: 1,
    });
    expect(established.status?.acceptedNames).toEqual({
      plural: "crontabs",
      singular: "crontab",
      kind: "CronTab",
      listKind: "CronTabList",
      shortNames: ["ct"],
    });
    expect(established.status?.observedGeneration).toBe(1);

    const cronTabs: ResourceRef = { group: "stable.example.com", version: "v1", plural: "crontabs", namespaced: true };
    const created = await client.create<Crd>(cronTabs, {
      apiVersion: "stable.example.com/v1",
      kind: "CronTab",
      metadata: { name: "a", namespace: "default" },
      spec: { size: 3 },
    });
    expect(created.spec).toEqual({ size: 3 });
  });

  it("refuses names another CRD of the group holds, and accepts them once that CRD is gone", async () => {
    const group = "conflicts.example.com";
    await client.create(crds, crd(group, "widgets", "Widget", { shortNames: ["wd"] }));
    await waitForCondition(`widgets.${group}`, "Established", "True");

    await client.create(crds, crd(group, "gadgets", "Widget"));
    const kindConflict = await waitForCondition(`gadgets.${group}`, "NamesAccepted", "False");
    // Kind and list kind both conflict; as in Kubernetes, the last check's reason is the one reported.
    expect(condition(kindConflict, "NamesAccepted")).toMatchObject({
      reason: "ListKindConflict",
      message: '"WidgetList" is already in use',
    });
    expect(condition(kindConflict, "Established")).toMatchObject({
      status: "False",
      reason: "NotAccepted",
      message: "not all names are accepted",
    });
    // Names that are free are accepted even while others conflict.
    // (its singular defaults to "widget", which the other CRD holds too.)
    expect(kindConflict.status?.acceptedNames).toEqual({ plural: "gadgets", kind: "" });

    await client.create(crds, crd(group, "gizmos", "Gizmo", { shortNames: ["widgets", "wd"] }));
    const shortConflict = await waitForCondition(`gizmos.${group}`, "NamesAccepted", "False");
    expect(condition(shortConflict, "NamesAccepted")).toMatchObject({
      reason: "ShortNamesConflict",
      message: '["widgets" is already in use, "wd" is already in use]',
    });

    await client.create(crds, crd(group, "wd", "Doohickey"));
    const pluralConflict = await waitForCondition(`wd.${group}`, "NamesAccepted", "False");
    expect(condition(pluralConflict, "NamesAccepted")).toMatchObject({ reason: "PluralConflict", message: '"wd" is already in use' });

    // The holder goes: its names are free, and the waiting CRD gets them.
    await client.delete(crds, `widgets.${group}`);
    await until(async () => ((await getCrd(`widgets.${group}`)) ? undefined : true), "widgets CRD to go");
    const accepted = await waitForCondition(`gadgets.${group}`, "Established", "True");
    expect(condition(accepted, "NamesAccepted")).toMatchObject({ status: "True", reason: "NoConflicts" });
    expect(accepted.status?.acceptedNames).toMatchObject({ kind: "Widget", listKind: "WidgetList" });
  });

  it("deleting a CRD deletes its instances in every namespace, then the CRD", async () => {
    const group = "cleanup.example.com";
    const things: ResourceRef = { group, version: "v1", plural: "things", namespaced: true };
    await client.create(crds, crd(group, "things", "Thing"));
    await waitForCondition(`things.${group}`, "Established", "True");
    for (const ns of ["cleanup-a", "cleanup-b"]) {
      await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      for (const name of ["one", "two"]) {
        await client.create(things, { apiVersion: `${group}/v1`, kind: "Thing", metadata: { name, namespace: ns }, spec: { size: 1 } });
      }
    }
    const seen: Condition[] = [];
    const watch = client.watch<Crd>(crds, { fieldSelector: `metadata.name=things.${group}` });
    const watching = (async () => {
      for await (const event of watch) {
        const terminating = condition(event.object, "Terminating");
        if (terminating) seen.push(terminating);
        if (event.type === "DELETED") return;
      }
    })();

    await client.delete(crds, `things.${group}`);
    await until(async () => ((await getCrd(`things.${group}`)) ? undefined : true), "the CRD to go");
    await watching;
    watch.close();
    expect(seen.map((c) => c.reason)).toEqual(
      expect.arrayContaining(["InstanceDeletionPending", "InstanceDeletionInProgress", "InstanceDeletionCompleted"]),
    );
    expect(seen.at(-1)).toMatchObject({ status: "False", reason: "InstanceDeletionCompleted", message: "removed all instances" });

    // Defined again, the kind starts empty: the old instances are gone from storage, not just hidden.
    await client.create(crds, crd(group, "things", "Thing"));
    await waitForCondition(`things.${group}`, "Established", "True");
    expect((await client.list(things)).items).toEqual([]);
  });

  it("a CRD that was never established goes without instance clean-up", async () => {
    const group = "never.example.com";
    await client.create(crds, crd(group, "alphas", "Alpha"));
    await waitForCondition(`alphas.${group}`, "Established", "True");
    await client.create(crds, crd(group, "betas", "Alpha"));
    await waitForCondition(`betas.${group}`, "NamesAccepted", "False");
    const deleted = (await client.delete<Crd>(crds, `betas.${group}`)) as Crd;
    expect(deleted.metadata?.finalizers).toEqual(["customresourcecleanup.apiextensions.orch.io"]);
    await until(async () => ((await getCrd(`betas.${group}`)) ? undefined : true), "the CRD to go");
  });
});
