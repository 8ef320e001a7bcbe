// ValidatingAdmissionPolicies with the real kubectl, under Kubernetes' group names: a policy and its
// binding applied from YAML and listed with kubectl's columns, a `kubectl apply` of a Deployment with
// too many replicas refused with the policy's message, a Warn binding's warning printed, and a policy
// whose expression does not compile refused at create.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes", ORCH_CONTROLLERS: "none" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

const policy = (name: string, expression: string) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "${expression}"
    message: "replicas must be at most 5"
`;

const binding = (name: string, policyName: string, actions: string, namespace: string) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${policyName}
  validationActions: [${actions}]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ${namespace}
`;

const deployment = (name: string, replicas: number, namespace: string) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`;

async function apply(file: string, text: string) {
  const path = join(cp.dataDir, file);
  await writeFile(path, text);
  return { path, ...(await cp.kubectl("apply", "-f", path)) };
}

describe("admission policies with kubectl", () => {
  it("applies a policy and its binding, and lists them with kubectl's columns", async () => {
    expect((await cp.kubectl("create", "namespace", "guarded")).code).toBe(0);
    expect((await cp.kubectl("create", "namespace", "warned")).code).toBe(0);
    const p = await apply("policy.yaml", policy("replica-limit", "object.spec.replicas <= 5"));
    expect(p.stderr).toBe("");
    expect(p.stdout.trim()).toBe("validatingadmissionpolicy.admissionregistration.k8s.io/replica-limit created");
    const b = await apply("binding.yaml", binding("replica-limit-binding", "replica-limit", "Deny", "guarded"));
    expect(b.stdout.trim()).toBe("validatingadmissionpolicybinding.admissionregistration.k8s.io/replica-limit-binding created");
    const w = await apply("warn.yaml", binding("replica-limit-warn", "replica-limit", "Warn", "warned"));
    expect(w.code).toBe(0);
    const policies = await cp.kubectl("get", "validatingadmissionpolicies");
    expect(policies.stdout).toMatch(/^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\nreplica-limit\s+1\s+<unset>\s+\d+s\n$/);
    const bindings = await cp.kubectl("get", "validatingadmissionpolicybindings");
    expect(bindings.stdout).toMatch(
      /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\nreplica-limit-binding\s+replica-limit\s+<unset>\s+\d+s\nreplica-limit-warn\s+replica-limit\s+<unset>\s+\d+s\n$/,
    );
  });

  it("kubectl apply of a Deployment with 6 replicas is refused with the policy's message; 5 is created", async () => {
    const refused = await apply("six.yaml", deployment("web", 6, "guarded"));
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `The deployments "web" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: replicas must be at most 5`,
    );
    expect((await cp.kubectl("get", "deployment", "web", "-n", "guarded")).code).toBe(1);
    const created = await apply("five.yaml", deployment("web", 5, "guarded"));
    expect(created.stderr).toBe("");
    expect(created.stdout.trim()).toBe("deployment.apps/web created");
  });

  it("a Warn binding lets kubectl apply through and kubectl prints the warning", async () => {
    const r = await apply("warned.yaml", deployment("web", 7, "warned"));
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("deployment.apps/web created");
    expect(r.stderr.trim()).toBe(
      "Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-warn': replicas must be at most 5",
    );
  });

  it("a policy whose expression does not compile is refused at create", async () => {
    const r = await apply("broken.yaml", policy("broken", "object.spec.replicas <="));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `The ValidatingAdmissionPolicy "broken" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:`,
    );
  });
});
