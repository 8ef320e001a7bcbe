// Discovery as kubectl and client-go read it: legacy documents, aggregated v2, /version, health.
import { describe, expect, it } from "vitest";
import { useTestServer } from "./harness.js";

const t = useTestServer();

const AGGREGATED =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

describe("legacy discovery", () => {
  it("/api lists the core versions", async () => {
    const r = await t.api.get("/api");
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^application\/json/);
    expect(r.body.kind).toBe("APIVersions");
    expect(r.body.versions).toEqual(["v1"]);
  });

  it("/api/v1 lists core resources with verbs, scope, short names and subresources", async () => {
    const r = await t.api.get("/api/v1");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: "APIResourceList", apiVersion: "v1", groupVersion: "v1" });
    const byName = new Map(r.body.resources.map((x: any) => [x.name, x]));
    for (const name of ["namespaces", "secrets", "serviceaccounts", "pods", "podtemplates", "replicationcontrollers"]) {
      expect(byName.has(name), name).toBe(true);
    }
    expect(byName.get("namespaces")).toEqual({
      name: "namespaces",
      singularName: "namespace",
      namespaced: false,
      kind: "Namespace",
      verbs: ALL_VERBS,
      shortNames: ["ns"],
    });
    expect(byName.get("pods")).toMatchObject({ namespaced: true, kind: "Pod", shortNames: ["po"], categories: ["all"] });
    expect(byName.get("pods/status")).toEqual({
      name: "pods/status",
      singularName: "",
      namespaced: true,
      kind: "Pod",
      verbs: ["get", "patch", "update"],
    });
    expect(byName.get("replicationcontrollers/status")).toBeDefined();
    expect(byName.get("namespaces/finalize")).toBeDefined();
  });

  it("/apis lists every named group with its preferred version", async () => {
    const r = await t.api.get("/apis");
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe("APIGroupList");
    const groups = new Map(r.body.groups.map((g: any) => [g.name, g]));
    for (const name of ["apps", "certificates.orch.io", "resource.orch.io", "scheduling.orch.io", "apiextensions.orch.io"]) {
      expect(groups.has(name), name).toBe(true);
    }
    expect(groups.get("apps")).toEqual({
      name: "apps",
      versions: [{ groupVersion: "apps/v1", version: "v1" }],
      preferredVersion: { groupVersion: "apps/v1", version: "v1" },
    });
    // GA before beta.
    expect(groups.get("certificates.orch.io")).toEqual({
      name: "certificates.orch.io",
      versions: [
        { groupVersion: "certificates.orch.io/v1", version: "v1" },
        { groupVersion: "certificates.orch.io/v1beta1", version: "v1beta1" },
      ],
      preferredVersion: { groupVersion: "certificates.orch.io/v1", version: "v1" },
    });
  });

  it("/apis/<group> and /apis/<group>/<version>", async () => {
    const g = await t.api.get("/apis/apps");
    expect(g.status).toBe(200);
    expect(g.body).toEqual({
      kind: "APIGroup",
      apiVersion: "v1",
      name: "apps",
      versions: [{ groupVersion: "apps/v1", version: "v1" }],
      preferredVersion: { groupVersion: "apps/v1", version: "v1" },
    });
    const gv = await t.api.get("/apis/apps/v1");
    expect(gv.status).toBe(200);
    expect(gv.body.groupVersion).toBe("apps/v1");
    const names = gv.body.resources.map((x: any) => x.name);
    expect(names).toEqual(expect.arrayContaining(["deployments", "deployments/status", "replicasets", "replicasets/status"]));
    expect(gv.body.resources.find((x: any) => x.name === "deployments")).toEqual({
      name: "deployments",
      singularName: "deployment",
      namespaced: true,
      kind: "Deployment",
      verbs: ALL_VERBS,
      shortNames: ["deploy"],
      categories: ["all"],
    });
    const csr = (await t.api.get("/apis/certificates.orch.io/v1")).body.resources.map((x: any) => x.name);
    expect(csr).toEqual(
      expect.arrayContaining(["certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"]),
    );
    const crd = (await t.api.get("/apis/apiextensions.orch.io/v1")).body.resources;
    expect(crd.find((x: any) => x.name === "customresourcedefinitions")).toMatchObject({ shortNames: ["crd", "crds"], namespaced: false });
  });

  it("unknown groups and versions → 404", async () => {
    expect((await t.api.get("/apis/nope.example.com")).status).toBe(404);
    expect((await t.api.get("/apis/apps/v2")).status).toBe(404);
    expect((await t.api.get("/api/v2")).status).toBe(404);
  });
});

describe("aggregated discovery v2", () => {
  it("/api and /apis with the aggregated Content-Type kubectl requires", async () => {
    const core = await t.api.get("/api", { accept: AGGREGATED });
    expect(core.status).toBe(200);
    expect(core.headers["content-type"]).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    expect(core.body.kind).toBe("APIGroupDiscoveryList");
    expect(core.body.apiVersion).toBe("apidiscovery.k8s.io/v2");
    expect(core.body.items).toHaveLength(1);
    expect(core.body.items[0].metadata.name).toBe("");
    const v1 = core.body.items[0].versions[0];
    expect(v1.version).toBe("v1");
    expect(v1.freshness).toBe("Current");
    const pods = v1.resources.find((x: any) => x.resource === "pods");
    expect(pods).toMatchObject({
      resource: "pods",
      responseKind: { group: "", version: "v1", kind: "Pod" },
      scope: "Namespaced",
      singularResource: "pod",
      verbs: ALL_VERBS,
      shortNames: ["po"],
      categories: ["all"],
      subresources: [
        { subresource: "binding", responseKind: { group: "", version: "v1", kind: "Binding" }, verbs: ["create"] },
        { subresource: "eviction", responseKind: { group: "policy", version: "v1", kind: "Eviction" }, verbs: ["create"] },
        { subresource: "status", responseKind: { group: "", version: "v1", kind: "Pod" }, verbs: ["get", "patch", "update"] },
      ],
    });
    expect(v1.resources.find((x: any) => x.resource === "namespaces").scope).toBe("Cluster");

    const named = await t.api.get("/apis", { accept: AGGREGATED });
    expect(named.headers["content-type"]).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    const apps = named.body.items.find((g: any) => g.metadata.name === "apps");
    expect(apps.versions[0].resources.map((x: any) => x.resource)).toEqual(["deployments", "replicasets"]);
    const certs = named.body.items.find((g: any) => g.metadata.name === "certificates.orch.io");
    expect(certs.versions.map((v: any) => v.version)).toEqual(["v1", "v1beta1"]);
  });

  it("without the aggregated Accept: the legacy documents", async () => {
    const r = await t.api.get("/apis", { accept: "application/json" });
    expect(r.headers["content-type"]).toMatch(/^application\/json(;|$)/);
    expect(r.body.kind).toBe("APIGroupList");
  });
});

describe("version and health", () => {
  it("/version says 1.32 so kubectl's dispatcher runs kubectl 1.32", async () => {
    const r = await t.api.get("/version");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ major: "1", minor: "32" });
    expect(r.body.gitVersion).toMatch(/^v1\.32\./);
  });

  it("/healthz, /livez, /readyz answer ok", async () => {
    for (const path of ["/healthz", "/livez", "/readyz"]) {
      const r = await t.api.get(path);
      expect(r.status).toBe(200);
      expect(r.text).toBe("ok");
    }
  });
});
