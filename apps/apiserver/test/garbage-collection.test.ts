// Owner references: what nothing owns any more is deleted, by the propagation policy of the owner's delete.
import { eventually } from "@orch/testing";
import { describe, expect, it } from "vitest";
import { deployment, freshNamespace, paths, secret, useTestServer } from "./harness.js";

const t = useTestServer();

async function owner(ns: string, name: string) {
  return (await t.api.post(paths.deployments(ns), deployment(name))).body;
}

async function dependent(ns: string, name: string, ...owners: { metadata: { name: string; uid: string } }[]) {
  const body = secret(name) as { metadata: Record<string, unknown> };
  body.metadata.ownerReferences = owners.map((o) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    name: o.metadata.name,
    uid: o.metadata.uid,
    blockOwnerDeletion: true,
  }));
  const r = await t.api.post(paths.secrets(ns), body);
  expect(r.status).toBe(201);
  return r.body;
}

const exists = async (path: string) => (await t.api.get(path)).status === 200;
const gone = (path: string, what: string) => eventually(what, async () => !(await exists(path)));

let probes = 0;
/**
 * Waits until the collector has settled everything it was given before now: a dependent of an owner that
 * never existed, created now, is collected only after what the collector's informer delivered earlier
 * (commits arrive in revision order, and its one worker takes keys first in, first out).
 */
async function collectorCaughtUp(ns: string): Promise<void> {
  const name = `probe-${++probes}`;
  await dependent(ns, name, { metadata: { name: "ghost", uid: "00000000-0000-0000-0000-00000000beef" } });
  await gone(`${paths.secrets(ns)}/${name}`, "the collector to reach the probe");
}

describe("garbage collection", () => {
  it("Background (the default): dependents go after their owner", async () => {
    const ns = await freshNamespace(t.api);
    const d = await owner(ns, "web");
    await dependent(ns, "child", d);
    const r = await t.api.delete(`${paths.deployments(ns)}/web`);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("Success"); // the owner itself goes at once
    await gone(`${paths.secrets(ns)}/child`, "the dependent to be collected");
  });

  it("Orphan: dependents stay and lose their reference; the owner goes", async () => {
    const ns = await freshNamespace(t.api);
    const d = await owner(ns, "web");
    await dependent(ns, "child", d);
    const r = await t.api.delete(`${paths.deployments(ns)}/web?propagationPolicy=Orphan`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.finalizers).toEqual(["orphan"]);
    expect(r.body.metadata.deletionTimestamp).toBeDefined();
    await gone(`${paths.deployments(ns)}/web`, "the owner to go");
    const child = await t.api.get(`${paths.secrets(ns)}/child`);
    expect(child.status).toBe(200);
    expect(child.body.metadata.ownerReferences).toBeUndefined();
  });

  it("Foreground: the owner waits, marked, until its dependents are gone", async () => {
    const ns = await freshNamespace(t.api);
    const d = await owner(ns, "web");
    const child = await dependent(ns, "child", d);
    // A finalizer of its own keeps the dependent around for a while, so the wait is visible.
    await t.api.patch(`${paths.secrets(ns)}/child`, { metadata: { finalizers: ["example.com/hold"] } }, "application/merge-patch+json");
    const r = await t.api.delete(`${paths.deployments(ns)}/web`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Foreground",
    });
    expect(r.body.metadata.finalizers).toEqual(["foregroundDeletion"]);
    await eventually(
      "the dependent's deletion",
      async () => (await t.api.get(`${paths.secrets(ns)}/child`)).body.metadata?.deletionTimestamp !== undefined,
    );
    // The pass that marked the dependent is over: the owner is still there, waiting for it.
    await collectorCaughtUp(ns);
    expect(await exists(`${paths.deployments(ns)}/web`)).toBe(true);
    await t.api.patch(`${paths.secrets(ns)}/child`, { metadata: { finalizers: null } }, "application/merge-patch+json");
    await gone(`${paths.deployments(ns)}/web`, "the owner to go");
    expect(await exists(`${paths.secrets(ns)}/${child.metadata.name}`)).toBe(false);
  });

  it("keeps a dependent while any of its owners exists", async () => {
    const ns = await freshNamespace(t.api);
    const a = await owner(ns, "a");
    const b = await owner(ns, "b");
    await dependent(ns, "shared", a, b);
    await t.api.delete(`${paths.deployments(ns)}/a`);
    // The collector has looked at the dependent after a's deletion, and kept it.
    await collectorCaughtUp(ns);
    expect(await exists(`${paths.secrets(ns)}/shared`)).toBe(true);
    await t.api.delete(`${paths.deployments(ns)}/b`);
    await gone(`${paths.secrets(ns)}/shared`, "the dependent to be collected");
  });

  it("collects a dependent whose owner never existed", async () => {
    const ns = await freshNamespace(t.api);
    await dependent(ns, "stray", { metadata: { name: "ghost", uid: "00000000-0000-0000-0000-000000000000" } });
    await gone(`${paths.secrets(ns)}/stray`, "the stray dependent to be collected");
  });
});
