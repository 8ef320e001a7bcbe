// DELETE and deletecollection: response bodies per kind, finalizers, preconditions, options.
import { describe, expect, it } from "vitest";
import { RFC3339, deployment, freshNamespace, secret, useTestServer, paths } from "./harness.js";

const t = useTestServer();

const deploys = paths.deployments;
const secrets = paths.secrets;

describe("delete", () => {
  it("a Deployment answers a Success Status with name, group, plural kind and uid (no code)", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("d"))).body;
    const r = await t.api.delete(`${deploys(ns)}/d`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "d", group: "apps", kind: "deployments", uid: created.metadata.uid },
    });
    expect((await t.api.get(`${deploys(ns)}/d`)).status).toBe(404);
  });

  it("a core kind's Status has no group", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(secrets(ns), secret("s"))).body;
    const r = await t.api.delete(`${secrets(ns)}/s`);
    expect(r.body.details).toEqual({ name: "s", kind: "secrets", uid: created.metadata.uid });
  });

  it("ServiceAccount, PodTemplate and DeviceClass answer with the deleted object", async () => {
    const ns = await freshNamespace(t.api);
    const cases = [
      { path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: "sa" } }, kind: "ServiceAccount" },
      {
        path: `/api/v1/namespaces/${ns}/podtemplates`,
        body: { metadata: { name: "pt" }, template: { spec: { containers: [{ name: "c", image: "i" }] } } },
        kind: "PodTemplate",
      },
      { path: "/apis/resource.orch.io/v1/deviceclasses", body: { metadata: { name: `dc-${ns}` }, spec: {} }, kind: "DeviceClass" },
    ];
    for (const c of cases) {
      const created = await t.api.post(c.path, c.body);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const r = await t.api.delete(`${c.path}/${c.body.metadata.name}`);
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe(c.kind);
      expect(r.body.metadata.uid).toBe(created.body.metadata.uid);
      expect((await t.api.get(`${c.path}/${c.body.metadata.name}`)).status).toBe(404);
    }
  });

  it("a missing object → 404", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.delete(`${deploys(ns)}/ghost`);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('deployments.apps "ghost" not found');
  });

  it("preconditions: a wrong uid or resourceVersion → 409 naming the Kind", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("pre"))).body;
    const uid = await t.api.delete(`${deploys(ns)}/pre`, { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: "nope" } });
    expect(uid.status).toBe(409);
    expect(uid.body).toMatchObject({
      reason: "Conflict",
      message: `Operation cannot be fulfilled on Deployment.apps "pre": the UID in the precondition (nope) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
    });
    const rv = await t.api.delete(`${deploys(ns)}/pre`, { preconditions: { resourceVersion: "1" } });
    expect(rv.status).toBe(409);
    expect(rv.body.message).toBe(
      `Operation cannot be fulfilled on Deployment.apps "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`,
    );
    expect((await t.api.get(`${deploys(ns)}/pre`)).status).toBe(200);
    const ok = await t.api.delete(`${deploys(ns)}/pre`, {
      preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion },
    });
    expect(ok.status).toBe(200);
  });

  it("an unsupported propagationPolicy → 422 DeleteOptions.meta.k8s.io", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("pp"));
    const r = await t.api.delete(`${secrets(ns)}/pp?propagationPolicy=Sideways`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
  });

  it("a negative gracePeriodSeconds is accepted (Kubernetes treats it as 1)", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("g"));
    const r = await t.api.delete(`${secrets(ns)}/g`, { gracePeriodSeconds: -1 });
    expect(r.status).toBe(200);
    expect((await t.api.get(`${secrets(ns)}/g`)).status).toBe(404);
  });

  it("with finalizers: deletionTimestamp set, object stays until the last finalizer is removed", async () => {
    const ns = await freshNamespace(t.api);
    const body = deployment("fin") as any;
    body.metadata.finalizers = ["example.com/hold", "example.com/second"];
    const created = (await t.api.post(deploys(ns), body)).body;
    const w = await t.api.watch(`${deploys(ns)}?resourceVersion=${created.metadata.resourceVersion}`);

    const r = await t.api.delete(`${deploys(ns)}/fin`);
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe("Deployment");
    expect(r.body.metadata.deletionTimestamp).toMatch(RFC3339);
    expect(r.body.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(r.body.metadata.generation).toBe(2);
    const marked = (await t.api.get(`${deploys(ns)}/fin`)).body;
    expect(marked.metadata.deletionTimestamp).toBe(r.body.metadata.deletionTimestamp);
    expect((await w.next()).type).toBe("MODIFIED");

    // Deleting again changes nothing.
    const again = await t.api.delete(`${deploys(ns)}/fin`);
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(marked.metadata.resourceVersion);

    // No new finalizers while deleting.
    const add = structuredClone(marked);
    add.metadata.finalizers = [...add.metadata.finalizers, "example.com/late"];
    const refused = await t.api.put(`${deploys(ns)}/fin`, add);
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain(
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/late"}',
    );

    // The deletionTimestamp cannot be removed by an update.
    const one = structuredClone(marked);
    one.metadata.finalizers = ["example.com/second"];
    delete one.metadata.deletionTimestamp;
    const kept = await t.api.put(`${deploys(ns)}/fin`, one);
    expect(kept.status).toBe(200);
    expect(kept.body.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);
    expect((await w.next()).type).toBe("MODIFIED");

    // A create with the same name while it is being deleted.
    const dup = await t.api.post(deploys(ns), deployment("fin"));
    expect(dup.status).toBe(409);
    expect(dup.body.message).toBe('object is being deleted: deployments.apps "fin" already exists');

    // Removing the last finalizer deletes it; the response is the updated object.
    const last = await t.api.patch(`${deploys(ns)}/fin`, { metadata: { finalizers: null } });
    expect(last.status).toBe(200);
    expect(last.body.metadata.finalizers).toBeUndefined();
    expect((await t.api.get(`${deploys(ns)}/fin`)).status).toBe(404);
    const deleted = await w.next();
    expect(deleted.type).toBe("DELETED");
    expect(deleted.object.metadata.name).toBe("fin");
    w.close();
  });

  it("dryRun=All deletes nothing and emits no event", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("dry"))).body;
    const w = await t.api.watch(`${deploys(ns)}?resourceVersion=${created.metadata.resourceVersion}`);
    const r = await t.api.delete(`${deploys(ns)}/dry?dryRun=All`);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("Success");
    expect((await t.api.get(`${deploys(ns)}/dry`)).status).toBe(200);
    const bad = await t.api.delete(`${deploys(ns)}/dry?dryRun=Some`);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe('DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"');
    expect(await w.eventsBefore("marker", () => t.api.post(deploys(ns), deployment("marker")))).toEqual([]);
    w.close();
  });
});

