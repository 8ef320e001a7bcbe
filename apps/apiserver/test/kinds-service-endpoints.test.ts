// Service (v1), Endpoints (v1) and EndpointSlice (discovery.<domain>/v1) against the real apiserver:
// Kubernetes' defaults, validation messages and paths, cluster IP allocation (concurrent, requested,
// out of range, released on delete, kept across a restart), headless Services, the `kubernetes` Service,
// and the endpoints controller following pods' readiness.
import { join } from "node:path";
import { SqliteStorage } from "@orch/storage";
import { eventually } from "@orch/testing";
import { describe, expect, it } from "vitest";
import { advertiseAddress } from "../src/services/kubernetes-service.js";
import { freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer();
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";
const services = (ns: string) => `/api/v1/namespaces/${ns}/services`;
const endpoints = (ns: string) => `/api/v1/namespaces/${ns}/endpoints`;
const slices = (ns: string) => `/apis/discovery.orch.io/v1/namespaces/${ns}/endpointslices`;
const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const causes = (body: any) => body.details.causes.map((c: any) => `${c.field}: ${c.message}`);
const inDefaultRange = (ip: string) => {
  const [a, b] = ip.split(".").map(Number);
  return a === 10 && b! >= 96 && b! <= 111;
};

/** Waits until `check`'s expectations hold; on timeout fails with the last unmet one. */
async function until(what: string, check: () => Promise<void>): Promise<void> {
  let last: unknown;
  try {
    await eventually(what, async () => {
      try {
        await check();
        return true;
      } catch (e) {
        last = e;
        return false;
      }
    });
  } catch (e) {
    throw last ?? e;
  }
}

const service = (name: string, spec: Record<string, unknown>) => ({ apiVersion: "v1", kind: "Service", metadata: { name }, spec });
const web = (name = "web", spec: Record<string, unknown> = {}) =>
  service(name, { selector: { app: "web" }, ports: [{ port: 80 }], ...spec });

describe("Service", () => {
  it("defaults a ClusterIP Service as Kubernetes does and allocates an address from the range", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(services(ns), web("web", { ports: [{ name: "http", port: 80, targetPort: "http" }] }));
    expect(created.status).toBe(201);
    const spec = created.body.spec;
    expect(spec).toMatchObject({
      type: "ClusterIP",
      sessionAffinity: "None",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
      ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: "http" }],
    });
    expect(inDefaultRange(spec.clusterIP)).toBe(true);
    expect(spec.clusterIPs).toEqual([spec.clusterIP]);
    expect(created.body.status).toEqual({ loadBalancer: {} });
    const numeric = await t.api.post(services(ns), web("numeric"));
    expect(numeric.body.spec.ports[0].targetPort).toBe(80);
  });

  it("prints NAME, TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), AGE", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(services(ns), web("web", { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] }));
    expect(created.status).toBe(201);
    await t.api.post(services(ns), service("ext", { type: "ExternalName", externalName: "example.com" }));
    const table = await t.api.get(services(ns), { accept: TABLE });
    expect(table.body.columnDefinitions.map((c: any) => c.name)).toEqual([
      "Name",
      "Type",
      "Cluster-IP",
      "External-IP",
      "Port(s)",
      "Age",
      "Selector",
    ]);
    const rows = table.body.rows.map((r: any) => r.cells.slice(0, 5));
    expect(rows).toEqual([
      ["ext", "ExternalName", "<none>", "example.com", "<none>"],
      ["web", "NodePort", created.body.spec.clusterIP, "<none>", "80:30080/TCP"],
    ]);
  });

  it("refuses what Kubernetes refuses, with its messages and paths", async () => {
    const ns = await freshNamespace(t.api);
    const noPorts = await t.api.post(services(ns), service("a", { selector: { app: "a" } }));
    expect(noPorts.status).toBe(422);
    expect(causes(noPorts.body)).toEqual(["spec.ports: Required value"]);
    const bad = await t.api.post(
      services(ns),
      service("b", {
        type: "Weird",
        sessionAffinity: "Sometimes",
        ports: [
          { port: 0, protocol: "ICMP" },
          { name: "x", port: 80, targetPort: "much-too-long-port-name" },
          { name: "x", port: 80 },
        ],
      }),
    );
    expect(bad.status).toBe(422);
    expect(causes(bad.body)).toEqual([
      "spec.ports[0].name: Required value",
      "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
      'spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      // The target port defaults to the port, 0 here.
      "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
      'spec.ports[1].targetPort: Invalid value: "much-too-long-port-name": must be no more than 15 characters',
      'spec.ports[2].name: Duplicate value: "x"',
      'spec.sessionAffinity: Unsupported value: "Sometimes": supported values: "ClientIP", "None"',
      'spec.type: Unsupported value: "Weird": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      'spec.ports[2]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    ]);
    const badName = await t.api.post(services(ns), web("1web"));
    expect(badName.status).toBe(422);
    expect(causes(badName.body)[0]).toMatch(/^metadata\.name: Invalid value: "1web": a DNS-1035 label must consist of/);
    const external = await t.api.post(services(ns), service("c", { type: "ExternalName" }));
    expect(causes(external.body)).toEqual(["spec.externalName: Required value"]);
    const nodePortOnClusterIP = await t.api.post(services(ns), web("d", { ports: [{ port: 80, nodePort: 30001 }] }));
    expect(causes(nodePortOnClusterIP.body)).toEqual(["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]);
  });

  it("gives the requested address if free and in range, and refuses it otherwise with Kubernetes' messages", async () => {
    const ns = await freshNamespace(t.api);
    const requested = await t.api.post(services(ns), web("a", { clusterIP: "10.96.7.7" }));
    expect(requested.status).toBe(201);
    expect(requested.body.spec.clusterIPs).toEqual(["10.96.7.7"]);
    const taken = await t.api.post(services(ns), web("b", { clusterIP: "10.96.7.7" }));
    expect(taken.status).toBe(422);
    expect(causes(taken.body)).toEqual([
      'spec.clusterIPs: Invalid value: ["10.96.7.7"]: failed to allocate IP 10.96.7.7: provided IP is already allocated',
    ]);
    const outside = await t.api.post(services(ns), web("c", { clusterIP: "10.0.0.1" }));
    expect(outside.status).toBe(422);
    expect(outside.body.message).toContain(
      "failed to allocate IP 10.0.0.1: the provided IP (10.0.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12",
    );
    const ipv6 = await t.api.post(services(ns), web("e", { ipFamilies: ["IPv6"] }));
    expect(causes(ipv6.body)).toEqual(['spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster']);
    const notAnIP = await t.api.post(services(ns), web("d", { clusterIP: "ten" }));
    expect(causes(notAnIP.body)).toEqual([
      'spec.clusterIPs[0]: Invalid value: "ten": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ]);
  });

  it("releases the address on delete for the next Service, and keeps clusterIP immutable", async () => {
    const ns = await freshNamespace(t.api);
    const first = await t.api.post(services(ns), web("a", { clusterIP: "10.96.8.8" }));
    const changed = await t.api.put(`${services(ns)}/a`, {
      ...first.body,
      spec: { ...first.body.spec, clusterIP: "10.96.8.9", clusterIPs: ["10.96.8.9"] },
    });
    expect(changed.status).toBe(422);
    expect(causes(changed.body)).toEqual(['spec.clusterIPs[0]: Invalid value: ["10.96.8.9"]: may not change once set']);
    // An update that leaves the addresses out keeps them.
    const { clusterIP: _ip, clusterIPs: _ips, ...rest } = first.body.spec;
    const kept = await t.api.put(`${services(ns)}/a`, { ...first.body, spec: { ...rest, ports: [{ port: 81 }] } });
    expect(kept.status).toBe(200);
    expect(kept.body.spec.clusterIP).toBe("10.96.8.8");
    expect((await t.api.delete(`${services(ns)}/a`)).status).toBe(200);
    const again = await t.api.post(services(ns), web("b", { clusterIP: "10.96.8.8" }));
    expect(again.status).toBe(201);
  });

  it("keeps every allocation across a restart", async () => {
    const ns = await freshNamespace(t.api);
    const before = await t.api.post(
      services(ns),
      web("a", { clusterIP: "10.96.9.9", type: "NodePort", ports: [{ port: 80, nodePort: 30999 }] }),
    );
    expect(before.status).toBe(201);
    await t.restart();
    const taken = await t.api.post(services(ns), web("b", { clusterIP: "10.96.9.9" }));
    expect(causes(taken.body)).toEqual([
      'spec.clusterIPs: Invalid value: ["10.96.9.9"]: failed to allocate IP 10.96.9.9: provided IP is already allocated',
    ]);
    const portTaken = await t.api.post(services(ns), web("c", { type: "NodePort", ports: [{ port: 80, nodePort: 30999 }] }));
    expect(causes(portTaken.body)).toEqual(["spec.ports[0].nodePort: Invalid value: 30999: provided port is already allocated"]);
  });

  it("gives back at once what a create refused after allocation took, and takes nothing for a dry run", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(services(ns), web("a"))).status).toBe(201);
    const wanted = { clusterIP: "10.96.3.4", type: "NodePort", ports: [{ port: 80, nodePort: 30334 }] };
    // The name is taken: refused after the address and the port were allocated.
    expect((await t.api.post(services(ns), web("a", wanted))).status).toBe(409);
    expect((await t.api.post(`${services(ns)}?dryRun=All`, web("b", wanted))).status).toBe(201);
    const b = await t.api.post(services(ns), web("b", wanted));
    expect(b.status).toBe(201);
    expect(b.body.spec.ports[0].nodePort).toBe(30334);
  });

  it("records the values of Services stored before records existed, and frees a record no Service holds", async () => {
    const ns = await freshNamespace(t.api);
    const old = web("old", { clusterIP: "10.96.4.4", type: "NodePort", ports: [{ port: 80, nodePort: 30444 }] });
    expect((await t.api.post(services(ns), old)).status).toBe(201);
    const ips = { resource: "ranges/serviceips", namespace: "" };
    const ports = { resource: "ranges/servicenodeports", namespace: "" };
    const withStorage = async (use: (storage: SqliteStorage) => Promise<void>) => {
      const storage = new SqliteStorage({ path: join(t.dataDir, "orch.db") });
      await use(storage).finally(() => storage.close());
    };
    await t.restart(() =>
      withStorage(async (storage) => {
        // As an older orch left it: no records of the Service's values…
        for (const key of [
          { ...ips, name: "10.96.4.4" },
          { ...ports, name: "30444" },
        ]) {
          const stored = (await storage.get(key))!;
          await storage.delete(key, JSON.parse(stored.value), stored.revision);
        }
        // …and as a process that died between a record and its Service: one an hour old that no Service holds.
        const parentRef = { group: "", resource: "services", namespace: ns, name: "never-stored", uid: "gone" };
        const created = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
        await storage.create(
          { ...ips, name: "10.96.4.5" },
          { metadata: { name: "10.96.4.5", creationTimestamp: created }, spec: { parentRef } },
        );
      }),
    );
    // The leader's repair pass at start frees the leaked address…
    await until("the leaked address is free", async () => {
      expect((await t.api.post(services(ns), web("leak", { clusterIP: "10.96.4.5" }))).status).toBe(201);
    });
    const taken = await t.api.post(
      services(ns),
      web("other", { clusterIP: "10.96.4.4", type: "NodePort", ports: [{ port: 80, nodePort: 30444 }] }),
    );
    expect(causes(taken.body)).toEqual([
      'spec.clusterIPs: Invalid value: ["10.96.4.4"]: failed to allocate IP 10.96.4.4: provided IP is already allocated',
      "spec.ports[0].nodePort: Invalid value: 30444: provided port is already allocated",
    ]);
    // …and has written the records of the old Service's values, so that every replica sees them taken.
    await t.restart(() =>
      withStorage(async (storage) => {
        for (const key of [
          { ...ips, name: "10.96.4.4" },
          { ...ports, name: "30444" },
        ])
          expect(JSON.parse((await storage.get(key))!.value).spec.parentRef).toMatchObject({ namespace: ns, name: "old" });
      }),
    );
  });

  it("allocates node ports from 30000-32767 for NodePort Services", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(services(ns), web("a", { type: "NodePort" }));
    expect(created.body.spec.externalTrafficPolicy).toBe("Cluster");
    const nodePort = created.body.spec.ports[0].nodePort;
    expect(nodePort).toBeGreaterThanOrEqual(30000);
    expect(nodePort).toBeLessThanOrEqual(32767);
    const outside = await t.api.post(services(ns), web("b", { type: "NodePort", ports: [{ port: 80, nodePort: 80 }] }));
    expect(causes(outside.body)).toEqual([
      "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767",
    ]);
  });

  it("gives a headless Service no address: `None` stays, RequireDualStack without a selector", async () => {
    const ns = await freshNamespace(t.api);
    const headless = await t.api.post(services(ns), service("h", { clusterIP: "None", selector: { app: "h" } }));
    expect(headless.status).toBe(201);
    expect(headless.body.spec).toMatchObject({ clusterIP: "None", clusterIPs: ["None"], ipFamilyPolicy: "SingleStack" });
    const bare = await t.api.post(services(ns), service("bare", { clusterIP: "None" }));
    expect(bare.body.spec.ipFamilyPolicy).toBe("RequireDualStack");
    const nodePort = await t.api.post(services(ns), service("np", { clusterIP: "None", type: "NodePort", ports: [{ port: 80 }] }));
    expect(causes(nodePort.body)).toEqual(["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"]);
  });
});

