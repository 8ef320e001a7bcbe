// CRD conversion webhooks (spec 2.12, 6.2, 7) against the real apiserver, with a real HTTPS webhook
// server started here (certificates from @orch/pki, its CA as caBundle): a CRD with v1 (storage,
// `spec.host`) and v2 (`spec.hostname`) whose webhook renames the field. Objects written in either
// version are stored in v1 and read, listed and watched in both; a webhook that is down, answers
// garbage or breaks the review's rules fails the request as Kubernetes does; and spec.conversion is
// validated as apiextensions-apiserver validates it.
import { createCA, issueCertificate } from "@orch/pki";
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookConverter } from "../src/conversion/webhook-converter.js";
import { sleep, useTestServer } from "./harness.js";

const t = useTestServer();
const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";

type Review = { apiVersion: string; kind: string; request: { uid: string; desiredAPIVersion: string; objects: any[] } };

/** v1 has `spec.host`, v2 `spec.hostname`: the one field each version names differently. */
function convertObject(obj: any, desired: string): any {
  const out = structuredClone(obj);
  const from = String(obj.apiVersion).split("/")[1];
  const to = desired.split("/")[1];
  if (from === "v1" && to === "v2" && out.spec) {
    out.spec.hostname = out.spec.host;
    delete out.spec.host;
  }
  if (from === "v2" && to === "v1" && out.spec) {
    out.spec.host = out.spec.hostname;
    delete out.spec.hostname;
  }
  out.apiVersion = desired;
  return out;
}

/** What each path answers: a converting webhook, and ones that break the rules in one way each. */
const behaviours: Record<string, (review: Review) => { status?: number; body: string; type?: string }> = {
  "/convert": (review) => ({
    body: answer(
      review,
      review.request.objects.map((o) => convertObject(o, review.request.desiredAPIVersion)),
    ),
  }),
  "/garbage": () => ({ body: "this is not a review" }),
  "/empty": () => ({ body: "" }),
  "/error-500": () => ({ status: 500, body: "boom" }),
  "/error-500-text": () => ({ status: 500, body: "boom", type: "text/plain" }),
  "/wrong-uid": () => ({
    body: JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      response: { uid: "not-the-uid", result: { status: "Success" }, convertedObjects: [] },
    }),
  }),
  "/object-uid": (review) => ({
    body: answer(
      review,
      review.request.objects.map((o) => {
        const out = convertObject(o, review.request.desiredAPIVersion);
        out.metadata.uid = "00000000-0000-0000-0000-000000000000";
        return out;
      }),
    ),
  }),
  "/refuse": (review) => ({
    body: JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      response: { uid: review.request.uid, result: { status: "Failure", message: "cannot convert this one" } },
    }),
  }),
  "/too-few": (review) => ({ body: answer(review, []) }),
  "/metadata": (review) => ({
    body: answer(
      review,
      review.request.objects.map((o) => {
        const out = convertObject(o, review.request.desiredAPIVersion);
        // Labels may change; the rest of the metadata is the server's and comes back as it was.
        out.metadata.labels = { ...out.metadata.labels, converted: "yes" };
        out.metadata.generation = 99;
        out.metadata.finalizers = ["example.com/sneaky"];
        return out;
      }),
    ),
  }),
};

function answer(review: Review, convertedObjects: any[]): string {
  return JSON.stringify({
    apiVersion: review.apiVersion,
    kind: "ConversionReview",
    response: { uid: review.request.uid, result: { status: "Success" }, convertedObjects },
  });
}

let server: Server;
let port = 0;
let caBundle = "";
const received: { path: string; review: Review }[] = [];
const reviewsAt = (path: string) => received.filter((r) => r.path === path).map((r) => r.review);

