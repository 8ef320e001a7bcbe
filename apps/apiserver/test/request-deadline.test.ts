// The request deadline (Kubernetes' --request-timeout): a request still running when it passes is
// answered 504 and its handler stops; watches are not bound by it.
import { expect, it } from "vitest";
import { paths, useTestServer } from "./harness.js";

const t = useTestServer({ requestTimeoutMs: 500 });

it("answers a request that outlives the deadline with a 504 Timeout Status, not the answer its handler would give later", async () => {
  const { body: list } = await t.api.get(paths.secrets("default"));
  const future = Number(list.metadata.resourceVersion) + 1000;
  // A list at a revision not yet committed waits for it up to 3 s, then answers 504 "Too large resource
  // version": the deadline (0.5 s) ends it first, with its own message.
  const r = await t.api.get(`${paths.secrets("default")}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`);
  expect(r.status).toBe(504);
  expect(r.body).toMatchObject({
    kind: "Status",
    status: "Failure",
    reason: "Timeout",
    code: 504,
    message: "Timeout: request did not complete within the allotted timeout",
  });
  // The server goes on answering.
  expect((await t.api.get(paths.secrets("default"))).status).toBe(200);
});

it("does not cut a watch at the deadline", async () => {
  const { body: list } = await t.api.get(paths.secrets("default"));
  const watch = await t.api.watch(`${paths.secrets("default")}?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
  try {
    await new Promise((r) => setTimeout(r, 800)); // longer than the deadline, on purpose
    await t.api.post(paths.secrets("default"), { apiVersion: "v1", kind: "Secret", metadata: { name: "after-deadline" } });
    const event = await watch.next();
    expect(event.type).toBe("ADDED");
    expect(event.object.metadata.name).toBe("after-deadline");
  } finally {
    watch.close();
  }
});
