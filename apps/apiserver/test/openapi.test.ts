// /openapi/v3 and /openapi/v2 as kubectl and client generators read them: field schemas of built-in kinds
// (from libs/api's valibot schemas) and of custom resources (from their CRDs), the v3 discovery document
// with hashed URLs, ETags and 304s, and the real kubectl's `explain` and `apply --validate=strict`.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Client, type TestServer, sleep, useTestServer } from "./harness.js";

const t = useTestServer();
const GROUP = `openapi${process.pid}.example.com`;
const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";

/** A CRD with nested objects, a map list and a preserved field, Established as the crd-controller would. */
async function defineWidgets(api: Client): Promise<void> {
  const created = await api.post(CRDS, {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: "A Widget is a thing with gears.",
              properties: {
                spec: {
                  type: "object",
                  description: "What the widget should be.",
                  required: ["size"],
                  properties: {
                    size: { type: "integer", description: "How big the widget is." },
                    gears: {
                      type: "array",
                      description: "The gears, by name.",
                      "x-orch-list-type": "map",
                      "x-orch-list-map-keys": ["name"],
                      items: {
                        type: "object",
                        required: ["name"],
                        properties: {
                          name: { type: "string" },
                          teeth: {
                            type: "object",
                            description: "Tooth geometry.",
                            properties: { count: { type: "integer", description: "Number of teeth." } },
                          },
                        },
                      },
                    },
                    extra: { type: "object", "x-orch-preserve-unknown-fields": true },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });
  if (created.status !== 201) throw new Error(`creating the CRD: ${created.status} ${created.text}`);
  const crd = created.body;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  crd.status = {
    acceptedNames: crd.spec.names,
    conditions: [
      { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "", lastTransitionTime: now },
      { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "", lastTransitionTime: now },
    ],
  };
  const established = await api.put(`${CRDS}/widgets.${GROUP}/status`, crd);
  if (established.status !== 200) throw new Error(`establishing the CRD: ${established.status} ${established.text}`);
  for (let i = 0; i < 100 && (await api.get(`/apis/${GROUP}/v1/namespaces/default/widgets`)).status !== 200; i++) await sleep(20);
}

beforeAll(() => defineWidgets(t.api));

type Schemas = Record<string, any>;
const schemasOf = async (path: string): Promise<Schemas> => (await t.api.get(path)).body.components.schemas;
const byGvk = (schemas: Schemas, group: string, version: string, kind: string) =>
  Object.entries(schemas).find(([, s]) =>
    (s["x-kubernetes-group-version-kind"] ?? []).some((g: any) => g.group === group && g.version === version && g.kind === kind),
  );
const resolve = (schemas: Schemas, s: any): any => {
  const target = s.$ref ?? s.allOf?.[0]?.$ref;
  return target ? schemas[target.replace("#/components/schemas/", "")] : s;
};

describe("/openapi/v3", () => {
  it("lists every group-version with a URL carrying its content hash", async () => {
    const root = await t.api.get("/openapi/v3");
    expect(root.status).toBe(200);
    expect(root.body.paths["apis/apps/v1"].serverRelativeURL).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    expect(root.body.paths["api/v1"].serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=/);
  });

  it("has, in every group-version document, a schema for each kind its operations name, and no dangling $ref", async () => {
    const root = (await t.api.get("/openapi/v3")).body;
    const kinds = new Set<string>();
    for (const { serverRelativeURL } of Object.values<any>(root.paths)) {
      const doc = (await t.api.get(serverRelativeURL)).body;
      const schemas: Schemas = doc.components.schemas;
      for (const r of JSON.stringify(doc).match(/#\/components\/schemas\/[^"]+/g) ?? []) {
        expect(schemas[r.slice("#/components/schemas/".length)], `${serverRelativeURL}: ${r}`).toBeDefined();
      }
      for (const item of Object.values<any>(doc.paths)) {
        for (const op of Object.values<any>(item)) {
          const { group, version, kind } = op["x-kubernetes-group-version-kind"];
          expect(byGvk(schemas, group, version, kind), `${group}/${version} ${kind}`).toBeDefined();
          kinds.add(`${group}/${version}/${kind}`);
        }
      }
    }
    // The registry's kinds (discovery) are all there.
    const discovered = (await t.api.get("/apis/apps/v1")).body.resources.filter((r: any) => !r.name.includes("/"));
    for (const r of discovered) expect(kinds).toContain(`apps/v1/${r.kind}`);
    expect(kinds).toContain("/v1/Pod");
  });

  it("gives built-in kinds their field schemas, with references, list semantics and patch metadata", async () => {
    const schemas = await schemasOf("/openapi/v3/apis/apps/v1");
    const [, deployment] = byGvk(schemas, "apps", "v1", "Deployment")!;
    expect(resolve(schemas, deployment.properties.metadata)).toBe(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]);
    const spec = resolve(schemas, deployment.properties.spec);
    expect(spec.properties.replicas).toEqual({ type: "integer", format: "int32" });
    expect(spec.properties.strategy["x-kubernetes-patch-strategy"]).toBe("retainKeys");
    const rollingUpdate = resolve(schemas, resolve(schemas, spec.properties.strategy).properties.rollingUpdate);
    expect(rollingUpdate.properties.maxSurge.$ref).toBe("#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString");
    expect(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].format).toBe("int-or-string");
    const podSpec = schemas["io.k8s.api.core.v1.PodSpec"];
    expect(podSpec.properties.containers).toMatchObject({
      type: "array",
      items: { $ref: "#/components/schemas/io.k8s.api.core.v1.Container" },
      "x-kubernetes-patch-strategy": "merge",
      "x-kubernetes-patch-merge-key": "name",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    });
    expect(schemas["io.k8s.api.core.v1.Container"].required).toEqual(["name"]);
    expect(schemas["io.k8s.api.core.v1.ResourceRequirements"].properties.limits.additionalProperties.$ref).toBe(
      "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity",
    );
    // Every reference resolves inside the document.
    const refs = JSON.stringify(schemas).match(/#\/components\/schemas\/[^"]+/g)!;
    for (const r of refs) expect(schemas[r.slice("#/components/schemas/".length)], r).toBeDefined();
  });

  it("offers strategic merge patch for built-in kinds only, and fieldValidation on writes", async () => {
    const apps = (await t.api.get("/openapi/v3/apis/apps/v1")).body;
    const patch = apps.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    expect(Object.keys(patch.requestBody.content)).toContain("application/strategic-merge-patch+json");
    expect(patch.parameters.map((p: any) => p.name)).toContain("fieldValidation");
    const custom = (await t.api.get(`/openapi/v3/apis/${GROUP}/v1`)).body;
    const crPatch = custom.paths[`/apis/${GROUP}/v1/namespaces/{namespace}/widgets/{name}`].patch;
    expect(Object.keys(crPatch.requestBody.content).sort()).toEqual([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json",
    ]);
  });

  it("publishes a CRD version's schema with apiVersion, kind, an ObjectMeta reference and its GVK", async () => {
    const root = await t.api.get("/openapi/v3");
    const url = root.body.paths[`apis/${GROUP}/v1`].serverRelativeURL;
    const schemas = await schemasOf(url);
    const [name, widget] = byGvk(schemas, GROUP, "v1", "Widget")!;
    expect(name).toBe(`${GROUP.split(".").reverse().join(".")}.v1.Widget`);
    expect(widget.properties.apiVersion.type).toBe("string");
    expect(resolve(schemas, widget.properties.metadata)).toBe(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]);
    expect(widget.properties.spec.properties.gears["x-kubernetes-list-type"]).toBe("map");
    expect(widget.properties.spec.properties.extra["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    expect(JSON.stringify(widget)).not.toContain("x-orch-");
    expect(byGvk(schemas, GROUP, "v1", "WidgetList")).toBeDefined();
  });

  it("follows CRD changes: a new version is listed with a new hash, a deleted CRD disappears", async () => {
    const before = (await t.api.get("/openapi/v3")).body.paths[`apis/${GROUP}/v1`].serverRelativeURL;
    const crd = (await t.api.get(`${CRDS}/widgets.${GROUP}`)).body;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.color = { type: "string", description: "Paint." };
    expect((await t.api.put(`${CRDS}/widgets.${GROUP}`, crd)).status).toBe(200);
    let after = before;
    for (let i = 0; i < 100 && after === before; i++, await sleep(20)) {
      after = (await t.api.get("/openapi/v3")).body.paths[`apis/${GROUP}/v1`].serverRelativeURL;
    }
    expect(after).not.toBe(before);
    const [, widget] = byGvk(await schemasOf(after), GROUP, "v1", "Widget")!;
    expect(widget.properties.spec.properties.color.description).toBe("Paint.");
    // The old hash redirects to the current document, as kube-openapi's handler does.
    const stale = await t.api.get(before);
    expect(stale.status).toBe(301);
    expect(stale.headers.location).toBe(after);
  });

  it("answers with an ETag, 304 to If-None-Match, and immutable caching for a hashed URL", async () => {
    const url = (await t.api.get("/openapi/v3")).body.paths["apis/apps/v1"].serverRelativeURL;
    const first = await t.api.get(url);
    expect(first.status).toBe(200);
    expect(first.headers.etag).toBe(`"${url.split("hash=")[1]}"`);
    expect(first.headers["cache-control"]).toBe("public, immutable");
    expect(first.headers.vary).toBe("Accept");
    const again = await t.api.get(url, { headers: { "If-None-Match": first.headers.etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    const unhashed = await t.api.get("/openapi/v3/apis/apps/v1");
    expect(unhashed.headers["cache-control"]).toBeUndefined();
    expect((await t.api.get("/openapi/v3/apis/apps/v1", { headers: { "If-None-Match": '"other"' } })).status).toBe(200);
    const root = await t.api.get("/openapi/v3");
    expect((await t.api.get("/openapi/v3", { headers: { "If-None-Match": root.headers.etag! } })).status).toBe(304);
    expect((await t.api.get("/openapi/v3/apis/nothing.example.com/v1")).status).toBe(404);
  });
});

describe("/openapi/v2", () => {
  it("is a Swagger 2.0 document with definitions for built-in kinds and custom resources", async () => {
    const v2 = await t.api.get("/openapi/v2", { accept: "application/json" });
    expect(v2.status).toBe(200);
    expect(v2.body.swagger).toBe("2.0");
    const definitions = v2.body.definitions;
    expect(definitions["io.k8s.api.apps.v1.DeploymentSpec"].properties.strategy).toMatchObject({
      $ref: "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy",
      "x-kubernetes-patch-strategy": "retainKeys",
    });
    expect(definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]).toMatchObject({ type: "string", format: "int-or-string" });
    expect(JSON.stringify(v2.body)).not.toContain("#/components/");
    const widget = Object.values<any>(definitions).find((d) => d["x-kubernetes-group-version-kind"]?.[0]?.kind === "Widget");
    expect(widget.properties.metadata.$ref).toBe("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    const patch = v2.body.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    expect(patch.consumes).toContain("application/strategic-merge-patch+json");
    expect((await t.api.get("/openapi/v2", { accept: "application/json", headers: { "If-None-Match": v2.headers.etag! } })).status).toBe(
      304,
    );
    // client-go's protobuf request gets gnostic's protobuf form, with a Content-Type Go's mime parser accepts
    // (no `@`) and the JSON's ETag, as from kube-openapi.
    const protobuf = await t.api.get("/openapi/v2", { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" });
    expect([protobuf.status, protobuf.headers["content-type"]]).toEqual([
      200,
      "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ]);
    expect(protobuf.headers.etag).toBe(v2.headers.etag);
    expect((await t.api.get("/openapi/v2", { accept: "text/html" })).status).toBe(406);
  });
});

/** kubectl against the test server, with a cache of its own. */
function kubectl(server: TestServer, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) =>
    execFile(
      "kubectl",
      ["--kubeconfig", server.server.kubeconfigPath, "--cache-dir", join(server.dataDir, "kubectl-cache"), ...args],
      { timeout: 60_000 },
      (err, stdout, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe("kubectl", () => {
  it("explains a built-in kind's nested field", async () => {
    const r = await kubectl(t, "explain", "deployment.spec.strategy.rollingUpdate");
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/);
    expect(r.stdout).toMatch(/FIELD: rollingUpdate <RollingUpdateDeployment>/);
    expect(r.stdout).toMatch(/maxSurge\s+<IntOrString>/);
    expect(r.stdout).toMatch(/maxUnavailable\s+<IntOrString>/);
  });

  it("explains a custom resource's fields at any depth, with the CRD's descriptions", async () => {
    const spec = await kubectl(t, "explain", "widgets.spec");
    expect(spec.stderr).toBe("");
    expect(spec.stdout).toMatch(new RegExp(`GROUP:\\s+${GROUP.replace(/\./g, "\\.")}\\nKIND:\\s+Widget\\nVERSION:\\s+v1`));
    expect(spec.stdout).toContain("What the widget should be.");
    expect(spec.stdout).toMatch(/size\s+<integer> -required-/);
    expect(spec.stdout).toMatch(/gears\s+<\[\]Object>/);
    const deep = await kubectl(t, "explain", "widget.spec.gears.teeth.count");
    expect(deep.stdout).toMatch(/FIELD: count <integer>/);
    expect(deep.stdout).toContain("Number of teeth.");
    const meta = await kubectl(t, "explain", "widget.metadata.labels");
    expect(meta.stdout).toMatch(/FIELD: labels <map\[string\]string>/);
    const recursive = await kubectl(t, "explain", "widget.spec", "--recursive");
    expect(recursive.stdout).toMatch(/teeth\s+<Object>\n\s+count\s+<integer>/);
  });

  it("explains from the protobuf /openapi/v2 document too (--output=plaintext-openapiv2)", async () => {
    const builtin = await kubectl(t, "explain", "--output=plaintext-openapiv2", "deployment.spec.strategy");
    expect(builtin.stderr).toBe("");
    expect(builtin.stdout).toMatch(/^KIND:\s+Deployment\nVERSION:\s+apps\/v1\n/);
    expect(builtin.stdout).toMatch(/rollingUpdate\s+<Object>/);
    const custom = await kubectl(t, "explain", "--output=plaintext-openapiv2", "widget.spec.gears.teeth");
    expect(custom.stderr).toBe("");
    expect(custom.stdout).toContain("Tooth geometry.");
    expect(custom.stdout).toMatch(/count\s+<integer>/);
  });

  it("refuses an unknown field of a custom resource under --validate=strict, and applies a valid one", async () => {
    const file = join(t.dataDir, "widget.yaml");
    const widget = (spec: string) => `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n${spec}`;
    writeFileSync(file, widget("  size: 3\n  bogus: 1\n"));
    const refused = await kubectl(t, "apply", "--validate=strict", "-f", file);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('strict decoding error: unknown field "spec.bogus"');
    writeFileSync(file, widget("  size: 3\n  gears:\n  - name: a\n"));
    const applied = await kubectl(t, "apply", "--validate=strict", "-f", file);
    expect(applied.stderr).toBe("");
    expect(applied.stdout).toContain("widget.");
    // A second apply computes a merge patch from the last-applied configuration.
    writeFileSync(file, widget("  size: 4\n  gears:\n  - name: a\n"));
    const configured = await kubectl(t, "apply", "--validate=strict", "-f", file, "-v=7");
    expect(configured.stdout).toContain("configured");
    // As in Kubernetes: a custom resource takes no strategic merge patch, so kubectl sends a JSON merge patch.
    expect(configured.stderr).toMatch(/Content-Type: application\/merge-patch\+json/);
    expect((await t.api.get(`/apis/${GROUP}/v1/namespaces/default/widgets/w1`)).body.spec.size).toBe(4);
  });

  it("applies a Deployment with strategic merge patches computed from the published patch metadata", async () => {
    const file = join(t.dataDir, "deployment.yaml");
    const deployment = (strategy: string, env: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: smp\n  namespace: default\nspec:\n  selector:\n    matchLabels: {app: smp}\n${strategy}  template:\n    metadata:\n      labels: {app: smp}\n    spec:\n      containers:\n      - name: app\n        image: nginx\n        env:\n${env}`;
    writeFileSync(file, deployment("", "        - {name: A, value: a}\n        - {name: B, value: b}\n"));
    expect((await kubectl(t, "apply", "-f", file)).stderr).toBe("");
    // A strategy type change clears rollingUpdate (retainKeys); a removed env var goes (merge by name).
    writeFileSync(file, deployment("  strategy:\n    type: Recreate\n", "        - {name: A, value: a2}\n"));
    const second = await kubectl(t, "apply", "-f", file, "-v=7");
    expect(second.stderr).not.toContain("error calculating patch");
    expect(second.stderr).toMatch(/Content-Type: application\/strategic-merge-patch\+json/);
    const stored = (await t.api.get("/apis/apps/v1/namespaces/default/deployments/smp")).body;
    expect(stored.spec.strategy).toEqual({ type: "Recreate" });
    expect(stored.spec.template.spec.containers[0].env).toEqual([{ name: "A", value: "a2" }]);
  });

  it("applies a kind of an orch group, unknown to kubectl's compiled-in types, with a strategic merge patch", async () => {
    const file = join(t.dataDir, "priorityclass.yaml");
    const priorityClass = (labels: string, extra: string) =>
      `apiVersion: scheduling.orch.io/v1\nkind: PriorityClass\nmetadata:\n  name: batch\n  labels: {${labels}}\nvalue: 1000\n${extra}`;
    writeFileSync(file, priorityClass("use: batch, tier: low", "description: nightly jobs\n"));
    expect((await kubectl(t, "apply", "-f", file)).stderr).toBe("");
    writeFileSync(file, priorityClass("use: batch", ""));
    const configured = await kubectl(t, "apply", "-f", file, "-v=7");
    expect(configured.stderr).toMatch(/Content-Type: application\/strategic-merge-patch\+json/);
    const stored = (await t.api.get("/apis/scheduling.orch.io/v1/priorityclasses/batch")).body;
    expect([stored.description, stored.metadata.labels]).toEqual([undefined, { use: "batch" }]);
  });
});
