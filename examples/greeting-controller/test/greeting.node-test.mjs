// The same controller tested with node:test: nothing but Node and the orch package.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { startControlPlane } from "@orch/control-plane/testing";
import { startGreetingController } from "../src/controller.mjs";

let cp;
let controller;

before(async () => {
  cp = await startControlPlane({ crds: ["crd.yaml"], controllers: "none" });
  controller = await startGreetingController(cp.kubeconfig);
});
after(async () => {
  await controller?.stop();
  await cp?.stop();
});

test("a Greeting's name changes, and so does its greeting", async () => {
  const kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  const api = kc.makeApiClient(CustomObjectsApi);
  const ref = { group: "example.com", version: "v1", plural: "greetings", namespace: "default" };
  const events = await cp.recordEvents({ resources: [{ group: "example.com", version: "v1", resource: "greetings" }] });
  await api.createNamespacedCustomObject({
    ...ref,
    body: { apiVersion: "example.com/v1", kind: "Greeting", metadata: { name: "g" }, spec: { name: "Ada" } },
  });
  await events.waitFor("Ada greeted", (e) => e.name === "g" && e.object.status?.message === "Hello, Ada");
  const current = await api.getNamespacedCustomObject({ ...ref, name: "g" });
  await api.replaceNamespacedCustomObject({ ...ref, name: "g", body: { ...current, spec: { name: "Grace" } } });
  const greeted = await events.waitFor("Grace greeted", (e) => e.name === "g" && e.object.status?.message === "Hello, Grace");
  assert.equal(greeted.type, "MODIFIED");
  await events.stop();
});