describe("deletecollection", () => {
  it("deletes what the label selector matches and answers with a Success Status (spec 4.0)", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("a", { sweep: "yes" }));
    await t.api.post(secrets(ns), secret("b", { sweep: "yes" }));
    await t.api.post(secrets(ns), secret("c", { sweep: "no" }));
    const r = await t.api.delete(`${secrets(ns)}?labelSelector=sweep%3Dyes`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: { kind: "secrets" }, code: 200 });
    const left = (await t.api.get(secrets(ns))).body.items.map((i: any) => i.metadata.name);
    expect(left).toEqual(["c"]);
  });

  it("with a field selector, and with nothing matching", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("keep"));
    await t.api.post(secrets(ns), secret("go"));
    const r = await t.api.delete(`${secrets(ns)}?fieldSelector=metadata.name%3Dgo`);
    expect(r.body.status).toBe("Success");
    expect((await t.api.get(secrets(ns))).body.items.map((i: any) => i.metadata.name)).toEqual(["keep"]);
    const none = await t.api.delete(`${secrets(ns)}?labelSelector=nothing`);
    expect(none.status).toBe(200);
    expect((await t.api.get(secrets(ns))).body.items.map((i: any) => i.metadata.name)).toEqual(["keep"]);
  });

  it("dryRun=All deletes nothing", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("stay"));
    const r = await t.api.delete(`${secrets(ns)}?dryRun=All`);
    expect(r.status).toBe(200);
    expect((await t.api.get(secrets(ns))).body.items).toHaveLength(1);
  });
});

describe("graceful deletion (pods)", () => {
  const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
  const pod = (name: string, nodeName?: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: "main", image: "nginx" }] },
  });

  it("marks a pod on a node with its grace period, and removes it when deleted with grace 0", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(pods(ns), pod("web", "node-1"));
    const before = Date.now();
    const first = await t.api.delete(`${pods(ns)}/web`);
    expect(first.status).toBe(200);
    expect(first.body.metadata.deletionGracePeriodSeconds).toBe(30); // spec.terminationGracePeriodSeconds default
    const due = Date.parse(first.body.metadata.deletionTimestamp);
    expect(due).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 29_000);
    expect((await t.api.get(`${pods(ns)}/web`)).status).toBe(200); // still there while it stops
    const shorter = await t.api.delete(`${pods(ns)}/web?gracePeriodSeconds=5`);
    expect(shorter.body.metadata.deletionGracePeriodSeconds).toBe(5);
    const longer = await t.api.delete(`${pods(ns)}/web?gracePeriodSeconds=60`);
    expect(longer.body.metadata.deletionGracePeriodSeconds).toBe(5); // only a shorter period is honoured
    const now = await t.api.delete(`${pods(ns)}/web`, { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0 });
    expect(now.status).toBe(200);
    expect((await t.api.get(`${pods(ns)}/web`)).status).toBe(404);
  });

  it("deletes an unscheduled pod at once", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(pods(ns), pod("pending"));
    const r = await t.api.delete(`${pods(ns)}/pending?gracePeriodSeconds=30`);
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe("Pod"); // pods answer with the deleted object
    expect((await t.api.get(`${pods(ns)}/pending`)).status).toBe(404);
  });
});
