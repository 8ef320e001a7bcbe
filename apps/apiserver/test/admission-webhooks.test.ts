// Admission webhooks against the real apiserver, with real HTTPS webhook servers started here (their
// certificates from @orch/pki, their CA given as caBundle): mutation, denial, failurePolicy, timeouts,
// selectors, warnings, dry run, and the configurations' own validation.
import { createCA, issueCertificate } from "@orch/pki";
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import type { AuditEvent } from "@orch/audit";
import { eventually } from "@orch/testing";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshNamespace, sleep, useTestServer } from "./harness.js";

const t = useTestServer();
const GROUP = "admissionregistration.orch.io";
const VWC = `/apis/${GROUP}/v1/validatingwebhookconfigurations`;
const MWC = `/apis/${GROUP}/v1/mutatingwebhookconfigurations`;

type Review = { request: Record<string, any> };
type Answer = (review: Review) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** A webhook server: each path answers with its handler's response; every review is kept. */
class WebhookServer {
  readonly handlers = new Map<string, Answer>();
  readonly received: { path: string; review: Review }[] = [];
  server!: Server;
  caBundle = "";
  port = 0;

  async start(): Promise<void> {
    const ca = await createCA({ commonName: "webhook-ca" });
    const serving = await issueCertificate({
      ca,
      subject: { commonName: "webhook" },
      ipAddresses: ["127.0.0.1"],
      // Reached through a Service, the certificate must name it, as Kubernetes requires.
      dnsNames: ["admission-webhook.default.svc"],
      usages: ["digital signature", "key encipherment", "server auth"],
      validitySeconds: 3600,
    });
    this.caBundle = Buffer.from(ca.certPem).toString("base64");
    this.server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        const path = new URL(req.url ?? "/", "https://x").pathname;
        const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Review;
        this.received.push({ path, review });
        const handler = this.handlers.get(path);
        if (!handler) {
          res.writeHead(404).end();
          return;
        }
        const response = await handler(review);
        if (typeof response.raw === "string") {
          // An answer that is not an AdmissionReview: its status, content type and body as given.
          res.writeHead(Number(response.status ?? 200), { "Content-Type": String(response.contentType ?? "text/plain") });
          res.end(response.raw);
          return;
        }
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: { uid: review.request.uid, ...response },
          }),
        );
      });
    });
    // Every address: an Endpoints address may not be loopback, so the Service test uses this host's own.
    await new Promise<void>((r) => this.server.listen(0, "0.0.0.0", r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }
  reviews(path: string): Review[] {
    return this.received.filter((r) => r.path === path).map((r) => r.review);
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const hooks = new WebhookServer();

/** This host's first non-loopback IPv4 address (Endpoints refuse loopback ones, as Kubernetes). */
function hostAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((a) => a?.family === "IPv4" && !a.internal)?.address;
  if (!address) throw new Error("this host has no non-loopback IPv4 address for the Service test");
  return address;
}
beforeAll(() => hooks.start());
afterAll(() => hooks.stop());

const patchOf = (ops: unknown[]) => ({ patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(ops)).toString("base64") });

