// The controller against a real control plane with vitest: each suite gets its own, in about a second.
import { AdmissionregistrationV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { startControlPlane, step } from "@orch/control-plane/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startGreetingController } from "../src/controller.mjs";
import { startGreetingWebhook } from "../src/webhook.mjs";

let cp;
let controller;
let api;
let kc;

beforeAll(async () => {
  cp = await startControlPlane({ crds: ["crd.yaml"], controllers: "none" });
  controller = await startGreetingController(cp.kubeconfig);
  kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  api = kc.makeApiClient(CustomObjectsApi);
});
afterAll(async () => {
  await controller?.stop();
  await cp?.stop();
});

const greeting = (name, who) => ({ apiVersion: "example.com/v1", kind: "Greeting", metadata: { name }, spec: { name: who } });
const create = (body) =>
  api.createNamespacedCustomObject({ group: "example.com", version: "v1", plural: "greetings", namespace: "default", body });

it("greets whoever a new Greeting names", async () => {
  const events = await cp.recordEvents({ resources: [{ group: "example.com", version: "v1", resource: "greetings" }] });
  await create(greeting("world", "world"));
  const [, greeted] = await events.waitForSequence([
    step("the Greeting created", (e) => e.type === "ADDED" && e.name === "world"),
    step(
      "its status greeting the world",
      (e) => e.type === "MODIFIED" && e.name === "world" && e.object.status?.message === "Hello, world",
    ),
  ]);
  expect(greeted.resource).toBe("greetings");
  await events.stop();
});

it("is refused a Greeting without a name, by the CRD's schema", async () => {
  await expect(create({ ...greeting("nobody", ""), spec: {} })).rejects.toMatchObject({ code: 422 });
});

it("is refused a shouting Greeting, by its validating webhook", async () => {
  // The webhook server runs in the test, with a certificate from the control plane's CA.
  const { cert, key, caBundle } = await cp.webhookCertificate();
  const webhook = await startGreetingWebhook({ cert, key });
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name: "greetings.example.com" },
      webhooks: [
        {
          name: "no-shouting.greetings.example.com",
          clientConfig: { url: webhook.url, caBundle },
          rules: [{ apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["greetings"] }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          failurePolicy: "Fail",
        },
      ],
    },
  });
  try {
    const refused = await create(greeting("loud", "WORLD")).catch((e) => e);
    expect(refused.code).toBe(422);
    expect(JSON.parse(refused.body).message).toBe(
      'admission webhook "no-shouting.greetings.example.com" denied the request: please do not shout: greet "WORLD" in lower case',
    );
    await expect(create(greeting("quiet", "World"))).resolves.toMatchObject({ spec: { name: "World" } });
  } finally {
    await admission.deleteValidatingWebhookConfiguration({ name: "greetings.example.com" });
    await webhook.stop();
  }
});
