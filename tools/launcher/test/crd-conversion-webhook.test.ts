// A CRD converting through a webhook, with the real kubectl against the whole control plane (the
// crd-controller establishes it) under Kubernetes' group names: v1 (storage) names a field `host`, v2
// `hostname`, and the webhook, a real HTTPS server started here with a certificate from @orch/pki,
// renames it. Objects applied in either version are read in both; a webhook that goes away makes
// kubectl print Kubernetes' error.
import { createCA, issueCertificate } from "@orch/pki";
import { writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

const GROUP = "conversion.example.com";
let cp: ControlPlane;
let webhook: Server;
let caBundle = "";
let port = 0;

/** v1 `spec.host` ⇄ v2 `spec.hostname`. */
function convert(obj: any, desired: string): any {
  const out = structuredClone(obj);
  const [from, to] = [String(obj.apiVersion).split("/")[1], desired.split("/")[1]];
  if (out.spec && from === "v1" && to === "v2") {
    out.spec.hostname = out.spec.host;
    delete out.spec.host;
  } else if (out.spec && from === "v2" && to === "v1") {
    out.spec.host = out.spec.hostname;
    delete out.spec.hostname;
  }
  out.apiVersion = desired;
  return out;
}

beforeAll(async () => {
  const ca = await createCA({ commonName: "conversion-webhook-ca" });
  const serving = await issueCertificate({
    ca,
    subject: { commonName: "conversion-webhook" },
    ipAddresses: ["127.0.0.1"],
    usages: ["digital signature", "key encipherment", "server auth"],
    validitySeconds: 3600,
  });
  caBundle = Buffer.from(ca.certPem).toString("base64");
  webhook = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const { uid, desiredAPIVersion, objects } = review.request;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: "ConversionReview",
          response: { uid, result: { status: "Success" }, convertedObjects: objects.map((o: unknown) => convert(o, desiredAPIVersion)) },
        }),
      );
    });
  });
  await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
  port = (webhook.address() as AddressInfo).port;
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
  webhook?.closeAllConnections();
  await new Promise((r) => webhook?.close(r));
});

const schema = (field: string) => `
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ${field}: {type: string}
              replicas: {type: integer}`;

const crd = (url: string) => `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.${GROUP}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:${schema("host")}
  - name: v2
    served: true
    storage: false
    schema:${schema("hostname")}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: ["v1"]
      clientConfig:
        url: ${url}
        caBundle: ${caBundle}
`;

async function apply(file: string, text: string): Promise<string> {
  const path = join(cp.dataDir, file);
  await writeFile(path, text);
  return kubectlOk(cp, "apply", "-f", path);
}

const gadget = (version: "v1" | "v2", name: string, host: string, replicas = 1) => `
apiVersion: ${GROUP}/${version}
kind: Gadget
metadata:
  name: ${name}
spec:
  ${version === "v1" ? "host" : "hostname"}: ${host}
  replicas: ${replicas}
`;

const specIn = async (version: string, name: string) =>
  JSON.parse(await kubectlOk(cp, "get", `gadgets.${version}.${GROUP}`, name, "-o", "json")) as { apiVersion: string; spec: unknown };