/** A webhook on ConfigMaps of one namespace only, so that tests do not see each other's writes. */
function webhook(name: string, url: string, namespace: string, more: Record<string, unknown> = {}) {
  return {
    name,
    clientConfig: { url, caBundle: hooks.caBundle },
    rules: [{ operations: ["CREATE", "UPDATE", "DELETE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    ...more,
  };
}

async function configure(path: string, kind: string, name: string, webhooks: unknown[]): Promise<() => Promise<void>> {
  const r = await t.api.post(path, { apiVersion: `${GROUP}/v1`, kind, metadata: { name }, webhooks });
  expect(r.status, r.text).toBe(201);
  return async () => {
    expect((await t.api.delete(`${path}/${name}`)).status).toBe(200);
  };
}

const configMap = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data: { a: "1" },
});

describe("webhook configurations: Kubernetes' validation and defaults", () => {
  it("defaults failurePolicy, matchPolicy, timeoutSeconds, scope, selectors and reinvocationPolicy", async () => {
    const r = await t.api.post(MWC, {
      apiVersion: `${GROUP}/v1`,
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "defaults" },
      webhooks: [
        {
          name: "a.example.com",
          clientConfig: { url: "https://127.0.0.1:1/x" },
          rules: [{ operations: ["CREATE"], apiGroups: ["nothing.example.com"], apiVersions: ["v1"], resources: ["none"] }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.webhooks[0]).toMatchObject({
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      timeoutSeconds: 10,
      reinvocationPolicy: "Never",
      namespaceSelector: {},
      objectSelector: {},
      rules: [{ scope: "*" }],
    });
    await t.api.delete(`${MWC}/defaults`);
  });

  it("refuses what Kubernetes refuses, naming each field", async () => {
    const r = await t.api.post(VWC, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "bad" },
      webhooks: [
        {
          name: "short",
          clientConfig: { url: "http://127.0.0.1/x?q=1" },
          rules: [{ operations: ["CREATE", "*"], apiGroups: [], apiVersions: ["v1"], resources: ["pods"], scope: "Everywhere" }],
          failurePolicy: "Maybe",
          timeoutSeconds: 31,
          admissionReviewVersions: ["v2"],
        },
        {
          name: "b.example.com",
          clientConfig: { url: "https://x.example.com", service: { namespace: "default", name: "s" } },
          sideEffects: "Some",
          admissionReviewVersions: ["v1"],
        },
      ],
    });
    expect(r.status, r.text).toBe(422);
    const causes = r.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
    expect(causes).toEqual([
      'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
      `webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations`,
      "webhooks[0].rules[0].apiGroups: Required value",
      'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
      "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
      `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
      'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1',
      'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
    ]);
  });
});

describe("calling webhooks on writes", () => {
  it("a mutating webhook's JSON patch is applied before validation, and a validating webhook sees it", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/mutate-${ns}`, (review) => ({
      allowed: true,
      ...patchOf(
        review.request.object.metadata.labels
          ? [{ op: "add", path: "/metadata/labels/mutated", value: "yes" }]
          : [{ op: "add", path: "/metadata/labels", value: { mutated: "yes" } }],
      ),
    }));
    hooks.handlers.set(`/validate-${ns}`, (review) => ({ allowed: review.request.object.metadata.labels?.mutated === "yes" }));
    const removeM = await configure(MWC, "MutatingWebhookConfiguration", `m-${ns}`, [
      webhook("label.example.com", hooks.url(`/mutate-${ns}`), ns),
    ]);
    const removeV = await configure(VWC, "ValidatingWebhookConfiguration", `v-${ns}`, [
      webhook("check.example.com", hooks.url(`/validate-${ns}`), ns),
    ]);
    try {
      const created = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("one"), { headers: { "User-Agent": "tester/1" } });
      expect(created.status, created.text).toBe(201);
      expect(created.body.metadata.labels).toEqual({ mutated: "yes" });
      expect((await t.api.get(`/api/v1/namespaces/${ns}/configmaps/one`)).body.metadata.labels).toEqual({ mutated: "yes" });
      const request = hooks.reviews(`/mutate-${ns}`)[0]!.request;
      expect(request).toMatchObject({
        kind: { group: "", version: "v1", kind: "ConfigMap" },
        resource: { group: "", version: "v1", resource: "configmaps" },
        requestKind: { group: "", version: "v1", kind: "ConfigMap" },
        name: "one",
        namespace: ns,
        operation: "CREATE",
        dryRun: false,
        oldObject: null,
        options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" },
      });
      expect(request.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(request.userInfo.groups).toContain("system:masters");
      // An update goes through both again, with the stored object as oldObject.
      const updated = await t.api.patch(`/api/v1/namespaces/${ns}/configmaps/one`, { data: { a: "2" } });
      expect(updated.status, updated.text).toBe(200);
      const update = hooks.reviews(`/validate-${ns}`).at(-1)!.request;
      expect(update).toMatchObject({ operation: "UPDATE", object: { data: { a: "2" } }, oldObject: { data: { a: "1" } } });
    } finally {
      await removeM();
      await removeV();
    }
  });

  it("reinvocationPolicy IfNeeded calls an earlier webhook once more after a later one changed the object", async () => {
    const ns = await freshNamespace(t.api, "adm");
    const label = (key: string) => (review: Review) => ({
      allowed: true,
      ...patchOf([{ op: "add", path: `/metadata/labels/${key}`, value: String(review.request.object.metadata.labels?.second ?? "none") }]),
    });
    hooks.handlers.set(`/first-${ns}`, label("first"));
    hooks.handlers.set(`/second-${ns}`, () => ({
      allowed: true,
      ...patchOf([{ op: "add", path: "/metadata/labels/second", value: "set" }]),
    }));
    const removeA = await configure(MWC, "MutatingWebhookConfiguration", `a-${ns}`, [
      webhook("first.example.com", hooks.url(`/first-${ns}`), ns, { reinvocationPolicy: "IfNeeded" }),
    ]);
    const removeB = await configure(MWC, "MutatingWebhookConfiguration", `b-${ns}`, [
      webhook("second.example.com", hooks.url(`/second-${ns}`), ns),
    ]);
    try {
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("again", { start: "1" }));
      expect(r.status, r.text).toBe(201);
      // The first webhook ran before `second` existed, then again after: its label says what it saw last.
      expect(r.body.metadata.labels).toEqual({ start: "1", first: "set", second: "set" });
      expect(hooks.reviews(`/first-${ns}`)).toHaveLength(2);
      expect(hooks.reviews(`/second-${ns}`)).toHaveLength(1);
    } finally {
      await removeA();
      await removeB();
    }
  });

  it("an answer that is not a valid AdmissionReview is a failed call: uid mismatch, or a patch from a validating webhook", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/bad-uid-${ns}`, () => ({ uid: "someone-else", allowed: true }));
    hooks.handlers.set(`/bad-patch-${ns}`, () => ({ allowed: true, ...patchOf([]), patch: "W10=" }));
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `bad-${ns}`, [
      webhook("uid.example.com", hooks.url(`/bad-uid-${ns}`), ns, { objectSelector: { matchLabels: { bad: "uid" } } }),
      webhook("patch.example.com", hooks.url(`/bad-patch-${ns}`), ns, { objectSelector: { matchLabels: { bad: "patch" } } }),
    ]);
    try {
      const uid = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("u", { bad: "uid" }));
      expect(uid.status).toBe(500);
      expect(uid.body.message).toMatch(
        /^Internal error occurred: failed calling webhook "uid\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "someone-else"$/,
      );
      const patch = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("p", { bad: "patch" }));
      expect(patch.status).toBe(500);
      expect(patch.body.message).toBe(
        'Internal error occurred: failed calling webhook "patch.example.com": received invalid webhook response: validating webhook may not return response.patch',
      );
    } finally {
      await remove();
    }
  });

  it("a denial is the webhook's status code and message, as Kubernetes words it; nothing is stored", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/deny-${ns}`, (review) =>
      review.request.name === "forbidden"
        ? { allowed: false, status: { code: 403, reason: "Forbidden", message: "the name forbidden is not allowed" } }
        : review.request.operation === "DELETE"
          ? { allowed: false, status: { message: "keep it" } }
          : { allowed: true },
    );
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `deny-${ns}`, [
      webhook("names.example.com", hooks.url(`/deny-${ns}`), ns),
    ]);
    try {
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("forbidden"));
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({
        kind: "Status",
        status: "Failure",
        reason: "Forbidden",
        code: 403,
        message: 'admission webhook "names.example.com" denied the request: the name forbidden is not allowed',
      });
      expect((await t.api.get(`/api/v1/namespaces/${ns}/configmaps/forbidden`)).status).toBe(404);
      expect((await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("fine"))).status).toBe(201);
      // Without a code the denial is a 400; deletes are admitted too.
      const del = await t.api.delete(`/api/v1/namespaces/${ns}/configmaps/fine`);
      expect(del.status).toBe(400);
      expect(del.body.message).toBe('admission webhook "names.example.com" denied the request: keep it');
      expect((await t.api.get(`/api/v1/namespaces/${ns}/configmaps/fine`)).status).toBe(200);
    } finally {
      await remove();
    }
  });

  it("a webhook that is down: failurePolicy Fail refuses with 500, Ignore lets the write through", async () => {
    const ns = await freshNamespace(t.api, "adm");
    const down = "https://127.0.0.1:1/down";
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `down-${ns}`, [
      webhook("fail.example.com", down, ns, { objectSelector: { matchLabels: { policy: "fail" } } }),
      webhook("ignore.example.com", down, ns, { failurePolicy: "Ignore", objectSelector: { matchLabels: { policy: "ignore" } } }),
    ]);
    try {
      const failed = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("a", { policy: "fail" }));
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ reason: "InternalError", code: 500 });
      expect(failed.body.message).toBe(
        'Internal error occurred: failed calling webhook "fail.example.com": failed to call webhook: Post "https://127.0.0.1:1/down?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused',
      );
      const ignored = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("b", { policy: "ignore" }));
      expect(ignored.status, ignored.text).toBe(201);
    } finally {
      await remove();
    }
  });

  it("a webhook slower than its timeoutSeconds fails with context deadline exceeded", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/slow-${ns}`, async () => {
      await sleep(1500);
      return { allowed: true };
    });
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `slow-${ns}`, [
      webhook("slow.example.com", hooks.url(`/slow-${ns}`), ns, { timeoutSeconds: 1 }),
    ]);
    try {
      const started = Date.now();
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("late"));
      expect(r.status).toBe(500);
      expect(r.body.message).toBe(
        `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "${hooks.url(`/slow-${ns}`)}?timeout=1s": context deadline exceeded`,
      );
      expect(Date.now() - started).toBeLessThan(1400);
    } finally {
      await remove();
    }
  });

  it("namespaceSelector and objectSelector choose which writes a webhook hears of", async () => {
    const ns = await freshNamespace(t.api, "adm");
    const other = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/select-${ns}`, () => ({ allowed: false, status: { message: "selected" } }));
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `select-${ns}`, [
      webhook("select.example.com", hooks.url(`/select-${ns}`), ns, {
        objectSelector: { matchExpressions: [{ key: "guarded", operator: "Exists" }] },
      }),
    ]);
    try {
      expect((await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("plain"))).status).toBe(201);
      expect((await t.api.post(`/api/v1/namespaces/${other}/configmaps`, configMap("guarded", { guarded: "1" }))).status).toBe(201);
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("guarded", { guarded: "1" }));
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('admission webhook "select.example.com" denied the request: selected');
      // Only the labelled object in the selected namespace was sent to the webhook.
      expect(hooks.reviews(`/select-${ns}`)).toHaveLength(1);
    } finally {
      await remove();
    }
  });

  it("matchConditions (CEL): a false condition skips the webhook, an error fails closed under Fail", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/cond-${ns}`, () => ({ allowed: false, status: { message: "called" } }));
    const invalid = await t.api.post(VWC, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: `bad-cond-${ns}` },
      webhooks: [
        webhook("cond.example.com", hooks.url(`/cond-${ns}`), ns, { matchConditions: [{ name: "bad", expression: "object.metadata +" }] }),
      ],
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.details.causes[0].field).toBe("webhooks[0].matchConditions[0].expression");
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `cond-${ns}`, [
      webhook("cond.example.com", hooks.url(`/cond-${ns}`), ns, {
        matchConditions: [
          { name: "not-skipped", expression: 'object.metadata.name != "skip-me"' },
          { name: "not-robots", expression: '!request.userInfo.username.startsWith("robot")' },
          // The request's user may create what it creates (the authorizer library).
          { name: "may-create", expression: "authorizer.requestResource.check('create').allowed()" },
          { name: "tiers", expression: 'object.metadata.name != "broken" || object.data.tier == "x"' },
        ],
      }),
    ]);
    try {
      expect((await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("skip-me"))).status).toBe(201);
      const called = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("other"));
      expect(called.status, called.text).toBe(400);
      expect(called.body.message).toBe('admission webhook "cond.example.com" denied the request: called');
      // An evaluation error refuses the write as ShouldCallHook does: NewForbidden with the CEL error.
      const broken = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("broken"));
      expect(broken.status).toBe(403);
      expect(broken.body).toMatchObject({
        reason: "Forbidden",
        details: { name: "broken", kind: "configmaps" },
        message:
          'configmaps "broken" is forbidden: expression \'object.metadata.name != "broken" || object.data.tier == "x"\' resulted in error: no such key: tier',
      });
    } finally {
      await remove();
    }
  });

  it("matchPolicy Equivalent sends a write in another version as the version a rule names; Exact does not", async () => {
    const ns = await freshNamespace(t.api, "adm");
    const group = `widgets-${process.pid}.example.com`;
    const crds = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
    const schema = {
      openAPIV3Schema: { type: "object", properties: { spec: { type: "object", "x-orch-preserve-unknown-fields": true } } },
    };
    const created = await t.api.post(crds, {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget" },
        versions: [
          { name: "v1", served: true, storage: true, schema },
          { name: "v2", served: true, storage: false, schema },
        ],
      },
    });
    expect(created.status, created.text).toBe(201);
    // What the crd-controller would do: names accepted, established.
    const crd = created.body;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    crd.status = {
      acceptedNames: crd.spec.names,
      conditions: [
        { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "", lastTransitionTime: now },
        { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "", lastTransitionTime: now },
      ],
    };
    expect((await t.api.put(`${crds}/widgets.${group}/status`, crd)).status).toBe(200);
    const v2 = `/apis/${group}/v2/namespaces/${ns}/widgets`;
    for (let i = 0; i < 150 && (await t.api.get(v2)).status !== 200; i++) await sleep(20);
    hooks.handlers.set(`/equivalent-${ns}`, () => ({ allowed: true, ...patchOf([{ op: "add", path: "/spec/seen", value: "v1" }]) }));
    hooks.handlers.set(`/exact-${ns}`, () => ({ allowed: false, status: { message: "exact" } }));
    const v1Rule = { rules: [{ operations: ["CREATE"], apiGroups: [group], apiVersions: ["v1"], resources: ["widgets"] }] };
    const remove = await configure(MWC, "MutatingWebhookConfiguration", `eq-${ns}`, [
      webhook("equivalent.example.com", hooks.url(`/equivalent-${ns}`), ns, v1Rule),
      webhook("exact.example.com", hooks.url(`/exact-${ns}`), ns, { ...v1Rule, matchPolicy: "Exact" }),
    ]);
    try {
      const r = await t.api.post(v2, { apiVersion: `${group}/v2`, kind: "Widget", metadata: { name: "w" }, spec: {} });
      expect(r.status, r.text).toBe(201);
      // The patch made to the v1 view lands in the v2 object written.
      expect(r.body).toMatchObject({ apiVersion: `${group}/v2`, spec: { seen: "v1" } });
      expect(hooks.reviews(`/equivalent-${ns}`)[0]!.request).toMatchObject({
        kind: { group, version: "v1", kind: "Widget" },
        resource: { group, version: "v1", resource: "widgets" },
        requestKind: { group, version: "v2", kind: "Widget" },
        requestResource: { group, version: "v2", resource: "widgets" },
        object: { apiVersion: `${group}/v1` },
      });
      expect(hooks.reviews(`/exact-${ns}`)).toHaveLength(0);
    } finally {
      await remove();
      await t.api.delete(`${crds}/widgets.${group}`);
    }
  });

  it("warnings arrive as Warning headers, from mutating and validating webhooks", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/warn-m-${ns}`, () => ({ allowed: true, warnings: ["from the mutating webhook"] }));
    hooks.handlers.set(`/warn-v-${ns}`, () => ({ allowed: true, warnings: ["from the validating webhook"] }));
    const removeM = await configure(MWC, "MutatingWebhookConfiguration", `warn-${ns}`, [
      webhook("warn-m.example.com", hooks.url(`/warn-m-${ns}`), ns),
    ]);
    const removeV = await configure(VWC, "ValidatingWebhookConfiguration", `warn-${ns}`, [
      webhook("warn-v.example.com", hooks.url(`/warn-v-${ns}`), ns),
    ]);
    try {
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("warned"));
      expect(r.status).toBe(201);
      expect(r.warnings).toEqual(["from the mutating webhook", "from the validating webhook"]);
    } finally {
      await removeM();
      await removeV();
    }
  });

  it("a dry run calls webhooks without side effects with dryRun true, applies their patch, and stores nothing", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/dry-${ns}`, () => ({ allowed: true, ...patchOf([{ op: "add", path: "/data/added", value: "x" }]) }));
    const remove = await configure(MWC, "MutatingWebhookConfiguration", `dry-${ns}`, [
      webhook("dry.example.com", hooks.url(`/dry-${ns}`), ns, { sideEffects: "NoneOnDryRun" }),
    ]);
    try {
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, configMap("dry"));
      expect(r.status, r.text).toBe(201);
      expect(r.body.data).toEqual({ a: "1", added: "x" });
      expect(hooks.reviews(`/dry-${ns}`)[0]!.request).toMatchObject({ dryRun: true, options: { dryRun: ["All"] } });
      expect((await t.api.get(`/api/v1/namespaces/${ns}/configmaps/dry`)).status).toBe(404);
    } finally {
      await remove();
    }
  });

  it("status writes are admitted as the status subresource when a rule names it", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/status-${ns}`, (review) => ({ allowed: false, status: { message: `no ${review.request.subResource}` } }));
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `status-${ns}`, [
      webhook("status.example.com", hooks.url(`/status-${ns}`), ns, {
        rules: [{ operations: ["UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments/status"] }],
      }),
    ]);
    try {
      const d = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
        },
      };
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, d)).status).toBe(201);
      expect((await t.api.patch(`/apis/apps/v1/namespaces/${ns}/deployments/web`, { spec: { replicas: 2 } })).status).toBe(200);
      const r = await t.api.patch(`/apis/apps/v1/namespaces/${ns}/deployments/web/status`, { status: { replicas: 2 } });
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('admission webhook "status.example.com" denied the request: no status');
    } finally {
      await remove();
    }
  });

  it("never intercepts the configurations themselves: a deny-everything webhook can still be removed", async () => {
    hooks.handlers.set("/deny-all", () => ({ allowed: false, status: { message: "no" } }));
    const everything = {
      name: "all.example.com",
      clientConfig: { url: hooks.url("/deny-all"), caBundle: hooks.caBundle },
      rules: [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }],
      objectSelector: { matchLabels: { "deny-all": "yes" } },
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    };
    const r = await t.api.post(VWC, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "deny-all", labels: { "deny-all": "yes" } },
      webhooks: [everything],
    });
    expect(r.status).toBe(201);
    const ns = await freshNamespace(t.api, "adm");
    expect((await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("x", { "deny-all": "yes" }))).status).toBe(400);
    // A changed configuration applies from the next request: this one no longer selects the object.
    const changed = { ...everything, objectSelector: { matchLabels: { "deny-all": "no" } } };
    expect((await t.api.patch(`${VWC}/deny-all`, { webhooks: [changed] })).status).toBe(200);
    expect((await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("y", { "deny-all": "yes" }))).status).toBe(201);
    expect((await t.api.delete(`${VWC}/deny-all`)).status).toBe(200);
    expect(hooks.reviews("/deny-all").every((review) => review.request.resource.resource === "configmaps")).toBe(true);
  });

  it("a service clientConfig is called at the Service's endpoint, and fails clearly when there is none", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/svc-${ns}`, () => ({ allowed: false, status: { message: "reached through the Service" } }));
    const service = { namespace: "default", name: "admission-webhook", path: `/svc-${ns}` };
    const remove = await configure(VWC, "ValidatingWebhookConfiguration", `svc-${ns}`, [
      { ...webhook("svc.example.com", "", ns), clientConfig: { service, caBundle: hooks.caBundle } },
    ]);
    try {
      const missing = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("x"));
      expect(missing.status).toBe(500);
      expect(missing.body.message).toBe(
        'Internal error occurred: failed calling webhook "svc.example.com": could not get REST client: orch does not route Services to webhooks without endpoints: service default/admission-webhook not found',
      );
      const svc = await t.api.post("/api/v1/namespaces/default/services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "admission-webhook" },
        spec: { ports: [{ name: "https", port: 443, targetPort: hooks.port }] },
      });
      expect(svc.status, svc.text).toBe(201);
      const noEndpoints = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("x"));
      expect(noEndpoints.body.message).toContain("service default/admission-webhook has no ready endpoint for port 443");
      const endpoints = await t.api.post("/api/v1/namespaces/default/endpoints", {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: "admission-webhook" },
        subsets: [{ addresses: [{ ip: hostAddress() }], ports: [{ name: "https", port: hooks.port }] }],
      });
      expect(endpoints.status, endpoints.text).toBe(201);
      const routed = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("x"));
      expect(routed.status, routed.text).toBe(400);
      expect(routed.body.message).toBe('admission webhook "svc.example.com" denied the request: reached through the Service');
    } finally {
      await remove();
      await t.api.delete("/api/v1/namespaces/default/services/admission-webhook");
    }
  });
});

describe("Kubernetes' texts for answers that are not usable, and audit annotations", () => {
  let logPath = "";
  beforeAll(async () => {
    // Every request audited at Metadata level: admission annotations land in the events.
    const policyFile = join(t.dataDir, "audit-policy.yaml");
    logPath = join(t.dataDir, "audit.log");
    await writeFile(policyFile, JSON.stringify({ apiVersion: "audit.k8s.io/v1", kind: "Policy", rules: [{ level: "Metadata" }] }));
    t.config.audit = { policyFile, logPath, maxSizeMB: 0, maxBackups: 0 };
    await t.restart();
  });

  const annotationsOf = (auditID: string) =>
    eventually(`the audit event of ${auditID}`, () => {
      if (!existsSync(logPath)) return false;
      const events = readFileSync(logPath, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditEvent);
      const done = events.find((e) => e.auditID === auditID && e.stage === "ResponseComplete");
      return done && (done.annotations ?? {});
    });

  it("a non-2xx answer, an answer that is not JSON, a patchType without patch, an unknown patchType: client-go's words", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/error-${ns}`, () => ({ raw: "database is down\n", status: 500 }));
    hooks.handlers.set(`/teapot-${ns}`, () => ({ raw: "", status: 418 }));
    hooks.handlers.set(`/garbage-${ns}`, () => ({ raw: "garbage", contentType: "application/json" }));
    hooks.handlers.set(`/type-only-${ns}`, () => ({ allowed: true, patchType: "JSONPatch" }));
    hooks.handlers.set(`/merge-${ns}`, () => ({ allowed: true, patchType: "MergePatch", patch: Buffer.from("{}").toString("base64") }));
    const only = (value: string) => ({ objectSelector: { matchLabels: { case: value } } });
    const remove = await configure(MWC, "MutatingWebhookConfiguration", `answers-${ns}`, [
      webhook("error.example.com", hooks.url(`/error-${ns}`), ns, only("error")),
      webhook("teapot.example.com", hooks.url(`/teapot-${ns}`), ns, only("teapot")),
      webhook("garbage.example.com", hooks.url(`/garbage-${ns}`), ns, only("garbage")),
      webhook("type-only.example.com", hooks.url(`/type-only-${ns}`), ns, only("type-only")),
      webhook("merge.example.com", hooks.url(`/merge-${ns}`), ns, only("merge")),
    ]);
    const failed = `Internal error occurred: failed calling webhook`;
    const cases: [string, string][] = [
      [
        "error",
        `${failed} "error.example.com": failed to call webhook: an error on the server ("database is down") has prevented the request from succeeding`,
      ],
      [
        "teapot",
        `${failed} "teapot.example.com": failed to call webhook: the server responded with the status code 418 but did not return more information`,
      ],
      [
        "garbage",
        `${failed} "garbage.example.com": failed to call webhook: couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value`,
      ],
      [
        "type-only",
        `${failed} "type-only.example.com": received invalid webhook response: webhook returned response.patchType but not response.patch`,
      ],
      ["merge", `${failed} "merge.example.com": unsupported patch type "MergePatch"`],
    ];
    try {
      for (const [label, message] of cases) {
        const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap(label, { case: label }));
        expect(r.status, label).toBe(500);
        expect(r.body.message, label).toBe(message);
        // NewInternalError: the error once more as the only cause.
        expect(r.body.details.causes, label).toEqual([{ message: message.replace("Internal error occurred: ", "") }]);
      }
    } finally {
      await remove();
    }
  });

  it("records a webhook's auditAnnotations under its name, which webhooks mutated, and which failed open", async () => {
    const ns = await freshNamespace(t.api, "adm");
    hooks.handlers.set(`/annotate-m-${ns}`, () => ({
      allowed: true,
      auditAnnotations: { checked: "by-mutating" },
      ...patchOf([{ op: "add", path: "/data/added", value: "x" }]),
    }));
    hooks.handlers.set(`/annotate-v-${ns}`, () => ({ allowed: true, auditAnnotations: { verdict: "fine" } }));
    const removeM = await configure(MWC, "MutatingWebhookConfiguration", `annotate-${ns}`, [
      webhook("annotate-m.example.com", hooks.url(`/annotate-m-${ns}`), ns),
    ]);
    const removeV = await configure(VWC, "ValidatingWebhookConfiguration", `annotate-${ns}`, [
      webhook("annotate-v.example.com", hooks.url(`/annotate-v-${ns}`), ns),
      webhook("down.example.com", "https://127.0.0.1:1/down", ns, { failurePolicy: "Ignore" }),
    ]);
    try {
      const r = await t.api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap("annotated"));
      expect(r.status, r.text).toBe(201);
      const annotations = await annotationsOf(String(r.headers["audit-id"]));
      expect(annotations).toMatchObject({
        "annotate-m.example.com/checked": "by-mutating",
        "annotate-v.example.com/verdict": "fine",
        "mutation.webhook.admission.k8s.io/round_0_index_0": JSON.stringify({
          configuration: `annotate-${ns}`,
          webhook: "annotate-m.example.com",
          mutated: true,
        }),
      });
      // The validating webhooks of this request, in order: the one that was down failed open.
      expect(Object.entries(annotations).filter(([k]) => k.startsWith("failed-open."))).toEqual([
        ["failed-open.validating.webhook.admission.k8s.io/round_0_index_1", "down.example.com"],
      ]);
    } finally {
      await removeM();
      await removeV();
    }
  });
});
