// Cluster IPs and node ports across two apiserver processes on one PostgreSQL database (created and
// dropped by the test): each allocated value is a record with a unique key in the shared database, so
// Services created at the same moment through both replicas never share an address or a port, a range
// runs out with Kubernetes' error on both, and what a delete or a failed create frees is free on both.
import {
  type ApiserverProcess,
  type PostgresDatabase,
  createPostgresDatabase,
  postgresAvailable,
  startApiserverProcess,
} from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Client, type Reply, adminClient, freshNamespace } from "./harness.js";

const available = await postgresAvailable();
vi.setConfig({ testTimeout: 120_000 });

const services = (ns: string) => `/api/v1/namespaces/${ns}/services`;
const service = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
});
/** Two ports: a NodePort Service of these takes two node ports. */
const nodePortService = (name: string) =>
  service(name, {
    type: "NodePort",
    ports: [
      { port: 80, name: "http" },
      { port: 443, name: "https" },
    ],
  });

const lastOctet = (ip: string) => Number(ip.split(".")[3]);

describe.runIf(available)("Service allocation on two apiservers sharing one PostgreSQL database", () => {
  let db: PostgresDatabase;
  let a: ApiserverProcess;
  let b: ApiserverProcess;
  let apiA: Client;
  let apiB: Client;
  /** Alternately through A and B, all at once. */
  const createThroughBoth = (ns: string, bodies: object[]): Promise<Reply[]> =>
    Promise.all(bodies.map((body, i) => (i % 2 ? apiB : apiA).post(services(ns), body)));
  /** Deletes every Service of `ns` through A; resolves once B has heard of the deletes (a list at their revision). */
  const deleteAllThroughA = async (ns: string, names: string[]) => {
    for (const name of names) expect((await apiA.delete(`${services(ns)}/${name}`)).status).toBe(200);
    const revision = (await apiA.get(services(ns))).body.metadata.resourceVersion;
    expect((await apiB.get(`${services(ns)}?resourceVersion=${revision}`)).body.items).toEqual([]);
  };

  beforeAll(async () => {
    db = await createPostgresDatabase();
    // A /28: 14 addresses, the first the kubernetes Service's; 16 node ports.
    const env = { ORCH_STORAGE: db.url, ORCH_SERVICE_CLUSTER_IP_RANGE: "10.100.0.0/28", ORCH_SERVICE_NODE_PORT_RANGE: "30000-30015" };
    a = await startApiserverProcess({ env });
    b = await startApiserverProcess({ env, sharedDataDir: a.dataDir });
    apiA = adminClient(a.url, a.dataDir);
    apiB = adminClient(b.url, a.dataDir);
  });
  afterAll(async () => {
    apiA?.close();
    apiB?.close();
    await b?.dispose();
    await a?.dispose();
    await db?.drop();
  });

  it("gives one address to one Service, however many ask through either replica, then says the range is full on both", async () => {
    const ns = await freshNamespace(apiA, "alloc");
    // Eight creates asking for the same address: one gets it.
    const same = await createThroughBoth(
      ns,
      Array.from({ length: 8 }, (_, i) => service(`same-${i}`, { clusterIP: "10.100.0.10" })),
    );
    expect(same.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of same.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(422);
      expect(r.body.details.causes).toEqual([
        {
          field: "spec.clusterIPs",
          reason: "FieldValueInvalid",
          message: 'Invalid value: ["10.100.0.10"]: failed to allocate IP 10.100.0.10: provided IP is already allocated',
        },
      ]);
    }
    const holder = same.find((r) => r.status === 201)!.body.metadata.name as string;

    // 12 addresses are left (the kubernetes Service holds 10.100.0.1): 24 creates at once, 12 through each.
    const created = await createThroughBoth(
      ns,
      Array.from({ length: 24 }, (_, i) => service(`s-${i}`)),
    );
    const ok = created.filter((r) => r.status === 201);
    expect(ok).toHaveLength(12);
    const ips = ok.map((r) => r.body.spec.clusterIP as string);
    expect(new Set([...ips, "10.100.0.10"]).size).toBe(13);
    expect(ips.every((ip) => ip.startsWith("10.100.0.") && lastOctet(ip) >= 2 && lastOctet(ip) <= 14)).toBe(true);
    const full = { code: 500, reason: "InternalError", message: "Internal error occurred: failed to allocate a serviceIP: range is full" };
    for (const r of created.filter((r) => r.status !== 201)) expect(r.body).toMatchObject(full);
    for (const api of [apiA, apiB]) expect((await api.post(services(ns), service("one-more"))).body).toMatchObject(full);

    // Deleted through A, free through B.
    await deleteAllThroughA(ns, [holder, ...ok.map((r) => r.body.metadata.name as string)]);
    const again = await Promise.all(Array.from({ length: 13 }, (_, i) => apiB.post(services(ns), service(`again-${i}`))));
    expect(again.map((r) => r.status)).toEqual(Array(13).fill(201));
    expect(new Set(again.map((r) => r.body.spec.clusterIP)).size).toBe(13);
    await deleteAllThroughA(
      ns,
      again.map((r) => r.body.metadata.name as string),
    );
  });

  it("gives each node port to one Service, says the range is full on both, and what a refused create took is free again", async () => {
    const ns = await freshNamespace(apiA, "alloc");
    // 16 node ports, two per Service, 12 creates at once (6 through each replica). Creates that run out
    // midway hold a port each until they give it back, so at least one and at most 8 succeed.
    const created = await createThroughBoth(
      ns,
      Array.from({ length: 12 }, (_, i) => nodePortService(`np-${i}`)),
    );
    const ok = created.filter((r) => r.status === 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    const full = { code: 500, reason: "InternalError", message: "Internal error occurred: failed to allocate a nodePort: range is full" };
    for (const r of created.filter((r) => r.status !== 201)) expect(r.body).toMatchObject(full);
    // What the refused ones took was given back before they answered: the rest of the range fills up,
    // one create at a time through alternate replicas, to exactly 8 Services.
    for (let i = 0; ok.length < 8; i++) {
      const r = await (i % 2 ? apiB : apiA).post(services(ns), nodePortService(`fill-${i}`));
      expect(r.status).toBe(201);
      ok.push(r);
    }
    const ports = ok.flatMap((r) => r.body.spec.ports.map((p: { nodePort: number }) => p.nodePort));
    expect(new Set(ports).size).toBe(16);
    expect(ports.every((p) => p >= 30000 && p <= 30015)).toBe(true);
    for (const api of [apiA, apiB]) expect((await api.post(services(ns), nodePortService("one-more"))).body).toMatchObject(full);
    // The addresses of the refused creates were given back too: 13 - 8 are free.
    const clusterIPs = await createThroughBoth(
      ns,
      Array.from({ length: 5 }, (_, i) => service(`c-${i}`)),
    );
    expect(clusterIPs.map((r) => r.status)).toEqual(Array(5).fill(201));
    expect(new Set([...ok, ...clusterIPs].map((r) => r.body.spec.clusterIP)).size).toBe(13);
  });
});
