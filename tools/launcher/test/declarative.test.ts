// Declarative management with the real kubectl: client-side `apply` (three-way strategic merge for the
// kinds kubectl knows, JSON merge for the others), `edit` with a scripted editor, `patch --type=strategic`
// and `diff`, against a control plane started as the README says, in both naming profiles.
import { execFile } from "node:child_process";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

const deployment = (o: { image: string; labels: string; sidecar: boolean; env: string }) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {${o.labels}}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: ${o.image}
        env: [${o.env}]
${o.sidecar ? "      - name: sidecar\n        image: busybox:1.36\n" : ""}`;

const serviceAccount = (extra: string) => `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: robot
secrets:
- name: first
${extra}`;

// `value` and `preemptionPolicy` are immutable; labels and the description are what apply changes.
const priorityClass = (group: string, labels: string, extra: string) => `
apiVersion: ${group}/v1
kind: PriorityClass
metadata:
  name: batch
  labels: {${labels}}
value: 1000
${extra}
`;

async function writeManifest(cp: ControlPlane, name: string, text: string): Promise<string> {
  const path = join(cp.dataDir, name);
  await writeFile(path, text);
  return path;
}

async function jsonOf(cp: ControlPlane, ...args: string[]): Promise<any> {
  const r = await cp.kubectl("get", ...args, "-o", "json");
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** kubectl as `cp.kubectl` runs it, with extra environment (an EDITOR). */
function kubectlWithEnv(cp: ControlPlane, env: NodeJS.ProcessEnv, ...args: string[]) {
  const base = ["--kubeconfig", cp.kubeconfig, "--cache-dir", join(cp.dataDir, "kubectl-cache")];
  return new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
    execFile("kubectl", [...base, ...args], { timeout: 30_000, env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** An EDITOR that runs `sed` with these expressions on the file kubectl hands it. */
async function sedEditor(cp: ControlPlane, name: string, ...expressions: string[]): Promise<string> {
  const path = join(cp.dataDir, name);
  await writeFile(path, `#!/bin/sh\nexec sed -i ${expressions.map((e) => `-e '${e}'`).join(" ")} "$1"\n`);
  await chmod(path, 0o755);
  return path;
}