describe("Service status", () => {
  it("takes a load balancer's ingress on /status only, validated, with ipMode VIP by default", async () => {
    const ns = await freshNamespace(t.api);
    const created = await t.api.post(services(ns), web("lb", { type: "LoadBalancer" }));
    expect(created.status).toBe(201);
    expect(created.body.spec.allocateLoadBalancerNodePorts).toBe(true);
    const ignored = await t.api.put(`${services(ns)}/lb`, {
      ...created.body,
      status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } },
    });
    expect(ignored.body.status).toEqual({ loadBalancer: {} });
    const bad = await t.api.put(`${services(ns)}/lb/status`, {
      ...ignored.body,
      status: { loadBalancer: { ingress: [{ ip: "x" }, { hostname: "192.0.2.11" }] } },
    });
    expect(causes(bad.body)).toEqual([
      'status.loadBalancer.ingress[0].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'status.loadBalancer.ingress[1].hostname: Invalid value: "192.0.2.11": must be a DNS name, not an IP address',
    ]);
    const set = await t.api.put(`${services(ns)}/lb/status`, {
      ...ignored.body,
      status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } },
    });
    expect(set.status).toBe(200);
    expect(set.body.status.loadBalancer.ingress).toEqual([{ ip: "192.0.2.10", ipMode: "VIP" }]);
    const table = await t.api.get(services(ns), { accept: TABLE });
    expect(table.body.rows[0].cells.slice(0, 5)).toEqual([
      "lb",
      "LoadBalancer",
      set.body.spec.clusterIP,
      "192.0.2.10",
      `80:${set.body.spec.ports[0].nodePort}/TCP`,
    ]);
  });
});

