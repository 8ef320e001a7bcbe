// @kubernetes/client-node (1.x, the line that runs on Node 20) against a control plane started the way the
// README says, under the kubernetes profile so that the client's built-in group names are the server's.
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  Health,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  VersionApi,
  Watch,
} from "@kubernetes/client-node";
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "../control-plane.js";
import { apiserverPid } from "./harness.js";

const namespace = "default";
let cp: ControlPlane;
let kc: KubeConfig;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
  kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

/** The HTTP status of a call the client rejects (client-node throws an ApiException with `code`). */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (e) {
    const code = (e as { code?: number }).code;
    if (typeof code !== "number") throw e;
    return code;
  }
}

const patchAs = (type: string) => setHeaderOptions("Content-Type", type);

describe("@kubernetes/client-node", () => {
  it("creates, reads, lists, replaces and deletes core and apps kinds", async () => {
    const cm = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "js-crud", labels: { suite: "js" } }, data: { a: "1" } },
    });
    expect(cm.metadata?.uid).toBeTruthy();
    expect(await statusOf(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "js-crud" } } }))).toBe(409);
    const listed = await core.listNamespacedConfigMap({ namespace, labelSelector: "suite=js" });
    expect(listed.items.map((i) => i.metadata?.name)).toEqual(["js-crud"]);
    const replaced = await core.replaceNamespacedConfigMap({
      name: "js-crud",
      namespace,
      body: { ...cm, data: { a: "2" } },
    });
    expect(replaced.data).toEqual({ a: "2" });
    expect(await statusOf(core.replaceNamespacedConfigMap({ name: "js-crud", namespace, body: cm }))).toBe(409);
    await core.deleteNamespacedConfigMap({ name: "js-crud", namespace });
    expect(await statusOf(core.readNamespacedConfigMap({ name: "js-crud", namespace }))).toBe(404);

    const secret = await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "js-secret" }, stringData: { token: "t0ken" } },
    });
    expect(secret.stringData).toBeUndefined();
    expect(Buffer.from(secret.data!.token!, "base64").toString()).toBe("t0ken");
    expect(await statusOf(core.createNamespacedSecret({ namespace, body: { metadata: { name: "js-bad" }, data: { x: "%%%" } } }))).toBe(
      400,
    );
    await core.deleteNamespacedSecret({ name: "js-secret", namespace });

    const dep = await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "js-web" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "js-web" } },
          template: { metadata: { labels: { app: "js-web" } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
        },
      },
    });
    expect(dep.spec?.template.spec?.containers[0]?.imagePullPolicy).toBe("IfNotPresent");
    await apps.replaceNamespacedDeploymentScale({
      name: "js-web",
      namespace,
      body: { metadata: { name: "js-web", namespace }, spec: { replicas: 4 } },
    });
    expect((await apps.readNamespacedDeployment({ name: "js-web", namespace })).spec?.replicas).toBe(4);
    await apps.deleteNamespacedDeployment({ name: "js-web", namespace });
  });

  it("patches with JSON (its default), merge and strategic merge patches", async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "js-patch" }, data: { a: "1", b: "2" } } });
    let cm = await core.patchNamespacedConfigMap({
      name: "js-patch",
      namespace,
      body: [{ op: "add", path: "/data/c", value: "3" }],
    });
    expect(cm.data).toEqual({ a: "1", b: "2", c: "3" });
    cm = await core.patchNamespacedConfigMap(
      { name: "js-patch", namespace, body: { data: { a: null, d: "4" } } },
      patchAs(PatchStrategy.MergePatch),
    );
    expect(cm.data).toEqual({ b: "2", c: "3", d: "4" });
    cm = await core.patchNamespacedConfigMap(
      { name: "js-patch", namespace, body: { metadata: { labels: { patched: "yes" } }, data: { b: null } } },
      patchAs(PatchStrategy.StrategicMergePatch),
    );
    expect(cm.data).toEqual({ c: "3", d: "4" });
    expect(cm.metadata?.labels).toEqual({ patched: "yes" });
    await core.deleteNamespacedConfigMap({ name: "js-patch", namespace });
  });

  it("applies server-side: a second manager's conflicting apply is refused with the field, then forced", async () => {
    const body = (value: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "js-applied" }, data: { k: value } });
    const apply = patchAs(PatchStrategy.ServerSideApply);
    const first = await core.patchNamespacedConfigMap({ name: "js-applied", namespace, body: body("one"), fieldManager: "js-one" }, apply);
    expect(first.data).toEqual({ k: "one" });
    let conflict: { code?: number; body?: string } = {};
    try {
      await core.patchNamespacedConfigMap({ name: "js-applied", namespace, body: body("two"), fieldManager: "js-two" }, apply);
    } catch (e) {
      conflict = e as typeof conflict;
    }
    expect(conflict.code).toBe(409);
    expect(JSON.parse(conflict.body!).details.causes).toEqual([
      { reason: "FieldManagerConflict", message: 'conflict with "js-one"', field: ".data.k" },
    ]);
    const forced = await core.patchNamespacedConfigMap(
      { name: "js-applied", namespace, body: body("two"), fieldManager: "js-two", force: true },
      apply,
    );
    expect(forced.data).toEqual({ k: "two" });
    expect(forced.metadata?.managedFields?.map((m) => m.manager)).toContain("js-two");
    // KubernetesObjectApi (what tools use to apply manifests) finds the resource through discovery.
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const applied = await objects.patch(
      { ...body("three"), metadata: { name: "js-applied", namespace } } as KubernetesObject,
      undefined,
      undefined,
      "js-two",
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((applied as V1ConfigMap).data).toEqual({ k: "three" });
    await objects.delete({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "js-applied", namespace } });
  });

  it("watches from a resourceVersion, and with sendInitialEvents ends the initial state with a bookmark", async () => {
    const start = (await core.listNamespacedConfigMap({ namespace })).metadata?.resourceVersion;
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "js-watched" }, data: { n: "0" } } });
    await core.patchNamespacedConfigMap({ name: "js-watched", namespace, body: [{ op: "replace", path: "/data/n", value: "1" }] });
    const seen: string[] = [];
    const watch = new Watch(kc);
    const done = new Promise<unknown>((res) => {
      void watch
        .watch(
          `/api/v1/namespaces/${namespace}/configmaps`,
          { resourceVersion: start, allowWatchBookmarks: true, fieldSelector: "metadata.name=js-watched" },
          (type, obj: V1ConfigMap) => seen.push(`${type} ${obj.data?.n}`),
          res,
        )
        .then((req) => eventually("both events", () => seen.length >= 2).then(() => req.abort()));
    });
    await done;
    expect(seen).toEqual(["ADDED 0", "MODIFIED 1"]);

    const initial: { type: string; obj: KubernetesObject }[] = [];
    const bookmarked = new Promise<void>((res, rej) => {
      void watch
        .watch(
          `/api/v1/namespaces/${namespace}/configmaps`,
          { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true },
          (type, obj: KubernetesObject) => {
            initial.push({ type, obj });
            if (type === "BOOKMARK") res();
          },
          (err) => rej(err ?? new Error("the watch ended before its bookmark")),
        )
        .then((req) => bookmarked.finally(() => req.abort()));
    });
    await bookmarked;
    const bookmark = initial.at(-1)!;
    expect(bookmark.obj.metadata?.annotations).toEqual({ "k8s.io/initial-events-end": "true" });
    expect(initial.filter((e) => e.type === "ADDED").map((e) => e.obj.metadata?.name)).toContain("js-watched");
    await core.deleteNamespacedConfigMap({ name: "js-watched", namespace });
  });

  it("requests a service account token with an audience", async () => {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "js-robot" } } });
    const tr = await core.createNamespacedServiceAccountToken({
      name: "js-robot",
      namespace,
      body: { spec: { audiences: ["js-audience"], expirationSeconds: 600 } },
    });
    const claims = JSON.parse(Buffer.from(tr.status!.token.split(".")[1]!, "base64url").toString());
    expect(claims.aud).toEqual(["js-audience"]);
    expect(claims.sub).toBe(`system:serviceaccount:${namespace}:js-robot`);
    expect(claims.exp - claims.iat).toBe(600);
  });

  it("defines a CRD and drives its custom objects with CustomObjectsApi", async () => {
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const group = "stable.example.com";
    const plural = "jscrontabs";
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `${plural}.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural, singular: "jscrontab", kind: "JsCronTab" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: "object",
                  properties: {
                    spec: { type: "object", properties: { cronSpec: { type: "string" } } },
                    status: { type: "object", properties: { phase: { type: "string" } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    const params = { group, version: "v1", namespace, plural };
    await eventually("the custom resource is served", async () => (await statusOf(custom.listNamespacedCustomObject(params))) === 200);
    const created = await custom.createNamespacedCustomObject({
      ...params,
      body: { apiVersion: `${group}/v1`, kind: "JsCronTab", metadata: { name: "one" }, spec: { cronSpec: "* * * * */5" } },
    });
    expect(created.metadata.uid).toBeTruthy();
    // CustomObjectsApi's patches default to a JSON patch.
    const patched = await custom.patchNamespacedCustomObject({
      ...params,
      name: "one",
      body: [{ op: "replace", path: "/spec/cronSpec", value: "0 * * * *" }],
    });
    expect(patched.spec).toEqual({ cronSpec: "0 * * * *" });
    const status = await custom.patchNamespacedCustomObjectStatus(
      { ...params, name: "one", body: { status: { phase: "Ready" } } },
      patchAs(PatchStrategy.MergePatch),
    );
    expect(status.status).toEqual({ phase: "Ready" });
    const listed = await custom.listNamespacedCustomObject(params);
    expect(listed.items.map((i: KubernetesObject) => i.metadata?.name)).toEqual(["one"]);
    await custom.deleteNamespacedCustomObject({ ...params, name: "one" });
    expect(await statusOf(custom.getNamespacedCustomObject({ ...params, name: "one" }))).toBe(404);
    await ext.deleteCustomResourceDefinition({ name: `${plural}.${group}` });
  });

  it("records Events as an event recorder does: a v1 Event, its count bumped, and an events/v1 Event", async () => {
    const now = new Date();
    const regarding = { apiVersion: "v1", kind: "ConfigMap", name: "js-evented", namespace };
    const ev = await core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `js-evented.${now.getTime().toString(16)}` },
        involvedObject: regarding,
        reason: "Synced",
        message: "synced by client-node",
        type: "Normal",
        source: { component: "js-recorder" },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
    const bumped = await core.patchNamespacedEvent(
      { name: ev.metadata!.name!, namespace, body: { count: 2, lastTimestamp: new Date().toISOString() } },
      patchAs(PatchStrategy.StrategicMergePatch),
    );
    expect(bumped.count).toBe(2);
    const events = kc.makeApiClient(EventsV1Api);
    await events.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `js-evented.${(now.getTime() + 1).toString(16)}` },
        eventTime: new Date() as unknown as Date,
        reportingController: "example.com/js-recorder",
        reportingInstance: "js-1",
        action: "Sync",
        reason: "Synced",
        note: "synced again",
        type: "Normal",
        regarding,
      },
    });
    const listed = await core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=js-evented" });
    expect(listed.items.map((e) => e.reason)).toEqual(["Synced", "Synced"]);
  });

  it("lands 100 concurrent patches of one ConfigMap from 8 writers, two of each patch type (applies too), none refused", async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "js-contended" }, data: {} } });
    const types = [PatchStrategy.JsonPatch, PatchStrategy.MergePatch, PatchStrategy.StrategicMergePatch, PatchStrategy.ServerSideApply];
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const type = types[w % 4]!;
        const applied: Record<string, string> = {};
        for (let i = w; i < 100; i += 8) {
          const key = `k${i}`;
          applied[key] = String(i);
          // An applier sends its whole intent each time; the others send just the new key.
          const body =
            type === PatchStrategy.JsonPatch
              ? [{ op: "add", path: `/data/${key}`, value: String(i) }]
              : type === PatchStrategy.ServerSideApply
                ? { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "js-contended" }, data: { ...applied } }
                : { data: { [key]: String(i) } };
          await core
            .patchNamespacedConfigMap(
              { name: "js-contended", namespace, body, ...(type === PatchStrategy.ServerSideApply ? { fieldManager: `writer-${w}` } : {}) },
              patchAs(type),
            )
            .catch((e) => failures.push({ writer: w, key, code: (e as { code?: number }).code ?? String(e) }));
        }
      }),
    );
    expect(failures).toEqual([]);
    const cm = await core.readNamespacedConfigMap({ name: "js-contended", namespace });
    expect(Object.keys(cm.data ?? {})).toHaveLength(100);
    const appliers = cm.metadata?.managedFields?.filter((m) => m.operation === "Apply").map((m) => m.manager);
    expect(appliers?.sort()).toEqual(["writer-3", "writer-7"]);
  });

  it("answers its health and version endpoints", async () => {
    expect(await new Health(kc).readyz({})).toBe(true);
    expect(await new Health(kc).livez({})).toBe(true);
    expect((await kc.makeApiClient(VersionApi).getCode()).gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  it("evicts a pod with createNamespacedPodEviction (policy/v1 Eviction), as kubectl drain does", async () => {
    const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } });
    const evict = (name: string, body: object = {}) =>
      core.createNamespacedPodEviction({ name, namespace, body: { metadata: { name, namespace }, ...body } });
    await core.createNamespacedPod({ namespace, body: pod("js-evicted") });
    // A dry run leaves the pod; a name that is not the URL's is a 400; no such pod is a 404.
    await evict("js-evicted", { deleteOptions: { dryRun: ["All"] } });
    expect((await core.readNamespacedPod({ name: "js-evicted", namespace })).metadata?.deletionTimestamp).toBeUndefined();
    expect(
      await statusOf(core.createNamespacedPodEviction({ name: "js-evicted", namespace, body: { metadata: { name: "other", namespace } } })),
    ).toBe(400);
    expect(await statusOf(evict("js-nobody"))).toBe(404);
    // No PodDisruptionBudget stands in the way: the pod (on no node) is deleted at once.
    await evict("js-evicted", { deleteOptions: { gracePeriodSeconds: 0 } });
    expect(await statusOf(core.readNamespacedPod({ name: "js-evicted", namespace }))).toBe(404);
    // A precondition on another uid is a conflict, as for a DELETE.
    await core.createNamespacedPod({ namespace, body: pod("js-evicted") });
    expect(await statusOf(evict("js-evicted", { deleteOptions: { preconditions: { uid: "not-its-uid" } } }))).toBe(409);
    await core.deleteNamespacedPod({ name: "js-evicted", namespace, gracePeriodSeconds: 0 });
  });

  it("an informer restarted after the apiserver is killed resumes from its resourceVersion and sees later changes", async () => {
    const informer = makeInformer(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace, labelSelector: "suite=informed" }),
      "suite=informed",
    );
    const seen: string[] = [];
    let errors = 0;
    informer.on("add", (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on("update", (o) => seen.push(`update ${o.metadata?.name} ${o.data?.n}`));
    informer.on("delete", (o) => seen.push(`delete ${o.metadata?.name}`));
    // client-node's documented pattern: on an error the informer stops, and the program starts it again.
    informer.on("error", () => {
      errors++;
      setTimeout(() => void informer.start().catch(() => {}), 200);
    });
    const cm = (name: string, n: string) => ({ metadata: { name, labels: { suite: "informed" } }, data: { n } });
    try {
      await core.createNamespacedConfigMap({ namespace, body: cm("informed-1", "1") });
      await informer.start();
      await eventually("the listed object", () => seen.includes("add informed-1"));
      await core.replaceNamespacedConfigMap({ name: "informed-1", namespace, body: cm("informed-1", "2") });
      await eventually("a watched change", () => seen.includes("update informed-1 2"));

      const pid = apiserverPid(cp.dataDir);
      expect(pid).toBeDefined();
      process.kill(pid!, "SIGKILL");
      await eventually(
        "a new apiserver that answers",
        async () => {
          const now = apiserverPid(cp.dataDir);
          return !!now && now !== pid && (await statusOf(core.readNamespace({ name: namespace })).catch(() => 0)) === 200;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await core.createNamespacedConfigMap({ namespace, body: cm("informed-2", "1") });
      await core.deleteNamespacedConfigMap({ name: "informed-1", namespace });
      await eventually("the changes after the restart", () => seen.includes("delete informed-1"), { timeoutMs: 20_000 });
      expect(errors).toBeGreaterThan(0);
      expect(seen).toEqual(["add informed-1", "update informed-1 2", "add informed-2", "delete informed-1"]);
      expect(informer.list(namespace).map((o) => o.metadata?.name)).toEqual(["informed-2"]);
    } finally {
      await informer.stop();
    }
  });
});