describe("kubectl apply, edit, patch and diff (orch profile)", () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane();
  });
  afterAll(async () => {
    if (cp?.launcher.exitCode === null) await cp.stop();
  });

  it("apply twice: only what changed changes, a removed field is gone, others' changes stay", async () => {
    const v1 = await writeManifest(
      cp,
      "web.yaml",
      deployment({
        image: "nginx:1.27",
        labels: "tier: front, team: a",
        sidecar: true,
        env: "{name: MODE, value: one}, {name: DEBUG, value: '1'}",
      }),
    );
    const created = await cp.kubectl("apply", "-f", v1);
    expect(created.stderr).toBe("");
    expect(created.stdout.trim()).toBe("deployment.apps/web created");
    const first = await jsonOf(cp, "deployment", "web");
    expect(JSON.parse(first.metadata.annotations[LAST_APPLIED]).spec.replicas).toBe(2);

    // Someone else labels it: apply leaves what its manifest never had alone.
    expect((await cp.kubectl("label", "deployment", "web", "owner=ops")).code).toBe(0);

    const v2 = await writeManifest(
      cp,
      "web.yaml",
      deployment({ image: "nginx:1.28", labels: "tier: front", sidecar: false, env: "{name: MODE, value: two}" }),
    );
    const configured = await cp.kubectl("apply", "-f", v2);
    expect(configured.stderr).toBe("");
    expect(configured.stdout.trim()).toBe("deployment.apps/web configured");
    const second = await jsonOf(cp, "deployment", "web");
    expect(second.metadata.uid).toBe(first.metadata.uid);
    expect(second.metadata.labels).toEqual({ tier: "front", owner: "ops" });
    const containers = second.spec.template.spec.containers;
    expect(containers.map((c: any) => [c.name, c.image])).toEqual([["main", "nginx:1.28"]]);
    expect(containers[0].env).toEqual([{ name: "MODE", value: "two" }]);
    // Fields the server defaulted and the manifest never set are untouched.
    expect(containers[0].terminationMessagePolicy).toBe("File");
    expect(second.spec.revisionHistoryLimit).toBe(10);
    expect(second.metadata.generation).toBeGreaterThan(first.metadata.generation);

    const again = await cp.kubectl("apply", "-f", v2);
    expect(again.stdout.trim()).toBe("deployment.apps/web unchanged");
    // (kubectl found an empty patch and sent nothing; the controller may still be writing status.)
    expect((await jsonOf(cp, "deployment", "web")).spec).toEqual(second.spec);
  });

  it("apply on a ServiceAccount: secrets merge by name, a removed field is gone", async () => {
    const v1 = await writeManifest(cp, "sa.yaml", serviceAccount("- name: second\nautomountServiceAccountToken: false\n"));
    expect((await cp.kubectl("apply", "-f", v1)).stdout.trim()).toBe("serviceaccount/robot created");
    const v2 = await writeManifest(cp, "sa.yaml", serviceAccount("- name: third\n"));
    const configured = await cp.kubectl("apply", "-f", v2);
    expect(configured.stderr).toBe("");
    expect(configured.stdout.trim()).toBe("serviceaccount/robot configured");
    const sa = await jsonOf(cp, "serviceaccount", "robot");
    expect(sa.secrets).toEqual([{ name: "first" }, { name: "third" }]);
    expect(sa.automountServiceAccountToken).toBeUndefined();
  });

  it("apply on an orch-group kind (PriorityClass, a JSON merge patch for kubectl)", async () => {
    const v1 = await writeManifest(
      cp,
      "pc.yaml",
      priorityClass("scheduling.orch.io", "use: batch, tier: low", "description: nightly jobs"),
    );
    expect((await cp.kubectl("apply", "-f", v1)).stdout.trim()).toBe("priorityclass.scheduling.orch.io/batch created");
    const v2 = await writeManifest(cp, "pc.yaml", priorityClass("scheduling.orch.io", "use: batch", ""));
    const configured = await cp.kubectl("apply", "-f", v2);
    expect(configured.stderr).toBe("");
    expect(configured.stdout.trim()).toBe("priorityclass.scheduling.orch.io/batch configured");
    const got = await jsonOf(cp, "priorityclass", "batch");
    expect(got.description).toBeUndefined();
    expect(got.metadata.labels).toEqual({ use: "batch" });
    expect((await cp.kubectl("apply", "-f", v2)).stdout.trim()).toBe("priorityclass.scheduling.orch.io/batch unchanged");
  });

  it("edit with EDITOR set to a script", async () => {
    const editor = await sedEditor(cp, "edit-web.sh", "s/replicas: 2/replicas: 3/", "s/tier: front/tier: edge/");
    const edited = await kubectlWithEnv(cp, { EDITOR: editor }, "edit", "deployment", "web");
    expect(edited.stderr).toBe("");
    expect(edited.stdout.trim()).toBe("deployment.apps/web edited");
    const got = await jsonOf(cp, "deployment", "web");
    expect(got.spec.replicas).toBe(3);
    expect(got.metadata.labels.tier).toBe("edge");
    expect(got.spec.template.spec.containers.map((c: any) => c.name)).toEqual(["main"]);

    const pcEditor = await sedEditor(cp, "edit-pc.sh", "s/use: batch/use: edited/");
    const pc = await kubectlWithEnv(cp, { EDITOR: pcEditor }, "edit", "priorityclass", "batch");
    expect(pc.stdout.trim()).toBe("priorityclass.scheduling.orch.io/batch edited");
    expect((await jsonOf(cp, "priorityclass", "batch")).metadata.labels.use).toBe("edited");

    const unchanged = await kubectlWithEnv(cp, { EDITOR: "true" }, "edit", "deployment", "web");
    expect(unchanged.stderr.trim()).toBe("Edit cancelled, no changes made.");
  });

  it("patch --type=strategic merges a Deployment's containers by name", async () => {
    const added = await cp.kubectl(
      "patch",
      "deployment",
      "web",
      "--type=strategic",
      "-p",
      '{"spec":{"template":{"spec":{"containers":[{"name":"log","image":"fluentd:v1"}]}}}}',
    );
    expect(added.stderr).toBe("");
    expect(added.stdout.trim()).toBe("deployment.apps/web patched");
    const changed = await cp.kubectl(
      "patch",
      "deployment",
      "web",
      "-p",
      '{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.29"}]}}}}',
    );
    expect(changed.stdout.trim()).toBe("deployment.apps/web patched");
    const containers = (await jsonOf(cp, "deployment", "web")).spec.template.spec.containers;
    expect(containers.map((c: any) => [c.name, c.image]).sort()).toEqual([
      ["log", "fluentd:v1"],
      ["main", "nginx:1.29"],
    ]);

    const bad = await cp.kubectl("patch", "deployment", "web", "-p", '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim()).toBe("Error from server: map: map[image:x] does not contain declared merge key: name");
  });

  it("diff shows what apply would change, and nothing once applied", async () => {
    const manifest = await writeManifest(
      cp,
      "web.yaml",
      deployment({ image: "nginx:1.30", labels: "tier: front", sidecar: false, env: "{name: MODE, value: two}" }),
    );
    const before = (await jsonOf(cp, "deployment", "web")).spec;
    const diff = await cp.kubectl("diff", "-f", manifest);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toMatch(/^-\s+image: nginx:1\.29$/m);
    expect(diff.stdout).toMatch(/^\+\s+image: nginx:1\.30$/m);
    // A dry run: nothing was written.
    expect((await jsonOf(cp, "deployment", "web")).spec).toEqual(before);

    expect((await cp.kubectl("apply", "-f", manifest)).stdout.trim()).toBe("deployment.apps/web configured");
    const none = await cp.kubectl("diff", "-f", manifest);
    expect(none.code, none.stdout + none.stderr).toBe(0);
    expect(none.stdout).toBe("");
  });
});