beforeAll(async () => {
  const ca = await createCA({ commonName: "conversion-webhook-ca" });
  const serving = await issueCertificate({
    ca,
    subject: { commonName: "conversion-webhook" },
    ipAddresses: ["127.0.0.1"],
    dnsNames: ["converter.default.svc"],
    usages: ["digital signature", "key encipherment", "server auth"],
    validitySeconds: 3600,
  });
  caBundle = Buffer.from(ca.certPem).toString("base64");
  server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "https://x");
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Review;
      received.push({ path: url.pathname, review });
      const behave = behaviours[url.pathname];
      if (!behave) return void res.writeHead(404).end();
      const { status = 200, body, type = "application/json" } = behave(review);
      res.writeHead(status, { "Content-Type": type });
      res.end(body);
    });
  });
  // Every address: the Service test reaches it through an Endpoints address, which may not be loopback.
  await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const versionSchema = (field: string) => ({
  type: "object",
  properties: {
    spec: { type: "object", properties: { [field]: { type: "string" }, size: { type: "integer" } } },
  },
});

let groups = 0;
/** A Gadget CRD converting through `clientConfig`, Established as the crd-controller would; its paths. */
async function defineGadgets(clientConfig: Record<string, unknown>, reviewVersions = ["v1"]) {
  const group = `g${++groups}.conversion.example.com`;
  const created = await t.api.post(CRDS, {
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
      versions: [
        { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: versionSchema("host") } },
        { name: "v2", served: true, storage: false, schema: { openAPIV3Schema: versionSchema("hostname") } },
      ],
      conversion: { strategy: "Webhook", webhook: { conversionReviewVersions: reviewVersions, clientConfig } },
    },
  });
  expect(created.status, created.text).toBe(201);
  const crd = created.body;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  crd.status = {
    ...crd.status,
    acceptedNames: crd.spec.names,
    conditions: [
      { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "", lastTransitionTime: now },
      { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "", lastTransitionTime: now },
    ],
  };
  const established = await t.api.put(`${CRDS}/gadgets.${group}/status`, crd);
  expect(established.status, established.text).toBe(200);
  const v1 = `/apis/${group}/v1/namespaces/default/gadgets`;
  const v2 = `/apis/${group}/v2/namespaces/default/gadgets`;
  for (let i = 0; i < 100 && (await t.api.get(v2)).status !== 200; i++) await sleep(20);
  return { group, v1, v2, crd: `${CRDS}/gadgets.${group}` };
}

const urlConfig = (path: string) => ({ url: `https://127.0.0.1:${port}${path}`, caBundle });
const gadget = (group: string, version: "v1" | "v2", name: string, value: string, labels: Record<string, string> = {}) => ({
  apiVersion: `${group}/${version}`,
  kind: "Gadget",
  metadata: { name, labels },
  spec: { [version === "v1" ? "host" : "hostname"]: value, size: 1 },
});