describe("a CRD converting by webhook, with kubectl", () => {
  it("is applied and established", async () => {
    expect((await apply("crd.yaml", crd(`https://127.0.0.1:${port}/convert`))).trim()).toBe(
      `customresourcedefinition.apiextensions.k8s.io/gadgets.${GROUP} created`,
    );
    await kubectlOk(cp, "wait", "--for", "condition=established", "--timeout=20s", `crd/gadgets.${GROUP}`);
  });

  it("an object applied in v1 reads in v2 with the field renamed", async () => {
    expect((await apply("a-v1.yaml", gadget("v1", "a", "a.example.com"))).trim()).toBe(`gadget.${GROUP}/a created`);
    expect(await specIn("v2", "a")).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { hostname: "a.example.com", replicas: 1 } });
    expect(await specIn("v1", "a")).toMatchObject({ apiVersion: `${GROUP}/v1`, spec: { host: "a.example.com", replicas: 1 } });
  });

  it("an object applied in v2 reads in v1", async () => {
    expect((await apply("b-v2.yaml", gadget("v2", "b", "b.example.com"))).trim()).toBe(`gadget.${GROUP}/b created`);
    expect(await specIn("v1", "b")).toMatchObject({ spec: { host: "b.example.com", replicas: 1 } });
  });

  it("kubectl apply in v2 changes an object created in v1, and v1 sees it", async () => {
    expect((await apply("a-v2.yaml", gadget("v2", "a", "moved.example.com", 3))).trim()).toBe(`gadget.${GROUP}/a configured`);
    expect(await specIn("v1", "a")).toMatchObject({ spec: { host: "moved.example.com", replicas: 3 } });
    expect(await specIn("v2", "a")).toMatchObject({ spec: { hostname: "moved.example.com", replicas: 3 } });
  });

  it("server-side apply in v1 of an object created in v2", async () => {
    const path = join(cp.dataDir, "b-v1.yaml");
    await writeFile(path, gadget("v1", "b", "b2.example.com", 2));
    expect((await kubectlOk(cp, "apply", "--server-side", "--force-conflicts", "-f", path)).trim()).toBe(
      `gadget.${GROUP}/b serverside-applied`,
    );
    expect(await specIn("v2", "b")).toMatchObject({ spec: { hostname: "b2.example.com", replicas: 2 } });
  });

  it("kubectl get lists in each version", async () => {
    const v2 = JSON.parse(await kubectlOk(cp, "get", `gadgets.v2.${GROUP}`, "-o", "json"));
    expect(v2.items.map((i: any) => [i.metadata.name, i.apiVersion, i.spec.hostname])).toEqual([
      ["a", `${GROUP}/v2`, "moved.example.com"],
      ["b", `${GROUP}/v2`, "b2.example.com"],
    ]);
    const table = await kubectlOk(cp, "get", `gadgets.v2.${GROUP}`);
    expect(table).toMatch(/^NAME\s+AGE\na\s+\d+s\nb\s+\d+s\n$/);
  });

  it("kubectl get -w in v2 shows a change made in v1, converted", async () => {
    const watcher = cp.spawnKubectl(
      "get",
      `gadgets.v2.${GROUP}`,
      "-w",
      "-o",
      'jsonpath={.metadata.name}={.spec.hostname}{"\\n"}',
      "--request-timeout=15s",
    );
    let seen = "";
    watcher.stdout!.on("data", (d: Buffer) => (seen += d.toString()));
    try {
      // kubectl prints its list first, then watches from the list's resourceVersion.
      await eventually("kubectl's list", () => seen.includes("a=moved.example.com"));
      await kubectlOk(cp, "patch", `gadgets.v1.${GROUP}`, "a", "--type=merge", "-p", '{"spec":{"host":"watched.example.com"}}');
      await eventually("the watch event", () => seen.includes("a=watched.example.com"));
    } finally {
      watcher.kill();
    }
  });

  it("a webhook that is down: kubectl prints Kubernetes' error; the storage version still reads", async () => {
    await kubectlOk(
      cp,
      "patch",
      "crd",
      `gadgets.${GROUP}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { conversion: { webhook: { clientConfig: { url: "https://127.0.0.1:1/convert" } } } } }),
    );
    // The CRD's change is served once its commit is heard: retry until the old webhook is gone.
    let out = await cp.kubectl("get", `gadgets.v2.${GROUP}`, "a");
    for (let i = 0; i < 50 && out.code === 0; i++) out = await cp.kubectl("get", `gadgets.v2.${GROUP}`, "a");
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe(
      `Error from server: conversion webhook for ${GROUP}/v1, Kind=Gadget failed: Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`,
    );
    expect(await specIn("v1", "a")).toMatchObject({ spec: { host: "watched.example.com" } });
  });
});
