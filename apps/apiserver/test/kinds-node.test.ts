// Node (core/v1, cluster-scoped) as Kubernetes validates and prints it: ValidateNode and
// ValidateNodeUpdate over HTTP, the status subresource, defaults, and `kubectl get nodes`' columns.
import { describe, expect, it } from "vitest";
import { useTestServer } from "./harness.js";

const t = useTestServer();

const NODES = "/api/v1/nodes";
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";
const causes = (body: any) => body.details.causes.map((c: any) => `${c.field}: ${c.message}`);

let seq = 0;
const fresh = () => `node-${++seq}-${Date.now().toString(36)}`;
const node = (name: string, spec: Record<string, unknown> = {}, status?: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, ...(labels ? { labels } : {}) },
  spec,
  ...(status ? { status } : {}),
});
const ready = (status: "True" | "False") => ({ type: "Ready", status, reason: "KubeletReady", message: "ready" });

describe("Node: create and defaults", () => {
  it("is cluster-scoped, keeps the status it is registered with, and defaults allocatable to capacity", async () => {
    const name = fresh();
    const r = await t.api.post(NODES, node(name, { podCIDR: "10.244.1.0/24" }, { capacity: { cpu: "4", memory: "8Gi", pods: "110" } }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.metadata.namespace).toBeUndefined();
    expect(r.body.status.capacity).toEqual({ cpu: "4", memory: "8Gi", pods: "110" });
    expect(r.body.status.allocatable).toEqual({ cpu: "4", memory: "8Gi", pods: "110" });
    // podCIDR alone becomes the list, as the v1 conversion does.
    expect(r.body.spec.podCIDRs).toEqual(["10.244.1.0/24"]);
    expect((await t.api.get(`/api/v1/namespaces/default/nodes/${name}`)).status).toBe(404);
  });

  it("a name must be a DNS subdomain → 422 metadata.name", async () => {
    const r = await t.api.post(NODES, node("Bad_Node"));
    expect(r.status).toBe(422);
    expect(causes(r.body)[0]).toMatch(/^metadata\.name: Invalid value: "Bad_Node": a lowercase RFC 1123 subdomain/);
  });
});

describe("Node: ValidateNode", () => {
  it("taints: effect required and known, key a label name, unique by key and effect (reported under metadata.taints)", async () => {
    const name = fresh();
    const r = await t.api.post(
      NODES,
      node(name, {
        taints: [
          { key: "dedicated", value: "gpu", effect: "NoSchedule" },
          { key: "dedicated", value: "other", effect: "NoSchedule" },
          { key: "dedicated", effect: "NoExecute" },
          { key: "bad key", effect: "Sometimes" },
          { key: "ok", effect: "" },
        ],
      }),
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/^Node "node-[^"]+" is invalid: \[/);
    expect(causes(r.body)).toEqual([
      'metadata.taints[1]: Duplicate value: {"key":"dedicated","value":"other","effect":"NoSchedule"}: taints must be unique by key and effect pair',
      "metadata.taints[3].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      'metadata.taints[3].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      "metadata.taints[4].effect: Required value",
    ]);
    expect((await t.api.get(`${NODES}/${name}`)).status).toBe(404);
  });

  it("pod CIDRs must be valid, one per IP family", async () => {
    const bad = await t.api.post(NODES, node(fresh(), { podCIDRs: ["10.0.0.0/33", "not-a-cidr"] }));
    expect(bad.status).toBe(422);
    expect(causes(bad.body)).toEqual([
      'spec.podCIDRs[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
      'spec.podCIDRs[1]: Invalid value: "not-a-cidr": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
      'spec.podCIDRs: Invalid value: ["10.0.0.0/33","not-a-cidr"]: may specify no more than one CIDR for each IP family',
    ]);
    const sameFamily = await t.api.post(NODES, node(fresh(), { podCIDRs: ["10.0.0.0/24", "10.0.1.0/24"] }));
    expect(causes(sameFamily.body)).toEqual([
      'spec.podCIDRs: Invalid value: ["10.0.0.0/24","10.0.1.0/24"]: may specify no more than one CIDR for each IP family',
    ]);
    const dual = await t.api.post(NODES, node(fresh(), { podCIDRs: ["10.0.0.0/24", "fd00::/64"] }));
    expect(dual.status).toBe(201);
    expect(dual.body.spec.podCIDR).toBe("10.0.0.0/24");
  });

  it("capacity and allocatable may not be negative", async () => {
    const r = await t.api.post(NODES, node(fresh(), {}, { capacity: { cpu: "-1" }, allocatable: { pods: "1.5" } }));
    expect(r.status).toBe(422);
    expect(causes(r.body)).toEqual([
      'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
      'status.allocatable.pods: Invalid value: "1500m": must be an integer',
    ]);
  });
});

describe("Node: ValidateNodeUpdate", () => {
  it("podCIDR and providerID may be set once, never changed", async () => {
    const name = fresh();
    expect((await t.api.post(NODES, node(name))).status).toBe(201);
    // From "" to a value is allowed.
    const set = await t.api.patch(`${NODES}/${name}`, { spec: { podCIDR: "10.1.0.0/24", providerID: "sim://a" } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const change = await t.api.patch(`${NODES}/${name}`, {
      spec: { podCIDR: "10.2.0.0/24", podCIDRs: ["10.2.0.0/24"], providerID: "sim://b" },
    });
    expect(change.status).toBe(422);
    expect(causes(change.body)).toEqual([
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]);
  });

  it("labels, taints and unschedulable may change", async () => {
    const name = fresh();
    await t.api.post(NODES, node(name));
    const r = await t.api.patch(`${NODES}/${name}`, {
      metadata: { labels: { zone: "a" } },
      spec: { unschedulable: true, taints: [{ key: "k", effect: "NoSchedule" }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.spec).toMatchObject({ unschedulable: true, taints: [{ key: "k", effect: "NoSchedule" }] });
  });

  it("duplicate addresses in status are refused", async () => {
    const name = fresh();
    await t.api.post(NODES, node(name));
    const address = { type: "InternalIP", address: "10.0.0.1" };
    const r = await t.api.patch(`${NODES}/${name}/status`, { status: { addresses: [address, address] } });
    expect(r.status).toBe(422);
    expect(causes(r.body)).toEqual(['status.addresses[1]: Duplicate value: {"type":"InternalIP","address":"10.0.0.1"}']);
  });
});

describe("Node: status subresource", () => {
  it("the main endpoint keeps status; /status keeps spec", async () => {
    const name = fresh();
    await t.api.post(NODES, node(name, {}, { conditions: [ready("False")] }));
    const main = await t.api.patch(`${NODES}/${name}`, { spec: { unschedulable: true }, status: { conditions: [ready("True")] } });
    expect(main.body.spec.unschedulable).toBe(true);
    expect(main.body.status.conditions[0].status).toBe("False");
    const status = await t.api.patch(`${NODES}/${name}/status`, {
      spec: { unschedulable: false },
      status: { conditions: [ready("True")] },
    });
    expect(status.status).toBe(200);
    expect(status.body.spec.unschedulable).toBe(true);
    expect(status.body.status.conditions[0]).toMatchObject({ type: "Ready", status: "True" });
  });
});

describe("Node: printer columns (kubectl get nodes)", () => {
  it("NAME STATUS ROLES AGE VERSION; STATUS from Ready plus SchedulingDisabled; wide adds addresses and node info", async () => {
    const a = fresh();
    const b = fresh();
    const c = fresh();
    await t.api.post(
      NODES,
      node(
        a,
        {},
        {
          conditions: [ready("True")],
          nodeInfo: { kubeletVersion: "v1.32.0", osImage: "Sim OS", kernelVersion: "6.1", containerRuntimeVersion: "sim://1" },
          addresses: [{ type: "InternalIP", address: "10.0.0.7" }],
        },
        { "node-role.orch.io/control-plane": "", "node-role.orch.io/worker": "" },
      ),
    );
    await t.api.post(NODES, node(b, { unschedulable: true }, { conditions: [ready("False")] }));
    await t.api.post(NODES, node(c));
    const table = await t.api.get(NODES, { accept: TABLE });
    expect(table.body.columnDefinitions.map((d: any) => [d.name, d.priority ?? 0])).toEqual([
      ["Name", 0],
      ["Status", 0],
      ["Roles", 0],
      ["Age", 0],
      ["Version", 0],
      ["Internal-IP", 1],
      ["External-IP", 1],
      ["OS-Image", 1],
      ["Kernel-Version", 1],
      ["Container-Runtime", 1],
    ]);
    const row = (name: string) => table.body.rows.find((r: any) => r.cells[0] === name).cells;
    expect(row(a).slice(0, 3)).toEqual([a, "Ready", "control-plane,worker"]);
    expect(row(a)[4]).toBe("v1.32.0");
    expect(row(a).slice(5)).toEqual(["10.0.0.7", "<none>", "Sim OS", "6.1", "sim://1"]);
    expect(row(b).slice(0, 3)).toEqual([b, "NotReady,SchedulingDisabled", "<none>"]);
    expect(row(c)[1]).toBe("Unknown");
    expect(row(c).slice(7)).toEqual(["<unknown>", "<unknown>", "<unknown>"]);
  });

  it("spec.unschedulable is a field selector", async () => {
    const name = fresh();
    await t.api.post(NODES, node(name, { unschedulable: true }));
    const list = await t.api.get(`${NODES}?fieldSelector=spec.unschedulable=true`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((n: any) => n.metadata.name)).toContain(name);
    expect(list.body.items.every((n: any) => n.spec.unschedulable === true)).toBe(true);
  });
});
