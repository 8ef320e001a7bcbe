// The path forms real clients send: a trailing slash on /version and on the discovery paths answers as
// without it (go-restful and kube-aggregator ignore it in Kubernetes), and on a resource path too.
import { describe, expect, it } from "vitest";
import { freshNamespace, paths, secret, useTestServer } from "./harness.js";

const t = useTestServer();

describe("a trailing slash", () => {
  it.each([
    ["/version", "gitVersion"],
    ["/api", "APIVersions"],
    ["/apis", "APIGroupList"],
    ["/api/v1", "APIResourceList"],
    ["/apis/apps", "APIGroup"],
    ["/apis/apps/v1", "APIResourceList"],
  ])("%s/ answers as %s", async (path, expected) => {
    const plain = await t.api.get(path);
    const slashed = await t.api.get(`${path}/`);
    expect(plain.status).toBe(200);
    expect(slashed.status).toBe(200);
    expect(slashed.body).toEqual(plain.body);
    expect(expected === "gitVersion" ? Object.keys(slashed.body) : slashed.body.kind).toContain(expected);
  });

  it("an unknown group or version stays a 404 with or without it", async () => {
    expect((await t.api.get("/apis/nothing.example.com/")).status).toBe(404);
    expect((await t.api.get("/apis/apps/v9/")).status).toBe(404);
  });

  it("a resource collection and an object answer as without it", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(`${paths.secrets(ns)}/`, secret("s"))).status).toBe(201);
    const list = await t.api.get(`${paths.secrets(ns)}/`);
    expect([list.status, list.body.kind, list.body.items.length]).toEqual([200, "SecretList", 1]);
    const one = await t.api.get(`${paths.secrets(ns)}/s/`);
    expect([one.status, one.body.metadata.name]).toEqual([200, "s"]);
  });
});

describe("the deprecated /watch/ prefix", () => {
  /** Lines of a watch that a negative timeoutSeconds ends once the queued events are out. */
  const events = (text: string) =>
    text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } })
      .map((e) => `${e.type} ${e.object.metadata.name}`);

  it("watches a collection, or the one object named", async () => {
    const ns = await freshNamespace(t.api);
    for (const name of ["a", "b"]) expect((await t.api.post(paths.secrets(ns), secret(name))).status).toBe(201);
    const all = await t.api.get(`/api/v1/watch/namespaces/${ns}/secrets?timeoutSeconds=-1`);
    expect([all.status, events(all.text).sort()]).toEqual([200, ["ADDED a", "ADDED b"]]);
    const one = await t.api.get(`/api/v1/watch/namespaces/${ns}/secrets/b?timeoutSeconds=-1`);
    expect([one.status, events(one.text)]).toEqual([200, ["ADDED b"]]);
  });

  it("refuses a field selector naming another object", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`/api/v1/watch/namespaces/${ns}/secrets/b?fieldSelector=metadata.name%3Dc`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("fieldSelector metadata.name doesn't match requested name");
  });
});
