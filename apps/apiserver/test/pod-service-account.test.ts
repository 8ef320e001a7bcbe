// Pods run as a service account, as in a Kubernetes cluster: the ServiceAccount admission plugin
// defaults and checks the account, mounts the API token, cluster CA and namespace, and enforces
// mountable secrets; the root-ca-cert-publisher puts the cluster CA in every namespace.
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshNamespace, sleep, useTestServer } from "./harness.js";

const t = useTestServer();

const MOUNT_PATH = "/var/run/secrets/orch.io/serviceaccount";
const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
});

async function account(ns: string, name: string, extra: Record<string, unknown> = {}) {
  const r = await t.api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    ...extra,
    metadata: { name, ...((extra.metadata as object) ?? {}) },
  });
  expect(r.status, r.text).toBe(201);
}

async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await read();
    if (v !== undefined) return v;
    await sleep(50);
  }
  throw new Error("never happened");
}

describe("ServiceAccount admission", () => {
  it("runs a pod as `default` and mounts the token, the cluster CA and the namespace in every container", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(
      podsPath(ns),
      pod("p", {
        initContainers: [{ name: "init", image: "busybox" }],
        containers: [
          { name: "c", image: "nginx" },
          { name: "own", image: "nginx", volumeMounts: [{ name: "mine", mountPath: MOUNT_PATH }] },
        ],
        volumes: [{ name: "mine", emptyDir: {} }],
      }),
    );
    expect(r.status, r.text).toBe(201);
    const spec = r.body.spec;
    expect(spec.serviceAccountName).toBe("default");
    const volume = spec.volumes.find((v: { name: string }) => v.name.startsWith("orch-api-access-"));
    expect(volume.name).toMatch(/^orch-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
        { configMap: { name: "orch-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
      ],
    });
    const tokenMount = { name: volume.name, readOnly: true, mountPath: MOUNT_PATH };
    expect(spec.initContainers[0].volumeMounts).toEqual([tokenMount]);
    expect(spec.containers[0].volumeMounts).toEqual([tokenMount]);
    // A container with its own mount at the token's path keeps it.
    expect(spec.containers[1].volumeMounts).toEqual([{ name: "mine", mountPath: MOUNT_PATH }]);
  });

  it("mounts nothing when the pod or its account turns automounting off; the pod's choice wins", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns, "quiet", { automountServiceAccountToken: false });
    const off = await t.api.post(podsPath(ns), pod("off", { serviceAccountName: "quiet" }));
    expect(off.status, off.text).toBe(201);
    expect(off.body.spec.volumes ?? []).toEqual([]);
    expect(off.body.spec.containers[0].volumeMounts ?? []).toEqual([]);
    const on = await t.api.post(podsPath(ns), pod("on", { serviceAccountName: "quiet", automountServiceAccountToken: true }));
    expect(on.body.spec.volumes).toHaveLength(1);
    const podOff = await t.api.post(podsPath(ns), pod("pod-off", { automountServiceAccountToken: false }));
    expect(podOff.body.spec.volumes ?? []).toEqual([]);
  });

  it("refuses a pod whose account does not exist with 403, and stores nothing", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(podsPath(ns), pod("p", { serviceAccountName: "ghost" }));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      kind: "Status",
      reason: "Forbidden",
      message: `pods "p" is forbidden: error looking up service account ${ns}/ghost: serviceaccount "ghost" not found`,
      details: { name: "p", kind: "pods" },
    });
    expect((await t.api.get(`${podsPath(ns)}/p`)).status).toBe(404);
    // A generated name is not known yet: the refusal names the prefix.
    const generated = await t.api.post(podsPath(ns), {
      ...pod(""),
      metadata: { generateName: "web-" },
      spec: { ...pod("").spec, serviceAccountName: "ghost" },
    });
    expect(generated.body.message).toMatch(/^pods "web-" is forbidden: /);
  });

  it("gives the pod its account's image pull secrets when it names none", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns, "puller", { imagePullSecrets: [{ name: "registry" }] });
    const inherited = await t.api.post(podsPath(ns), pod("a", { serviceAccountName: "puller" }));
    expect(inherited.body.spec.imagePullSecrets).toEqual([{ name: "registry" }]);
    const own = await t.api.post(podsPath(ns), pod("b", { serviceAccountName: "puller", imagePullSecrets: [{ name: "mine" }] }));
    expect(own.body.spec.imagePullSecrets).toEqual([{ name: "mine" }]);
  });

  it("enforces mountable secrets when the account is annotated so", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns, "strict", {
      metadata: { annotations: { "orch.io/enforce-mountable-secrets": "true" } },
      secrets: [{ name: "allowed" }],
    });
    const refused = async (spec: Record<string, unknown>, why: string) => {
      const r = await t.api.post(podsPath(ns), pod("p", { serviceAccountName: "strict", ...spec }));
      expect(r.status, r.text).toBe(403);
      expect(r.body.message).toBe(`pods "p" is forbidden: ${why}`);
    };
    await refused(
      { volumes: [{ name: "s", secret: { secretName: "other" } }] },
      'volume with secret.secretName="other" is not allowed because service account strict does not reference that secret',
    );
    await refused(
      { containers: [{ name: "c", image: "nginx", env: [{ name: "PW", valueFrom: { secretKeyRef: { name: "other", key: "k" } } }] }] },
      'container c with envVar PW referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    );
    await refused(
      { initContainers: [{ name: "i", image: "busybox", envFrom: [{ secretRef: { name: "other" } }] }] },
      'init container i with envFrom referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    );
    await refused(
      { imagePullSecrets: [{ name: "other" }] },
      'imagePullSecrets[0].name="other" is not allowed because service account strict does not reference that imagePullSecret',
    );
    const ok = await t.api.post(
      podsPath(ns),
      pod("ok", { serviceAccountName: "strict", volumes: [{ name: "s", secret: { secretName: "allowed" } }] }),
    );
    expect(ok.status, ok.text).toBe(201);
  });

  it("refuses mirror pods that name an account or a secret", async () => {
    const ns = await freshNamespace(t.api);
    const mirror = { "orch.io/config.mirror": "hash" };
    const withAccount = await t.api.post(podsPath(ns), {
      ...pod("m1", { serviceAccountName: "default" }),
      metadata: { name: "m1", annotations: mirror },
    });
    expect(withAccount.body.message).toBe('pods "m1" is forbidden: a mirror pod may not reference service accounts');
    const withSecret = await t.api.post(podsPath(ns), {
      ...pod("m2", { volumes: [{ name: "s", secret: { secretName: "x" } }] }),
      metadata: { name: "m2", annotations: mirror },
    });
    expect(withSecret.body.message).toBe('pods "m2" is forbidden: a mirror pod may not reference secrets');
    const plain = await t.api.post(podsPath(ns), { ...pod("m3"), metadata: { name: "m3", annotations: mirror } });
    expect(plain.status, plain.text).toBe(201);
    expect(plain.body.spec.serviceAccountName).toBeUndefined();
    expect(plain.body.spec.volumes ?? []).toEqual([]);
  });

  it("still validates a pod template's serviceAccountName (no account lookup for templates)", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(`/api/v1/namespaces/${ns}/podtemplates`, {
      apiVersion: "v1",
      kind: "PodTemplate",
      metadata: { name: "tpl" },
      template: { spec: { serviceAccountName: "Bad_SA", containers: [{ name: "c", image: "nginx" }] } },
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["template.spec.serviceAccountName"]);
  });
});

describe("root CA publisher", () => {
  it("puts the cluster CA into every namespace as orch-root-ca.crt, and puts it back when changed or deleted", async () => {
    const ns = await freshNamespace(t.api);
    const path = `/api/v1/namespaces/${ns}/configmaps/orch-root-ca.crt`;
    const published = await eventually(async () => {
      const r = await t.api.get(path);
      return r.status === 200 ? r.body : undefined;
    });
    const ca = await readFile(join(t.dataDir, "pki", "ca.crt"), "utf8");
    expect(new X509Certificate(published.data["ca.crt"]).fingerprint256).toBe(new X509Certificate(ca).fingerprint256);
    expect(published.metadata.annotations["orch.io/description"]).toMatch(/^Contains a CA bundle/);

    const tampered = await t.api.patch(path, { data: { "ca.crt": "not a CA" } }, "application/merge-patch+json");
    expect(tampered.status, tampered.text).toBe(200);
    await eventually(async () => ((await t.api.get(path)).body.data?.["ca.crt"] === published.data["ca.crt"] ? true : undefined));

    expect((await t.api.delete(path)).status).toBe(200);
    await eventually(async () => ((await t.api.get(path)).status === 200 ? true : undefined));
  });
});
