// Expired history: an apiserver that keeps only a few revisions answers old watches, lists and
// continue tokens with 410 Expired as Kubernetes does after etcd compaction.
import { eventually } from "@orch/testing";
import { describe, expect, it } from "vitest";
import { freshNamespace, secret, useTestServer, paths } from "./harness.js";

const t = useTestServer({ history: { maxRevisions: 3, compactEveryMs: 50 } });

const secrets = paths.secrets;
const q = (s: string) => encodeURIComponent(s);

/** Makes enough revisions, then waits until the revision `rv` is compacted away. */
async function outlive(ns: string, rv: string): Promise<void> {
  for (let i = 0; i < 6; i++) await t.api.post(secrets(ns), secret(`churn-${rv}-${i}`));
  await eventually(
    `revision ${rv} to be compacted`,
    async () => (await t.api.get(`${secrets(ns)}?resourceVersion=${rv}&resourceVersionMatch=Exact`)).status === 410,
  );
}

describe("compacted history", () => {
  it("a watch from a compacted revision → 200 and one ERROR event with a 410 Expired Status", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.post(secrets(ns), secret("old"))).body.metadata.resourceVersion;
    await outlive(ns, rv);
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    const e = await w.next();
    expect(e.type).toBe("ERROR");
    expect(e.object).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", code: 410 });
    expect(e.object.message).toMatch(new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`));
    await w.ended;
  });

  it("a list at an exact compacted revision → 410 Expired", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.post(secrets(ns), secret("old"))).body.metadata.resourceVersion;
    await outlive(ns, rv);
    const r = await t.api.get(`${secrets(ns)}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(r.status).toBe(410);
    expect(r.body).toMatchObject({ kind: "Status", reason: "Expired", code: 410 });
  });

  it("an expired continue token → 410 with a token that continues at the latest state", async () => {
    const ns = await freshNamespace(t.api);
    for (const n of ["a", "b", "c"]) await t.api.post(secrets(ns), secret(n));
    const first = await t.api.get(`${secrets(ns)}?limit=1&labelSelector=!churn`);
    expect(first.body.items.map((i: any) => i.metadata.name)).toEqual(["a"]);
    await outlive(ns, first.body.metadata.resourceVersion);
    await t.api.delete(`${secrets(ns)}/b`);
    const r = await t.api.get(`${secrets(ns)}?limit=1&continue=${q(first.body.metadata.continue)}`);
    expect(r.status).toBe(410);
    expect(r.body.reason).toBe("Expired");
    expect(r.body.message).toBe(
      "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    const token = JSON.parse(Buffer.from(r.body.metadata.continue, "base64url").toString());
    expect(token).toEqual({ v: "meta.k8s.io/v1", rv: -1, start: "a\u0000" });
    const rest = await t.api.get(`${secrets(ns)}?continue=${q(r.body.metadata.continue)}`);
    expect(rest.status).toBe(200);
    expect(rest.body.items.map((i: any) => i.metadata.name).filter((n: string) => !n.startsWith("churn"))).toEqual(["c"]);
  });

  it("a watch from a recent revision still works", async () => {
    const ns = await freshNamespace(t.api);
    const rv = (await t.api.get(secrets(ns))).body.metadata.resourceVersion;
    const w = await t.api.watch(`${secrets(ns)}?resourceVersion=${rv}`);
    await t.api.post(secrets(ns), secret("fresh"));
    const e = await w.next();
    expect(e.type).toBe("ADDED");
    w.close();
  });
});
