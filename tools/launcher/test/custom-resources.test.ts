// Custom resources end to end with the real kubectl, against a control plane started as `npm start`
// does (apiserver, NATS and every controller app, the crd-controller among them). The manifests are
// Kubernetes' own (ORCH_PROFILE=kubernetes), unchanged: the CRD example from the Kubernetes docs.
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer, minimum: 1, default: 1}
    subresources:
      status: {}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`;

const cronTab = (name: string, replicas?: number) => `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
${replicas === undefined ? "" : `  replicas: ${replicas}\n`}`;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

async function file(name: string, yaml: string): Promise<string> {
  const path = `${cp.dataDir}/${name}`;
  await writeFile(path, yaml);
  return path;
}

/**
 * `kubectl wait` for the CRD to be Established; when it is not, the failure shows the CRD's conditions and
 * what the crd-controller logged, which is what tells a slow start from a lost event.
 */
async function waitEstablished(): Promise<string> {
  const waited = await cp.kubectl("wait", "--for", "condition=established", "--timeout=20s", "crd/crontabs.stable.example.com");
  if (waited.code === 0) return waited.stdout;
  const conditions = await cp.kubectl("get", "crd/crontabs.stable.example.com", "-o", "jsonpath={.status.conditions}");
  const log = cp.output.filter((l) => l.includes("crd-controller")).slice(-40);
  throw new Error(`${waited.stderr.trim()}\nconditions: ${conditions.stdout}\nthe crd-controller said:\n${log.join("\n")}`);
}

describe("custom resources with kubectl", () => {
  it("applies a CRD and waits for it to be established", async () => {
    const applied = await cp.kubectl("apply", "-f", await file("crd.yaml", CRD));
    expect(applied.stderr).toBe("");
    expect(applied.stdout.trim()).toBe("customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created");
    expect((await waitEstablished()).trim()).toBe(
      "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met",
    );
    const resources = await cp.kubectl("api-resources", "--api-group=stable.example.com", "--no-headers");
    expect(resources.stdout).toMatch(/^crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab/m);
    // Room for kubectl wait's 20 s and the diagnosis after it.
  }, 45_000);

  it("creates custom objects and prints the CRD's columns", async () => {
    expect((await cp.kubectl("create", "-f", await file("a.yaml", cronTab("a", 3)))).stdout.trim()).toBe(
      "crontab.stable.example.com/a created",
    );
    expect((await cp.kubectl("create", "-f", await file("b.yaml", cronTab("b")))).stdout.trim()).toBe(
      "crontab.stable.example.com/b created",
    );
    const got = await cp.kubectl("get", "crontabs");
    const lines = got.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+AGE$/);
    expect(lines[1]).toMatch(/^a\s+\* \* \* \* \*\/5\s+3\s+\d+s$/);
    // The schema's default filled in the replicas b did not give.
    expect(lines[2]).toMatch(/^b\s+\* \* \* \* \*\/5\s+1\s+\d+s$/);
    expect((await cp.kubectl("get", "ct", "a", "-o", "jsonpath={.spec.image}")).stdout).toBe("my-awesome-cron-image");
  });

  it("reports schema violations as Kubernetes does", async () => {
    const bad = await cp.kubectl("create", "-f", await file("bad.yaml", cronTab("bad", 0)));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('The CronTab "bad" is invalid');
    expect(bad.stderr).toContain("spec.replicas");
  });

  it("deleting the CRD deletes its objects and the kind", async () => {
    const deleted = await cp.kubectl("delete", "crd", "crontabs.stable.example.com", "--timeout=30s");
    expect(deleted.stdout.trim()).toBe('customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted');
    const gone = await cp.kubectl("get", "crd", "crontabs.stable.example.com");
    expect(gone.stderr).toContain('customresourcedefinitions.apiextensions.k8s.io "crontabs.stable.example.com" not found');
    const kind = await cp.kubectl("get", "crontabs");
    expect(kind.code).not.toBe(0);
    // kubectl's discovery cache may still name the kind; the server has no such resource any more.
    expect(kind.stderr).toMatch(/NotFound|doesn't have a resource type/);

    // Defined again, the kind starts empty: the objects were deleted, not just hidden.
    await cp.kubectl("apply", "-f", await file("crd.yaml", CRD));
    await waitEstablished();
    const again = await cp.kubectl("get", "crontabs");
    expect(again.code).toBe(0);
    expect(again.stderr.trim()).toBe("No resources found in default namespace.");
  });
});