describe("conversion through the webhook", () => {
  it("an object created in v1 reads in v2 with the field renamed, and v1 reads it without a call", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    const before = received.length;
    const created = await t.api.post(v1, gadget(group, "v1", "a", "a.example.com"));
    expect(created.status, created.text).toBe(201);
    // Written in the storage version: no conversion.
    expect(received.length).toBe(before);
    const read = await t.api.get(`${v2}/a`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.apiVersion).toBe(`${group}/v2`);
    expect(read.body.spec).toEqual({ hostname: "a.example.com", size: 1 });
    expect(read.body.metadata.uid).toBe(created.body.metadata.uid);
    expect(read.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    const review = reviewsAt("/convert").at(-1)!;
    expect(review.apiVersion).toBe("apiextensions.k8s.io/v1");
    expect(review.kind).toBe("ConversionReview");
    expect(review.request.desiredAPIVersion).toBe(`${group}/v2`);
    expect(review.request.objects.map((o) => o.apiVersion)).toEqual([`${group}/v1`]);
  });

  it("an object created in v2 is stored in v1: the write converts it, a v1 read needs no call", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    const created = await t.api.post(v2, gadget(group, "v2", "b", "b.example.com"));
    expect(created.status, created.text).toBe(201);
    expect(created.body.apiVersion).toBe(`${group}/v2`);
    expect(created.body.spec).toEqual({ hostname: "b.example.com", size: 1 });
    const toStorage = reviewsAt("/convert").at(-1)!;
    expect(toStorage.request.desiredAPIVersion).toBe(`${group}/v1`);
    const calls = received.length;
    const read = await t.api.get(`${v1}/b`);
    expect(read.body.spec).toEqual({ host: "b.example.com", size: 1 });
    expect(read.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(received.length).toBe(calls);
  });

  it("updates and patches in v2 go through the webhook both ways and keep the object stored in v1", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    await t.api.post(v1, gadget(group, "v1", "c", "old.example.com"));
    const current = (await t.api.get(`${v2}/c`)).body;
    current.spec.hostname = "new.example.com";
    const updated = await t.api.put(`${v2}/c`, current);
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.spec.hostname).toBe("new.example.com");
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(current.metadata.resourceVersion));
    const patched = await t.api.patch(`${v2}/c`, { spec: { size: 3 } }, "application/merge-patch+json");
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.spec).toEqual({ hostname: "new.example.com", size: 3 });
    expect((await t.api.get(`${v1}/c`)).body.spec).toEqual({ host: "new.example.com", size: 3 });
  });

  it("deletes in v2: a finalizer holds the object (still stored in v1), removing it in v2 deletes it", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    const body = gadget(group, "v2", "d", "d.example.com") as any;
    body.metadata.finalizers = ["example.com/hold"];
    expect((await t.api.post(v2, body)).status).toBe(201);
    const deleting = await t.api.delete(`${v2}/d`);
    expect(deleting.status, deleting.text).toBe(200);
    expect(deleting.body.apiVersion).toBe(`${group}/v2`);
    expect(deleting.body.metadata.deletionTimestamp).toBeTruthy();
    const held = await t.api.get(`${v1}/d`);
    expect(held.body.spec).toEqual({ host: "d.example.com", size: 1 });
    expect(held.body.metadata.deletionTimestamp).toBe(deleting.body.metadata.deletionTimestamp);
    const released = await t.api.patch(`${v2}/d`, { metadata: { finalizers: null } }, "application/merge-patch+json");
    expect(released.status, released.text).toBe(200);
    expect((await t.api.get(`${v1}/d`)).status).toBe(404);
  });

  it("a list in v2 converts each page in one review; label selectors hold", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    for (const name of ["l1", "l2", "l3"]) await t.api.post(v1, gadget(group, "v1", name, `${name}.example.com`, { app: "x" }));
    await t.api.post(v1, gadget(group, "v1", "other", "other.example.com", { app: "y" }));
    const before = reviewsAt("/convert").length;
    const list = await t.api.get(`${v2}?labelSelector=app%3Dx`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.apiVersion).toBe(`${group}/v2`);
    expect(list.body.items.map((i: any) => [i.metadata.name, i.apiVersion, i.spec.hostname])).toEqual([
      ["l1", `${group}/v2`, "l1.example.com"],
      ["l2", `${group}/v2`, "l2.example.com"],
      ["l3", `${group}/v2`, "l3.example.com"],
    ]);
    const reviews = reviewsAt("/convert").slice(before);
    expect(reviews).toHaveLength(1);
    // Pages: two items, then the rest, one review each.
    const first = await t.api.get(`${v2}?limit=2`);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.metadata.continue).toBeTruthy();
    const second = await t.api.get(`${v2}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    expect(second.body.items.map((i: any) => i.spec.hostname)).toEqual(["l3.example.com", "other.example.com"]);
    expect(
      reviewsAt("/convert")
        .slice(before + 1)
        .map((r) => r.request.objects.length),
    ).toEqual([2, 2]);
  });

  it("a watch in v2 streams converted objects: initial state, then changes", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    await t.api.post(v1, gadget(group, "v1", "w1", "w1.example.com"));
    const list = await t.api.get(v2);
    const watch = await t.api.watch(`${v2}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    await t.api.post(v1, gadget(group, "v1", "w2", "w2.example.com"));
    await t.api.patch(`${v1}/w1`, { spec: { host: "moved.example.com" } }, "application/merge-patch+json");
    await t.api.delete(`${v1}/w2`);
    const events = await watch.take(3);
    watch.close();
    expect(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec.hostname])).toEqual([
      ["ADDED", `${group}/v2`, "w2", "w2.example.com"],
      ["MODIFIED", `${group}/v2`, "w1", "moved.example.com"],
      ["DELETED", `${group}/v2`, "w2", "w2.example.com"],
    ]);
    const initial = await t.api.watch(`${v2}?watch=true`);
    const first = await initial.next();
    initial.close();
    expect([first.type, first.object.metadata.name, first.object.spec.hostname]).toEqual(["ADDED", "w1", "moved.example.com"]);
  });

  it("v1beta1 first in conversionReviewVersions: the review is apiextensions.k8s.io/v1beta1", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"), ["v1beta1", "v1"]);
    await t.api.post(v1, gadget(group, "v1", "beta", "beta.example.com"));
    const read = await t.api.get(`${v2}/beta`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.spec.hostname).toBe("beta.example.com");
    expect(reviewsAt("/convert").at(-1)!.apiVersion).toBe("apiextensions.k8s.io/v1beta1");
  });

  it("labels a webhook changes are kept; the rest of its metadata is the server's", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/metadata"));
    const created = await t.api.post(v1, gadget(group, "v1", "meta", "meta.example.com", { app: "m" }));
    const read = await t.api.get(`${v2}/meta`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.metadata.labels).toEqual({ app: "m", converted: "yes" });
    expect(read.body.metadata.generation).toBe(created.body.metadata.generation);
    expect(read.body.metadata.finalizers).toBeUndefined();
  });

  it("the storage version's hash is in discovery", async () => {
    const { group } = await defineGadgets(urlConfig("/convert"));
    const { createHash } = await import("node:crypto");
    const hash = createHash("sha256").update(`${group}/v1/Gadget`).digest().subarray(0, 8).toString("base64");
    for (const version of ["v1", "v2"]) {
      const doc = await t.api.get(`/apis/${group}/${version}`);
      expect(doc.body.resources.find((r: any) => r.name === "gadgets").storageVersionHash).toBe(hash);
    }
  });

  it("a service reference is called at an address of the Service's Endpoints, the certificate naming <name>.<namespace>.svc", async () => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((a) => a?.family === "IPv4" && !a.internal)?.address;
    expect(address, "this host needs a non-loopback IPv4 address").toBeTruthy();
    const svc = await t.api.post("/api/v1/namespaces/default/services", {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "converter" },
      spec: { ports: [{ name: "https", port: 443, targetPort: port }] },
    });
    expect(svc.status, svc.text).toBe(201);
    const ep = await t.api.post("/api/v1/namespaces/default/endpoints", {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "converter" },
      subsets: [{ addresses: [{ ip: address }], ports: [{ name: "https", port }] }],
    });
    expect(ep.status, ep.text).toBe(201);
    const { group, v1, v2 } = await defineGadgets({ service: { namespace: "default", name: "converter", path: "/convert" }, caBundle });
    await t.api.post(v1, gadget(group, "v1", "via-service", "svc.example.com"));
    const read = await t.api.get(`${v2}/via-service`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.spec.hostname).toBe("svc.example.com");
  });
});