describe("a small service range", () => {
  // 62 usable addresses: random picks collide among 50 creates, and a collision tries another address.
  const small = useTestServer({ serviceClusterIPRange: "10.200.0.0/26" });

  it("gives 50 concurrent creates distinct addresses, then says the range is full", async () => {
    const ns = await freshNamespace(small.api);
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => small.api.post(services(ns), web(`s${i}`))));
    expect(created.map((r) => r.status)).toEqual(Array(50).fill(201));
    const ips = created.map((r) => r.body.spec.clusterIP as string);
    expect(new Set(ips).size).toBe(50);
    expect(ips.every((ip) => /^10\.200\.0\.(\d+)$/.test(ip) && Number(ip.split(".")[3]) >= 1 && Number(ip.split(".")[3]) <= 62)).toBe(true);
    // The kubernetes Service holds the first address: 11 are left.
    const rest = await Promise.all(Array.from({ length: 11 }, (_, i) => small.api.post(services(ns), web(`r${i}`))));
    expect(rest.map((r) => r.status)).toEqual(Array(11).fill(201));
    const full = await small.api.post(services(ns), web("full"));
    expect(full.status).toBe(500);
    expect(full.body.message).toBe("Internal error occurred: failed to allocate a serviceIP: range is full");
  });
});

