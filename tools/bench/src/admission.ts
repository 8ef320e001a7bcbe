// Creates/s through admission, beside the plain create rate of the same apiserver in the same run:
// ConfigMaps in three namespaces, one with nothing to admit them, one under one ValidatingAdmissionPolicy
// (CEL, in-process), one under one mutating and one validating webhook. The webhooks are an HTTPS
// server in this process (it shares the machine with the load, as a webhook next to a development
// control plane does), serving with the apiserver's own certificate, which names 127.0.0.1.
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Pool } from "undici";
import { type LoadResult, type Tls, createNamespace, inTurn, runLoad } from "./load.js";

export interface AdmissionFigures {
  plain: LoadResult;
  policy: LoadResult;
  webhooks: LoadResult;
}

const GROUP = "admissionregistration.orch.io";

async function call(p: Pool, method: string, path: string, body: unknown): Promise<void> {
  const res = await p.request({ path, method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
}

/** Answers every review: the mutating path adds a label, the validating path allows. */
function webhookServer(serving: { cert: string; key: string }): Promise<Server> {
  const patch = Buffer.from(JSON.stringify([{ op: "add", path: "/metadata/labels", value: { admitted: "yes" } }])).toString("base64");
  const server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { request: { uid: string } };
      const mutate = req.url?.startsWith("/mutate");
      const response = { uid: review.request.uid, allowed: true, ...(mutate ? { patchType: "JSONPatch", patch } : {}) };
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server)));
}

const inNamespace = (namespace: string) => ({ matchLabels: { "kubernetes.io/metadata.name": namespace } });
const configMapRule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] };

export async function admissionFigures(
  p: Pool,
  tls: Tls,
  serving: { cert: string; key: string },
  creates: number,
  concurrency: number,
): Promise<AdmissionFigures> {
  for (const ns of ["adm-plain", "adm-policy", "adm-webhooks"]) await createNamespace(p, ns);
  await call(p, "POST", `/apis/${GROUP}/v1/validatingadmissionpolicies`, {
    apiVersion: `${GROUP}/v1`,
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "bench" },
    spec: {
      matchConstraints: { resourceRules: [configMapRule], namespaceSelector: inNamespace("adm-policy") },
      validations: [{ expression: "size(object.data) <= 10 && !object.metadata.name.startsWith('forbidden-')", message: "too much" }],
    },
  });
  await call(p, "POST", `/apis/${GROUP}/v1/validatingadmissionpolicybindings`, {
    apiVersion: `${GROUP}/v1`,
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: "bench" },
    spec: { policyName: "bench", validationActions: ["Deny"] },
  });
  const server = await webhookServer(serving);
  const port = (server.address() as AddressInfo).port;
  const hook = (path: string) => ({
    name: `${path.slice(1)}.bench.example.com`,
    clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle: Buffer.from(tls.ca).toString("base64") },
    rules: [configMapRule],
    namespaceSelector: inNamespace("adm-webhooks"),
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  });
  await call(p, "POST", `/apis/${GROUP}/v1/mutatingwebhookconfigurations`, {
    apiVersion: `${GROUP}/v1`,
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "bench" },
    webhooks: [hook("/mutate")],
  });
  await call(p, "POST", `/apis/${GROUP}/v1/validatingwebhookconfigurations`, {
    apiVersion: `${GROUP}/v1`,
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "bench" },
    webhooks: [hook("/validate")],
  });
  const post = (namespace: string, prefix: string, count = creates) =>
    runLoad(
      count,
      concurrency,
      async (i) => {
        const res = await p.request({
          path: `/api/v1/namespaces/${namespace}/configmaps`,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${prefix}-${i}` }, data: { a: "1", b: "2" } }),
        });
        await res.body.dump();
        return res.statusCode;
      },
      201,
    );
  try {
    // Warm each path (compiled expressions, kept-alive webhook connections), then measure them in turn.
    for (const ns of ["adm-plain", "adm-policy", "adm-webhooks"]) await post(ns, "warm", 300);
    const third = Math.ceil(creates / 3);
    return await inTurn({
      plain: (round) => post("adm-plain", `cm-${round}`, third),
      policy: (round) => post("adm-policy", `cm-${round}`, third),
      webhooks: (round) => post("adm-webhooks", `cm-${round}`, third),
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
