// Writes without a resourceVersion precondition retry on conflict, as Kubernetes' GuaranteedUpdate: many
// writers patching, applying or replacing one object at once all succeed and no change is lost; with a
// precondition a stale write is still a 409.
import { describe, expect, it } from "vitest";
import { type Client, deployment, freshNamespace, paths, secret, useTestServer } from "./harness.js";

const t = useTestServer();

const WRITERS = 8;
const WRITES = 100;

/** Runs `write(i)` for i in 0..WRITES-1, spread over WRITERS concurrent writers; returns every status. */
async function concurrently(write: (i: number) => Promise<{ status: number; text: string }>): Promise<number[]> {
  const statuses: number[] = [];
  const writer = async (w: number) => {
    for (let i = w; i < WRITES; i += WRITERS) {
      const r = await write(i);
      statuses[i] = r.status;
      if (r.status !== 200) throw new Error(`write ${i}: ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  return statuses;
}

async function createSecret(api: Client, ns: string, name: string) {
  const r = await api.post(paths.secrets(ns), secret(name));
  expect(r.status).toBe(201);
  return `${paths.secrets(ns)}/${name}`;
}

const expectedKeys = Array.from({ length: WRITES }, (_, i) => `k${i}`).sort();

describe("patches without a precondition retry on conflict", () => {
  it.each([
    ["merge", "application/merge-patch+json", (i: number) => ({ metadata: { annotations: { [`k${i}`]: "v" } } })],
    ["strategic merge", "application/strategic-merge-patch+json", (i: number) => ({ metadata: { annotations: { [`k${i}`]: "v" } } })],
    ["JSON", "application/json-patch+json", (i: number) => [{ op: "add", path: `/metadata/annotations/k${i}`, value: "v" }]],
  ])("%s patch: 100 concurrent patches by 8 writers all succeed, none lost", async (_name, type, patchOf) => {
    const ns = await freshNamespace(t.api);
    const path = await createSecret(t.api, ns, "target");
    // A JSON patch's "add" needs the parent map to exist.
    expect((await t.api.patch(path, { metadata: { annotations: { seed: "v" } } })).status).toBe(200);
    const statuses = await concurrently((i) => t.api.patch(path, patchOf(i), type));
    expect(statuses.every((s) => s === 200)).toBe(true);
    const final = await t.api.get(path);
    expect(
      Object.keys(final.body.metadata.annotations)
        .filter((k) => k !== "seed")
        .sort(),
    ).toEqual(expectedKeys);
  });

  it("server-side apply: 8 field managers applying 100 times at once all succeed, none lost", async () => {
    const ns = await freshNamespace(t.api);
    const path = await createSecret(t.api, ns, "applied");
    const owned: Record<number, Record<string, string>> = {};
    const statuses = await concurrently((i) => {
      // Each manager applies everything it has set so far: what it leaves out, it would remove.
      const manager = i % WRITERS;
      owned[manager] = { ...owned[manager], [`k${i}`]: "v" };
      const config = { apiVersion: "v1", kind: "Secret", metadata: { name: "applied", annotations: owned[manager] } };
      return t.api.patch(`${path}?fieldManager=writer-${manager}`, config, "application/apply-patch+yaml");
    });
    expect(statuses.every((s) => s === 200)).toBe(true);
    const final = await t.api.get(path);
    expect(Object.keys(final.body.metadata.annotations).sort()).toEqual(expectedKeys);
  });

  it("a user's patches racing a controller's status writes all succeed", async () => {
    const ns = await freshNamespace(t.api);
    const base = paths.deployments(ns);
    expect((await t.api.post(base, deployment("web"))).status).toBe(201);
    const statuses = await concurrently((i) =>
      i % 2 === 0
        ? t.api.patch(`${base}/web`, { metadata: { labels: { [`k${i}`]: "v" } } })
        : t.api.patch(`${base}/web/status`, { status: { observedGeneration: i } }),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    const labels = (await t.api.get(`${base}/web`)).body.metadata.labels;
    const userKeys = expectedKeys.filter((k) => Number(k.slice(1)) % 2 === 0);
    expect(Object.keys(labels).sort()).toEqual(userKeys);
  });

  it("PUTs without a resourceVersion: 100 concurrent replacements all succeed", async () => {
    const ns = await freshNamespace(t.api);
    const path = await createSecret(t.api, ns, "replaced");
    const statuses = await concurrently((i) => t.api.put(path, secret("replaced", { writer: `w${i % WRITERS}` }, { n: "MQ==" })));
    expect(statuses.every((s) => s === 200)).toBe(true);
  });
});

describe("a resourceVersion precondition still conflicts", () => {
  it("a PUT with a stale resourceVersion is a 409", async () => {
    const ns = await freshNamespace(t.api);
    const path = await createSecret(t.api, ns, "stale");
    const before = (await t.api.get(path)).body;
    expect((await t.api.patch(path, { metadata: { labels: { a: "b" } } })).status).toBe(200);
    const r = await t.api.put(path, before);
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(
      'Operation cannot be fulfilled on secrets "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it("a patch that sets a stale resourceVersion is a 409", async () => {
    const ns = await freshNamespace(t.api);
    const path = await createSecret(t.api, ns, "stale-patch");
    const rv = (await t.api.get(path)).body.metadata.resourceVersion;
    expect((await t.api.patch(path, { metadata: { labels: { a: "b" } } })).status).toBe(200);
    const r = await t.api.patch(path, { metadata: { resourceVersion: rv, labels: { c: "d" } } });
    expect(r.status).toBe(409);
  });
});
