// Objects too large for the NATS server's max_payload travel as their identity; the informer reads
// them from the API, so its cache still holds the whole object and no later event waits behind it.
import { describe, expect, it } from "vitest";
import { type Secret, freshNamespace, secret, secrets, useCluster, waitFor } from "./helpers.js";
import { informer } from "./informer-helpers.js";

const c = useCluster({}, { maxPayload: 64 * 1024 });

describe("Informer (nats) with objects larger than max_payload", () => {
  it("caches the whole object, in order with the events around it", async () => {
    const ns = await freshNamespace(c.client);
    const { informer: inf, recorder, errors } = informer<Secret>(c, "nats", { ref: secrets, namespace: ns });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      const blob = Buffer.alloc(100 * 1024, 7).toString("base64");
      await c.client.create(secrets, secret("before"), { namespace: ns });
      const big = await c.client.create(secrets, secret("big", {}, { blob }), { namespace: ns });
      const after = await c.client.create(secrets, secret("after"), { namespace: ns });
      await waitFor("all three events", () => inf.revision >= Number(after.metadata!.resourceVersion));
      expect(recorder.calls.map((x) => `${x.op} ${x.key.split("/")[1]}`)).toEqual(["add before", "add big", "add after"]);
      expect(inf.get("big", ns)).toEqual(big);
      await c.client.delete(secrets, "big", { namespace: ns });
      await waitFor("the delete", () => inf.get("big", ns) === undefined);
      expect(errors).toEqual([]);
    } finally {
      await inf.stop();
    }
  });
});
