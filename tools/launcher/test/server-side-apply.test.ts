// The real kubectl's server-side apply against a control plane started the way the README says.
import { writeFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

const deployment = (replicas: number, image = "nginx:1.27") => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: ${image}
        ports:
        - containerPort: 80
`;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

async function file(name: string, yaml: string): Promise<string> {
  const path = `${cp.dataDir}/${name}`;
  await writeFile(path, yaml);
  return path;
}

async function managedFields(): Promise<{ manager: string; operation: string; subresource?: string; fieldsV1: any }[]> {
  const got = await cp.kubectl("get", "deployment", "web", "-o", "yaml", "--show-managed-fields");
  expect(got.code).toBe(0);
  return parseYaml(got.stdout).metadata.managedFields;
}

describe("kubectl apply --server-side", () => {
  it("creates, then applies a change", async () => {
    const created = await cp.kubectl("apply", "--server-side", "-f", await file("web.yaml", deployment(2)));
    expect(created.stderr).toBe("");
    expect(created.stdout.trim()).toBe("deployment.apps/web serverside-applied");
    const changed = await cp.kubectl("apply", "--server-side", "-f", await file("web.yaml", deployment(3)));
    expect(changed.code).toBe(0);
    expect((await cp.kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")).stdout).toBe("3");
    const fields = await managedFields();
    const kubectl = fields.find((e) => e.manager === "kubectl" && e.operation === "Apply")!;
    expect(kubectl.fieldsV1["f:spec"]["f:replicas"]).toEqual({});
    expect(Object.keys(kubectl.fieldsV1["f:spec"]["f:template"]["f:spec"]["f:containers"])).toEqual(['k:{"name":"main"}']);
  });

  it("reports a conflict with another field manager, then takes the field with --force-conflicts", async () => {
    const path = await file("web-ops.yaml", deployment(5));
    const conflict = await cp.kubectl("apply", "--server-side", "--field-manager=ops", "-f", path);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    expect((await cp.kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")).stdout).toBe("3");

    const forced = await cp.kubectl("apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", path);
    expect(forced.code).toBe(0);
    expect(forced.stdout.trim()).toBe("deployment.apps/web serverside-applied");
    expect((await cp.kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")).stdout).toBe("5");
    const fields = await managedFields();
    const ops = fields.find((e) => e.manager === "ops")!;
    expect(ops.operation).toBe("Apply");
    expect(ops.fieldsV1["f:spec"]["f:replicas"]).toEqual({});
    expect(fields.find((e) => e.manager === "kubectl")!.fieldsV1["f:spec"]["f:replicas"]).toBeUndefined();
  });

  it("applies status through --subresource=status, conflicting with the controller that owns it", async () => {
    const status = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
status:
  observedGeneration: 1
`;
    const refused = await cp.kubectl(
      "apply",
      "--server-side",
      "--subresource=status",
      "--field-manager=reporter",
      "-f",
      await file("status.yaml", status),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'Apply failed with 1 conflict: conflict with "deployment-controller" with subresource "status" using apps/v1: .status.observedGeneration',
    );

    // A pod's status has no controller here: it is bound to a node no agent runs (the orchlet's are
    // node-0, node-1, …), so whoever plays that node applies it.
    const pod = await file(
      "pod.yaml",
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\n  namespace: default\nspec:\n  nodeName: nowhere\n  containers:\n  - name: main\n    image: nginx:1.27\n",
    );
    expect((await cp.kubectl("apply", "--server-side", "-f", pod)).code).toBe(0);
    const podStatus = `
apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: default
status:
  phase: Running
  conditions:
  - type: Ready
    status: "True"
`;
    const applied = await cp.kubectl(
      "apply",
      "--server-side",
      "--subresource=status",
      "--field-manager=node",
      "-f",
      await file("pod-status.yaml", podStatus),
    );
    expect(applied.stderr).toBe("");
    expect(applied.stdout.trim()).toBe("pod/solo serverside-applied");
    const got = parseYaml((await cp.kubectl("get", "pod", "solo", "-o", "yaml", "--show-managed-fields")).stdout);
    expect(got.status.phase).toBe("Running");
    const node = got.metadata.managedFields.find((e: { manager: string }) => e.manager === "node");
    expect(node).toMatchObject({ operation: "Apply", subresource: "status" });
    expect(node.fieldsV1).toEqual({
      "f:status": { "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:status": {}, "f:type": {} } }, "f:phase": {} },
    });
  });

  it("hides managedFields from get -o yaml unless asked", async () => {
    const plain = await cp.kubectl("get", "deployment", "web", "-o", "yaml");
    expect(plain.stdout).not.toContain("managedFields");
    const shown = await cp.kubectl("get", "deployment", "web", "-o", "yaml", "--show-managed-fields");
    expect(shown.stdout).toContain("managedFields:");
    expect(shown.stdout).toContain("fieldsType: FieldsV1");
  });
});
