// Content negotiation: JSON and YAML in both directions, 406, pretty, and the Table kubectl asks for.
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { freshNamespace, secret, useTestServer, paths } from "./harness.js";

const t = useTestServer();

const deploys = paths.deployments;
const secrets = paths.secrets;

const DEPLOYMENT_YAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: from-yaml
  labels:
    app: y
spec:
  replicas: 2
  selector:
    matchLabels:
      app: y
  template:
    metadata:
      labels:
        app: y
    spec:
      containers:
      - name: c
        image: nginx
`;

describe("YAML", () => {
  it("a YAML request body is accepted; a YAML response when asked for", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.request("POST", deploys(ns), {
      raw: DEPLOYMENT_YAML,
      contentType: "application/yaml",
      accept: "application/yaml",
    });
    expect(r.status).toBe(201);
    expect(r.headers["content-type"]).toMatch(/^application\/yaml/);
    expect(r.text).toMatch(/^apiVersion: apps\/v1\n/m);
    expect(r.body.spec.replicas).toBe(2);
    expect(r.body.metadata.uid).toBeTruthy();

    const got = await t.api.get(`${deploys(ns)}/from-yaml`, { accept: "application/yaml" });
    expect(got.headers["content-type"]).toMatch(/^application\/yaml/);
    expect(parseYaml(got.text).metadata.name).toBe("from-yaml");

    const list = await t.api.get(deploys(ns), { accept: "application/yaml" });
    expect(list.body.kind).toBe("DeploymentList");
    expect(list.body.items).toHaveLength(1);
  });

  it("errors come back as a YAML Status when YAML is asked for", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`${deploys(ns)}/missing`, { accept: "application/yaml" });
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toMatch(/^application\/yaml/);
    expect(r.body).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });

  it("a YAML update and a duplicate YAML key warning", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.request("POST", deploys(ns), { raw: DEPLOYMENT_YAML, contentType: "application/yaml" });
    const r = await t.api.request("PUT", `${deploys(ns)}/from-yaml`, {
      raw: DEPLOYMENT_YAML.replace("replicas: 2", "replicas: 3\n  replicas: 4"),
      contentType: "application/yaml",
    });
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(4);
    expect(r.warnings).toEqual(['duplicate field "spec.replicas"']);
  });
});

describe("Accept", () => {
  it("an unsupported Accept → 406 NotAcceptable (as JSON)", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(secrets(ns), { accept: "text/html" });
    expect(r.status).toBe(406);
    expect(r.headers["content-type"]).toMatch(/^application\/json/);
    expect(r.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "NotAcceptable",
      message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
      code: 406,
    });
  });

  it("*/*, application/* and a list with a supported type are fine", async () => {
    const ns = await freshNamespace(t.api);
    for (const accept of ["*/*", "application/*", "text/html, application/json;q=0.9", "application/json;charset=utf-8"]) {
      const r = await t.api.get(secrets(ns), { accept });
      expect(r.status, accept).toBe(200);
      expect(r.headers["content-type"]).toMatch(/^application\/json/);
    }
  });

  it("pretty=true indents JSON", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("p"));
    const r = await t.api.get(`${secrets(ns)}/p?pretty=true`);
    expect(r.text).toMatch(/^\{\n {2}"/);
    expect(r.body.metadata.name).toBe("p");
  });

  it("the Table kubectl asks for: columns, and rows carrying PartialObjectMetadata", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("tbl"));
    const r = await t.api.get(secrets(ns), {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
    });
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe("Table");
    expect(r.body.apiVersion).toBe("meta.k8s.io/v1");
    expect(r.body.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Type", "Data", "Age"]);
    expect(r.body.rows).toHaveLength(1);
    expect(r.body.rows[0].cells[0]).toBe("tbl");
    expect(r.body.rows[0].object.kind).toBe("PartialObjectMetadata");
    expect(r.body.metadata.resourceVersion).toMatch(/^\d+$/);
  });

  it("a Table's rows carry the object, its metadata or nothing, as includeObject says; PartialObjectMetadata is each object's metadata", async () => {
    const ns = await freshNamespace(t.api);
    for (const name of ["m1", "m2"]) await t.api.post(secrets(ns), secret(name));
    const items = (await t.api.get(secrets(ns))).body.items;
    expect(items).toHaveLength(2);
    const partial = (o: any) => ({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata });
    const table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    const rows = async (query: string) => (await t.api.get(`${secrets(ns)}${query}`, { accept: table })).body.rows;
    expect((await rows("")).map((r: any) => r.object)).toEqual(items.map(partial));
    expect((await rows("?includeObject=Object")).map((r: any) => r.object)).toEqual(items);
    expect((await rows("?includeObject=None")).map((r: any) => Object.keys(r))).toEqual([["cells"], ["cells"]]);
    // One object's Table, indented: the spliced text is parsed back and written again.
    const one = await t.api.get(`${secrets(ns)}/m1?pretty=true`, { accept: table });
    expect(one.body.rows[0].object).toEqual(partial(items[0]));
    expect(one.body.metadata.resourceVersion).toBe(items[0].metadata.resourceVersion);
    const list = await t.api.get(secrets(ns), { accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io" });
    expect(list.body.kind).toBe("PartialObjectMetadataList");
    expect(list.body.items).toEqual(items.map(partial));
    const single = await t.api.get(`${secrets(ns)}/m2`, { accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io" });
    expect(single.body).toEqual(partial(items[1]));
  });

  it("a watch with the Table Accept (kubectl get -w) streams one-row Tables as JSON", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("row"));
    const w = await t.api.watch(secrets(ns), { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" });
    expect(w.headers["content-type"]).toBe("application/json");
    const e = await w.next();
    expect(e.type).toBe("ADDED");
    expect(e.object.kind).toBe("Table");
    expect(e.object.rows).toHaveLength(1);
    expect(e.object.rows[0].cells[0]).toBe("row");
    w.close();
  });
});