describe("kubectl apply (kubernetes profile)", () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
  });
  afterAll(async () => {
    if (cp?.launcher.exitCode === null) await cp.stop();
  });

  it("apply twice on a PriorityClass and a Deployment (strategic merge from kubectl's own types)", async () => {
    const v1 = await writeManifest(cp, "pc.yaml", priorityClass("scheduling.k8s.io", "use: batch, tier: low", "description: nightly jobs"));
    expect((await cp.kubectl("apply", "-f", v1)).stdout.trim()).toBe("priorityclass.scheduling.k8s.io/batch created");
    const v2 = await writeManifest(cp, "pc.yaml", priorityClass("scheduling.k8s.io", "use: batch", ""));
    const configured = await cp.kubectl("apply", "-f", v2);
    expect(configured.stderr).toBe("");
    expect(configured.stdout.trim()).toBe("priorityclass.scheduling.k8s.io/batch configured");
    const got = await jsonOf(cp, "priorityclass", "batch");
    expect([got.description, got.metadata.labels]).toEqual([undefined, { use: "batch" }]);

    const web = await writeManifest(cp, "web.yaml", deployment({ image: "nginx:1.27", labels: "tier: front", sidecar: true, env: "" }));
    expect((await cp.kubectl("apply", "-f", web)).stdout.trim()).toBe("deployment.apps/web created");
    const web2 = await writeManifest(cp, "web.yaml", deployment({ image: "nginx:1.27", labels: "tier: front", sidecar: false, env: "" }));
    expect((await cp.kubectl("apply", "-f", web2)).stdout.trim()).toBe("deployment.apps/web configured");
    expect((await jsonOf(cp, "deployment", "web")).spec.template.spec.containers.map((c: any) => c.name)).toEqual(["main"]);
  });
});