describe("a webhook that fails: Kubernetes' 500 `conversion webhook for <gvk> failed`", () => {
  /** A v1 object read in v2 through `path`: the Status of the failure. */
  async function failure(path: string | Record<string, unknown>) {
    const config = typeof path === "string" ? urlConfig(path) : path;
    const { group, v1, v2 } = await defineGadgets(config);
    const created = await t.api.post(v1, gadget(group, "v1", "f", "f.example.com"));
    expect(created.status, created.text).toBe(201);
    const read = await t.api.get(`${v2}/f`);
    expect(read.status, read.text).toBe(500);
    expect(read.body).toMatchObject({ kind: "Status", status: "Failure", code: 500 });
    expect(read.body.reason ?? "").toBe("");
    // The storage version is still served.
    expect((await t.api.get(`${v1}/f`)).status).toBe(200);
    return { message: read.body.message as string, group, v1, v2, uid: created.body.metadata.uid as string };
  }

  it("down: the connection error", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const dead = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const { message, group } = await failure({ url: `https://127.0.0.1:${dead}/convert`, caBundle });
    expect(message).toBe(
      `conversion webhook for ${group}/v1, Kind=Gadget failed: Post "https://127.0.0.1:${dead}/convert?timeout=30s": dial tcp 127.0.0.1:${dead}: connect: connection refused`,
    );
  });

  it("a certificate the caBundle does not verify", async () => {
    const other = await createCA({ commonName: "someone-else" });
    const { message, group } = await failure({
      url: `https://127.0.0.1:${port}/convert`,
      caBundle: Buffer.from(other.certPem).toString("base64"),
    });
    expect(message).toBe(
      `conversion webhook for ${group}/v1, Kind=Gadget failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
    );
  });

  it("garbage, an empty body, a 500", async () => {
    const garbage = await failure("/garbage");
    expect(garbage.message).toBe(
      `conversion webhook for ${garbage.group}/v1, Kind=Gadget failed: couldn't get version/kind; json parse error: invalid character 'h' in literal true (expecting 'r')`,
    );
    const empty = await failure("/empty");
    expect(empty.message).toBe(
      `conversion webhook for ${empty.group}/v1, Kind=Gadget failed: 0-length response with status code: 200 and content type: application/json`,
    );
    const error = await failure("/error-500");
    expect(error.message).toBe(
      `conversion webhook for ${error.group}/v1, Kind=Gadget failed: an error on the server ("unknown") has prevented the request from succeeding`,
    );
    const text = await failure("/error-500-text");
    expect(text.message).toBe(
      `conversion webhook for ${text.group}/v1, Kind=Gadget failed: an error on the server ("boom") has prevented the request from succeeding`,
    );
  });

  it("an answer to another review (uid), or changing an object's uid", async () => {
    const review = await failure("/wrong-uid");
    expect(review.message).toMatch(
      new RegExp(
        `^conversion webhook for ${review.group.replaceAll(".", "\\.")}/v1, Kind=Gadget failed: expected response\\.uid="[0-9a-f-]{36}", got "not-the-uid"$`,
      ),
    );
    const object = await failure("/object-uid");
    expect(object.message).toBe(
      `conversion webhook for ${object.group}/v1, Kind=Gadget returned invalid object: must have the same UID: ${object.uid} != 00000000-0000-0000-0000-000000000000`,
    );
  });

  it("a refusal (result Failure) is its message; too few objects is counted", async () => {
    const refused = await failure("/refuse");
    expect(refused.message).toBe(`conversion webhook for ${refused.group}/v1, Kind=Gadget failed: cannot convert this one`);
    const few = await failure("/too-few");
    expect(few.message).toBe(`conversion webhook for ${few.group}/v1, Kind=Gadget returned 0 objects, expected 1`);
  });

  it("a Service without endpoints: a clear message naming the address Kubernetes would dial", async () => {
    const { message, group } = await failure({ service: { namespace: "default", name: "nowhere", path: "/convert" }, caBundle });
    expect(message).toBe(
      `conversion webhook for ${group}/v1, Kind=Gadget failed: Post "https://nowhere.default.svc:443/convert?timeout=30s": orch does not route Services to webhooks without endpoints: service default/nowhere not found`,
    );
  });

  it("a list and a write in v2 fail the same way", async () => {
    const { group, v2, message } = await failure("/garbage");
    const list = await t.api.get(v2);
    expect(list.status).toBe(500);
    expect(list.body.message).toBe(message);
    const created = await t.api.post(v2, gadget(group, "v2", "g2", "g2.example.com"));
    expect(created.status).toBe(500);
    expect(created.body.message).toBe(message.replace(`${group}/v1`, `${group}/v2`));
  });

  it("a watch in v2 gets an ERROR event and ends", async () => {
    const { group, v1, v2, message } = await failure("/garbage");
    const watch = await t.api.watch(`${v2}?watch=true&resourceVersion=${(await t.api.get(v1)).body.metadata.resourceVersion}`);
    await t.api.post(v1, gadget(group, "v1", "w", "w.example.com"));
    const event = await watch.next();
    expect(event.type).toBe("ERROR");
    expect(event.object).toMatchObject({ kind: "Status", code: 500, message });
    await watch.ended;
  });
});