describe("the kubernetes Service", () => {
  it("has the first address of the range, 443 to the apiserver's port, and Endpoints", async () => {
    const svc = await t.api.get("/api/v1/namespaces/default/services/kubernetes");
    expect(svc.status).toBe(200);
    expect(svc.body.spec).toMatchObject({
      type: "ClusterIP",
      clusterIP: "10.96.0.1",
      ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: t.server.port }],
    });
    expect(svc.body.spec.selector).toBeUndefined();
    const ep = await t.api.get("/api/v1/namespaces/default/endpoints/kubernetes");
    // The address is the host's first routable one (bound to 127.0.0.1, as here); without one there are none.
    const address = advertiseAddress("127.0.0.1");
    if (address) {
      expect(ep.body.subsets).toEqual([{ addresses: [{ ip: address }], ports: [{ name: "https", port: t.server.port, protocol: "TCP" }] }]);
      const slice = await t.api.get("/apis/discovery.orch.io/v1/namespaces/default/endpointslices/kubernetes");
      expect(slice.body).toMatchObject({ addressType: "IPv4", endpoints: [{ addresses: [address], conditions: { ready: true } }] });
    } else expect(ep.status).toBe(404);
  });
});

describe("Endpoints and EndpointSlice validation", () => {
  it("refuses empty subsets, loopback addresses and unnamed ports among several", async () => {
    const ns = await freshNamespace(t.api);
    const bad = await t.api.post(endpoints(ns), {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "e" },
      subsets: [{}, { addresses: [{ ip: "127.0.0.1" }], ports: [{ port: 80 }, { name: "b", port: 81 }] }],
    });
    expect(bad.status).toBe(422);
    expect(causes(bad.body)).toEqual([
      "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
      'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      "subsets[1].ports[0].name: Required value",
    ]);
    const slice = await t.api.post(slices(ns), {
      apiVersion: "discovery.orch.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "s" },
      addressType: "IPv4",
      endpoints: [{ addresses: [] }, { addresses: ["fd00::1"] }],
    });
    expect(slice.status).toBe(422);
    expect(causes(slice.body)).toEqual([
      "endpoints[0].addresses: Required value: must contain at least 1 address",
      'endpoints[1].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address',
    ]);
  });
});

