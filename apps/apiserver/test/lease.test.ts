// Lease (coordination.<domain>/v1), the lock controllers elect leaders with.
import { describe, expect, it } from "vitest";
import { freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();
const leases = (ns: string) => `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
const lease = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "coordination.orch.io/v1",
  kind: "Lease",
  metadata: { name },
  spec,
});

describe("Lease", () => {
  it("is created by a PUT, as Kubernetes allows for leases, and updated with optimistic concurrency", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.put(`${leases(ns)}/controller`, lease("controller", { holderIdentity: "a", leaseDurationSeconds: 15 }));
    expect(created.status).toBe(201);
    const taken = await t.api.put(`${leases(ns)}/controller`, { ...created.body, spec: { ...created.body.spec, holderIdentity: "b" } });
    expect(taken.status).toBe(200);
    const stale = await t.api.put(`${leases(ns)}/controller`, { ...created.body, spec: { ...created.body.spec, holderIdentity: "c" } });
    expect(stale.status).toBe(409);
    expect((await t.api.get(`${leases(ns)}/controller`)).body.spec.holderIdentity).toBe("b");
  });

  it("refuses a non-positive lease duration", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(leases(ns), lease("bad", { leaseDurationSeconds: 0 }));
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      { reason: "FieldValueInvalid", message: "Invalid value: 0: must be greater than 0", field: "spec.leaseDurationSeconds" },
    ]);
  });
});
