// Admission webhooks with the real kubectl, under Kubernetes' group names: configurations applied
// from YAML, a mutating webhook labels what `kubectl apply` creates, and a refused `kubectl apply`
// prints the webhook's message as Kubernetes does. The webhooks are a real HTTPS server started here.
import { createCA, issueCertificate } from "@orch/pki";
import { writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;
let webhooks: Server;
let caBundle = "";
let port = 0;

/** Adds `admitted-by: webhook`; refuses the name `forbidden`. */
function answer(path: string, request: { uid: string; name?: string; object?: { metadata?: { labels?: object } } }) {
  if (path === "/validate") {
    return request.name === "forbidden"
      ? { allowed: false, status: { code: 403, reason: "Forbidden", message: "the name forbidden is not allowed" } }
      : { allowed: true };
  }
  const op = request.object?.metadata?.labels
    ? { op: "add", path: "/metadata/labels/admitted-by", value: "webhook" }
    : { op: "add", path: "/metadata/labels", value: { "admitted-by": "webhook" } };
  return { allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([op])).toString("base64") };
}

beforeAll(async () => {
  const ca = await createCA({ commonName: "webhook-ca" });
  const serving = await issueCertificate({
    ca,
    subject: { commonName: "webhook" },
    ipAddresses: ["127.0.0.1"],
    usages: ["digital signature", "key encipherment", "server auth"],
    validitySeconds: 3600,
  });
  caBundle = Buffer.from(ca.certPem).toString("base64");
  webhooks = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const response = { uid: review.request.uid, ...answer(new URL(req.url ?? "/", "https://x").pathname, review.request) };
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
  await new Promise<void>((r) => webhooks.listen(0, "127.0.0.1", r));
  port = (webhooks.address() as AddressInfo).port;
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
  webhooks?.closeAllConnections();
  await new Promise((r) => webhooks?.close(r));
});

const hook = (kind: string, name: string, path: string) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata:
  name: ${name}
webhooks:
- name: ${name}.example.com
  clientConfig:
    url: https://127.0.0.1:${port}${path}
    caBundle: ${caBundle}
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  objectSelector:
    matchLabels: {team: a}
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;

const configMap = (name: string) => `
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  labels: {team: a}
data: {k: v}
`;

async function apply(file: string, text: string) {
  const path = join(cp.dataDir, file);
  await writeFile(path, text);
  return { path, ...(await cp.kubectl("apply", "-f", path)) };
}

describe("admission webhooks with kubectl", () => {
  it("applies both configurations, and lists them", async () => {
    const m = await apply("mutating.yaml", hook("MutatingWebhookConfiguration", "labels", "/mutate"));
    expect(m.stderr).toBe("");
    expect(m.stdout.trim()).toBe("mutatingwebhookconfiguration.admissionregistration.k8s.io/labels created");
    const v = await apply("validating.yaml", hook("ValidatingWebhookConfiguration", "names", "/validate"));
    expect(v.stdout.trim()).toBe("validatingwebhookconfiguration.admissionregistration.k8s.io/names created");
    const listed = await cp.kubectl("get", "validatingwebhookconfigurations");
    expect(listed.stdout).toMatch(/^NAME\s+WEBHOOKS\s+AGE\nnames\s+1\s+\d+s\n$/);
  });

  it("kubectl apply creates through the mutating webhook, which labels the object", async () => {
    const r = await apply("ok.yaml", configMap("ok"));
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("configmap/ok created");
    const label = await cp.kubectl("get", "configmap", "ok", "-o", "jsonpath={.metadata.labels.admitted-by}");
    expect(label.stdout).toBe("webhook");
  });

  it("a refused kubectl apply prints the webhook's message", async () => {
    const r = await apply("forbidden.yaml", configMap("forbidden"));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "${r.path}": admission webhook "names.example.com" denied the request: the name forbidden is not allowed`,
    );
    expect((await cp.kubectl("get", "configmap", "forbidden")).code).toBe(1);
  });
});