describe("no ConversionReview version orch speaks", () => {
  it("fails the conversion (a definition stored before, or ratcheted by an update)", async () => {
    const converter = webhookConverter(
      {
        spec: { conversion: { strategy: "Webhook", webhook: { conversionReviewVersions: ["v9"], clientConfig: urlConfig("/convert") } } },
      } as any,
      { cluster: { list: async () => [], get: async () => undefined } },
    );
    const obj = { apiVersion: "g.example.com/v1", kind: "Gadget", metadata: { name: "x" } };
    await expect(converter.convert([obj], "g.example.com/v2")).rejects.toMatchObject({
      status: { code: 500, message: "no supported conversion review versions" },
    });
    // Nothing to convert: no call at all.
    await expect(converter.convert([obj], "g.example.com/v1")).resolves.toEqual([obj]);
  });
});

describe("spec.conversion is validated as apiextensions-apiserver validates it (422, causes[].field)", () => {
  let n = 0;
  /** A one-version CRD with `conversion`; `more` edits the spec. */
  const definition = (conversion: unknown, more: (spec: any) => void = () => {}) => {
    const group = `v${++n}.validation.example.com`;
    const spec: any = {
      group,
      scope: "Namespaced",
      names: { plural: "gadgets", kind: "Gadget" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: versionSchema("host") } }],
      conversion,
    };
    more(spec);
    return { apiVersion: "apiextensions.orch.io/v1", kind: "CustomResourceDefinition", metadata: { name: `gadgets.${group}` }, spec };
  };
  async function causes(body: unknown): Promise<[string, string][]> {
    const r = await t.api.post(CRDS, body);
    expect(r.status, r.text).toBe(422);
    expect(r.body).toMatchObject({ kind: "Status", reason: "Invalid", code: 422 });
    return r.body.details.causes.map((c: any) => [c.field, c.message]);
  }
  const webhook = (clientConfig: unknown, conversionReviewVersions: unknown = ["v1"]) => ({
    strategy: "Webhook",
    webhook: { clientConfig, conversionReviewVersions },
  });
  const at = "spec.conversion";

  it("strategy: None or Webhook", async () => {
    expect(await causes(definition({ strategy: "Magic" }))).toEqual([
      [`${at}.strategy`, 'Unsupported value: "Magic": supported values: "None", "Webhook"'],
    ]);
  });

  it("Webhook needs the webhook; None forbids it", async () => {
    expect(await causes(definition({ strategy: "Webhook" }))).toEqual([
      [`${at}.webhookClientConfig`, "Required value: required when strategy is set to Webhook"],
      [`${at}.conversionReviewVersions`, "Required value"],
    ]);
    expect(
      await causes(definition({ strategy: "None", webhook: { clientConfig: urlConfig("/convert"), conversionReviewVersions: ["v1"] } })),
    ).toEqual([
      [`${at}.webhookClientConfig`, "Forbidden: should not be set when strategy is not set to Webhook"],
      [`${at}.conversionReviewVersions`, "Forbidden: should not be set when strategy is not set to Webhook"],
    ]);
  });

  it("Webhook needs preserveUnknownFields false", async () => {
    const found = await causes(definition(webhook(urlConfig("/convert")), (spec) => (spec.preserveUnknownFields = true)));
    expect(found).toContainEqual([`${at}.strategy`, 'Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true']);
  });

  it("exactly one of url and service", async () => {
    const both = { ...urlConfig("/convert"), service: { namespace: "default", name: "converter" } };
    expect(await causes(definition(webhook(both)))).toEqual([
      [`${at}.webhookClientConfig`, "Required value: exactly one of url or service is required"],
    ]);
    expect(await causes(definition(webhook({ caBundle })))).toEqual([
      [`${at}.webhookClientConfig`, "Required value: exactly one of url or service is required"],
    ]);
  });

  it("url: https only, a host, no user information, fragment or query", async () => {
    expect(await causes(definition(webhook({ url: "http://127.0.0.1/convert" })))).toEqual([
      [
        `${at}.webhookClientConfig.url`,
        `Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      ],
    ]);
    expect(await causes(definition(webhook({ url: "https://user:secret@127.0.0.1/convert?x=1#here" })))).toEqual([
      [`${at}.webhookClientConfig.url`, 'Invalid value: "user:secret": user information is not permitted in the URL'],
      [`${at}.webhookClientConfig.url`, 'Invalid value: "here": fragments are not permitted in the URL'],
      [`${at}.webhookClientConfig.url`, 'Invalid value: "x=1": query parameters are not permitted in the URL'],
    ]);
  });

  it("service: name and namespace, a port in 1–65535, a path of DNS segments", async () => {
    expect(await causes(definition(webhook({ service: { namespace: "", name: "", port: 0 } })))).toEqual([
      [`${at}.webhookClientConfig.service.name`, "Required value: service name is required"],
      [`${at}.webhookClientConfig.service.namespace`, "Required value: service namespace is required"],
      [`${at}.webhookClientConfig.service.port`, "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"],
    ]);
    expect(await causes(definition(webhook({ service: { namespace: "d", name: "c", port: 65536, path: "convert//UP" } })))).toEqual([
      [`${at}.webhookClientConfig.service.port`, "Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive"],
      [`${at}.webhookClientConfig.service.path`, "Invalid value: \"convert//UP\": must start with a '/'"],
      // As Go: the first character is dropped whatever it is, then each segment is checked.
      [`${at}.webhookClientConfig.service.path`, 'Invalid value: "convert//UP": segment[1] may not be empty'],
      [
        `${at}.webhookClientConfig.service.path`,
        "Invalid value: \"convert//UP\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
    ]);
  });

  it("service port defaults to 443", async () => {
    const r = await t.api.post(CRDS, definition(webhook({ service: { namespace: "default", name: "converter", path: "/convert" } })));
    expect(r.status, r.text).toBe(201);
    expect(r.body.spec.conversion.webhook.clientConfig.service).toEqual({
      namespace: "default",
      name: "converter",
      path: "/convert",
      port: 443,
    });
  });

  it("conversionReviewVersions: required, no duplicates, DNS labels, one orch speaks", async () => {
    expect(await causes(definition(webhook(urlConfig("/convert"), [])))).toEqual([[`${at}.conversionReviewVersions`, "Required value"]]);
    expect(await causes(definition(webhook(urlConfig("/convert"), ["v2", "v2", "V_3"])))).toEqual([
      [`${at}.conversionReviewVersions[1]`, 'Invalid value: "v2": duplicate version'],
      [
        `${at}.conversionReviewVersions[2]`,
        "Invalid value: \"V_3\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      ],
      [`${at}.conversionReviewVersions`, 'Invalid value: ["v2","v2","V_3"]: must include at least one of v1, v1beta1'],
    ]);
  });

  it("caBundle: not checked on create; checked on update once established", async () => {
    const bad = Buffer.from("not a certificate").toString("base64");
    const { crd } = await defineGadgets({ url: `https://127.0.0.1:${port}/convert`, caBundle: bad });
    const current = (await t.api.get(crd)).body;
    current.spec.conversion.webhook.clientConfig.caBundle = caBundle;
    const fixed = await t.api.put(crd, current);
    expect(fixed.status, fixed.text).toBe(200);
    fixed.body.spec.conversion.webhook.clientConfig.caBundle = bad;
    const broken = await t.api.put(crd, fixed.body);
    expect(broken.status, broken.text).toBe(422);
    expect(broken.body.details.causes.map((c: any) => [c.field, c.message])).toEqual([
      [
        `${at}.webhookClientConfig.caBundle`,
        `Invalid value: "${bad}": unable to load root certificates: unable to parse bytes as PEM block`,
      ],
    ]);
  });
});

describe("metrics, with Kubernetes' names", () => {
  it("each conversion through a webhook is counted and timed, per CRD and by outcome", async () => {
    const { group, v1, v2 } = await defineGadgets(urlConfig("/convert"));
    await t.api.post(v1, gadget(group, "v1", "m", "m.example.com"));
    expect((await t.api.get(`${v2}/m`)).status).toBe(200);
    const text = (await t.api.get("/metrics")).text;
    expect(text).toContain(
      `apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="gadgets.${group}",from_version="v1",to_version="v2",succeeded="true"} 1`,
    );
    // The failures above: calls that failed, answers that were malformed, objects that were invalid.
    for (const failure of ["call_failure", "malformed_response_failure", "partial_response_failure", "invalid_converted_object_failure"]) {
      expect(text).toMatch(
        new RegExp(`apiserver_conversion_webhook_request_total\\{result="failure",failure_type="conversion_webhook_${failure}"\\} [1-9]`),
      );
    }
    expect(text).toMatch(/apiserver_conversion_webhook_request_total\{result="success",failure_type=""\} [1-9]/);
    expect(text).toMatch(/apiserver_conversion_webhook_duration_seconds_bucket\{le="0\.005",result="success",failure_type=""\} \d+/);
  });
});