describe("the endpoints controller", () => {
  const pod = (name: string, labels: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels },
    spec: { containers: [{ name: "c", image: "nginx", ports: [{ name: "http", containerPort: 8080 }] }] },
  });
  const setStatus = async (ns: string, name: string, status: Record<string, unknown>) => {
    const current = await t.api.get(`${pods(ns)}/${name}`);
    const r = await t.api.put(`${pods(ns)}/${name}/status`, { ...current.body, status: { ...current.body.status, ...status } });
    expect(r.status).toBe(200);
  };
  const ready = (ip: string, isReady: boolean) => ({
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [{ type: "Ready", status: isReady ? "True" : "False" }],
  });

  it("lists the selected pods with an IP, ready or not, in Endpoints and one EndpointSlice owned by the Service", async () => {
    const ns = await freshNamespace(t.api);
    const svc = await t.api.post(services(ns), web("web", { ports: [{ name: "http", port: 80, targetPort: "http" }] }));
    // No pods yet: Endpoints without subsets, a placeholder slice.
    await until("the empty Endpoints and the placeholder slice", async () => {
      const ep = await t.api.get(`${endpoints(ns)}/web`);
      expect(ep.status).toBe(200);
      expect(ep.body.subsets).toBeUndefined();
      const list = await t.api.get(slices(ns));
      expect(list.body.items).toHaveLength(1);
      expect(list.body.items[0]).toMatchObject({
        addressType: "IPv4",
        endpoints: [],
        metadata: {
          labels: { "orch.io/service-name": "web", "endpointslice.orch.io/managed-by": "endpointslice-controller.orch.io" },
          ownerReferences: [{ apiVersion: "v1", kind: "Service", name: "web", uid: svc.body.metadata.uid, controller: true }],
        },
      });
    });
    for (const name of ["a", "b", "c"])
      expect((await t.api.post(pods(ns), pod(name, { app: name === "c" ? "other" : "web" }))).status).toBe(201);
    // Pods without an IP are no endpoints (nothing runs pods yet): the lists stay empty.
    await setStatus(ns, "a", ready("10.1.0.1", true));
    await setStatus(ns, "b", ready("10.1.0.2", false));
    await setStatus(ns, "c", ready("10.1.0.3", true));
    await until("a ready and b not ready", async () => {
      const ep = await t.api.get(`${endpoints(ns)}/web`);
      expect(ep.body.subsets).toEqual([
        {
          addresses: [{ ip: "10.1.0.1", targetRef: { kind: "Pod", namespace: ns, name: "a", uid: expect.any(String) } }],
          notReadyAddresses: [{ ip: "10.1.0.2", targetRef: { kind: "Pod", namespace: ns, name: "b", uid: expect.any(String) } }],
          ports: [{ name: "http", port: 8080, protocol: "TCP" }],
        },
      ]);
      const [slice] = (await t.api.get(slices(ns))).body.items;
      expect(slice.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
      expect(slice.endpoints.map((e: any) => [e.addresses[0], e.conditions.ready])).toEqual([
        ["10.1.0.1", true],
        ["10.1.0.2", false],
      ]);
    });
    const table = await t.api.get(endpoints(ns), { accept: TABLE });
    expect(table.body.rows[0].cells.slice(0, 2)).toEqual(["web", "10.1.0.1:8080"]);
    // b becomes ready: it moves to addresses.
    await setStatus(ns, "b", ready("10.1.0.2", true));
    await until("b ready too", async () => {
      const ep = await t.api.get(`${endpoints(ns)}/web`);
      expect(ep.body.subsets[0].addresses.map((a: any) => a.ip)).toEqual(["10.1.0.1", "10.1.0.2"]);
      expect(ep.body.subsets[0].notReadyAddresses).toBeUndefined();
    });
    // The Service goes: its Endpoints go with it, its slice with its owner.
    expect((await t.api.delete(`${services(ns)}/web`)).status).toBe(200);
    await until("the Endpoints and the slice gone", async () => {
      expect((await t.api.get(`${endpoints(ns)}/web`)).status).toBe(404);
      expect((await t.api.get(slices(ns))).body.items).toEqual([]);
    });
  });
});
