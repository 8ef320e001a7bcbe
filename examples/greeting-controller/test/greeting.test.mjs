// The controller against a real control plane with vitest: each suite gets its own, in about a second.
import { CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { startControlPlane, step } from "@orch/control-plane/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startGreetingController } from "../src/controller.mjs";

let cp;
let controller;
let api;

beforeAll(async () => {
  cp = await startControlPlane({ crds: ["crd.yaml"], controllers: "none" });
  controller = await startGreetingController(cp.kubeconfig);
  const kc = new KubeConfig();
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
