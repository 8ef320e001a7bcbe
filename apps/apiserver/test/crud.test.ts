// Create, get and replace through real HTTPS, with Kubernetes' exact codes and messages.
import { eventually } from "@orch/testing";
import { describe, expect, it, vi } from "vitest";
import { RFC3339, deployment, freshNamespace, secret, useTestServer, paths } from "./harness.js";

// Name suffixes come from crypto.randomInt; one test pins it to force collisions.
const pinned = vi.hoisted(() => ({ on: false }));
vi.mock("node:crypto", async (original) => {
  const actual = await original<typeof import("node:crypto")>();
  return {
    ...actual,
    randomInt: (...args: Parameters<typeof actual.randomInt>) =>
      pinned.on ? 0 : (actual.randomInt as (...a: unknown[]) => number)(...args),
  };
});

const t = useTestServer();

const deploys = paths.deployments;
const secrets = paths.secrets;

describe("create", () => {
  it("fills uid, creationTimestamp (RFC 3339), generation 1 and resourceVersion; answers 201", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(deploys(ns), deployment("web"));
    expect(r.status).toBe(201);
    const m = r.body.metadata;
    expect(m.name).toBe("web");
    expect(m.namespace).toBe(ns);
    expect(m.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(m.creationTimestamp).toMatch(RFC3339);
    expect(m.generation).toBe(1);
    expect(m.resourceVersion).toMatch(/^\d+$/);
    expect(r.body.apiVersion).toBe("apps/v1");
    expect(r.body.kind).toBe("Deployment");
    const got = await t.api.get(`${deploys(ns)}/web`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it("generateName gets a 5-character suffix from Kubernetes' alphabet", async () => {
    const ns = await freshNamespace(t.api);
    const body = secret("");
    body.metadata = { generateName: "gen-" } as never;
    const r = await t.api.post(secrets(ns), body);
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(r.body.metadata.generateName).toBe("gen-");
  });

  it("generated names that keep colliding → 409 after 8 attempts, with Retry-After", async () => {
    const ns = await freshNamespace(t.api);
    const body = { apiVersion: "v1", kind: "Secret", metadata: { generateName: "same-" } };
    pinned.on = true;
    try {
      const first = await t.api.post(secrets(ns), body);
      expect(first.body.metadata.name).toBe("same-bbbbb");
      const r = await t.api.post(secrets(ns), body);
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({
        reason: "AlreadyExists",
        message: 'secrets "same-bbbbb" already exists, the server was not able to generate a unique name for the object',
        details: { name: "same-bbbbb", kind: "secrets", retryAfterSeconds: 1 },
      });
      expect(r.headers["retry-after"]).toBe("1");
    } finally {
      pinned.on = false;
    }
  });

  it("ignores client-set uid and creationTimestamp", async () => {
    const ns = await freshNamespace(t.api);
    const body = secret("s") as any;
    body.metadata.uid = "client-uid";
    body.metadata.creationTimestamp = "2001-01-01T00:00:00Z";
    const r = await t.api.post(secrets(ns), body);
    expect(r.status).toBe(201);
    expect(r.body.metadata.uid).not.toBe("client-uid");
    expect(r.body.metadata.creationTimestamp).not.toBe("2001-01-01T00:00:00Z");
  });

  it("defaults a missing apiVersion/kind from the URL", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(secrets(ns), { metadata: { name: "bare" } });
    expect(r.status).toBe(201);
    expect(r.body.apiVersion).toBe("v1");
    expect(r.body.kind).toBe("Secret");
  });

  it("into a namespace that does not exist → 404 namespaces not found", async () => {
    const r = await t.api.post(secrets("nope"), secret("s"));
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "NotFound",
      message: 'namespaces "nope" not found',
      details: { name: "nope", kind: "namespaces" },
      code: 404,
    });
    expect(r.body.details.group).toBeUndefined();
  });

  it("body namespace different from the path → 400 and nothing stored", async () => {
    const ns = await freshNamespace(t.api);
    const body = secret("mismatch") as any;
    body.metadata.namespace = "other";
    const r = await t.api.post(secrets(ns), body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      reason: "BadRequest",
      message: "the namespace of the provided object does not match the namespace sent on the request",
      code: 400,
    });
    expect((await t.api.get(`${secrets(ns)}/mismatch`)).status).toBe(404);
  });

  it("a cluster-scoped object's body namespace is silently cleared", async () => {
    const r = await t.api.post("/apis/scheduling.orch.io/v1/priorityclasses", {
      apiVersion: "scheduling.orch.io/v1",
      kind: "PriorityClass",
      metadata: { name: "pc-ns-cleared", namespace: "default" },
      value: 10,
    });
    expect(r.status).toBe(201);
    expect(r.body.metadata.namespace).toBeUndefined();
  });

  it("no name and no generateName → 422 with cause metadata.name", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(secrets(ns), { apiVersion: "v1", kind: "Secret", metadata: {} });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Invalid",
      message: 'Secret "" is invalid: metadata.name: Required value: name or generateName is required',
      details: {
        kind: "Secret",
        causes: [
          {
            reason: "FieldValueRequired",
            message: "Required value: name or generateName is required",
            field: "metadata.name",
          },
        ],
      },
      code: 422,
    });
  });

  it("an invalid name → 422 with the DNS-1123 subdomain message", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(deploys(ns), deployment("Bad_Name"));
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    expect(r.body.message).toBe(
      `Deployment.apps "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
    expect(r.body.details).toMatchObject({ name: "Bad_Name", group: "apps", kind: "Deployment" });
    expect(r.body.details.causes[0]).toMatchObject({ reason: "FieldValueInvalid", field: "metadata.name" });
  });

  it("a namespace name must be a DNS-1123 label", async () => {
    const r = await t.api.post("/api/v1/namespaces", { metadata: { name: "a_b" } });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain("a lowercase RFC 1123 label must consist of");
    const dotted = await t.api.post("/api/v1/namespaces", { metadata: { name: "a.b" } });
    expect(dotted.status).toBe(422);
    expect(dotted.body.message).toBe('Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots');
  });

  it("resourceVersion set on create → 400 with Kubernetes' message (Kubernetes answers 500)", async () => {
    const ns = await freshNamespace(t.api);
    const body = secret("rv") as any;
    body.metadata.resourceVersion = "5";
    const r = await t.api.post(secrets(ns), body);
    expect(r.status).toBe(400);
    expect(r.body.kind).toBe("Status");
    expect(r.body.status).toBe("Failure");
    expect(r.body.message).toBe("resourceVersion should not be set on objects to be created");
    expect(r.body.reason).toBe("BadRequest");
    expect((await t.api.get(`${secrets(ns)}/rv`)).status).toBe(404);
  });

  it("an existing name → 409 AlreadyExists", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(deploys(ns), deployment("dup"))).status).toBe(201);
    const r = await t.api.post(deploys(ns), deployment("dup"));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      reason: "AlreadyExists",
      message: 'deployments.apps "dup" already exists',
      details: { name: "dup", group: "apps", kind: "deployments" },
      code: 409,
    });
  });
});

describe("get", () => {
  it("a missing object → 404 Status naming the resource", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.get(`${deploys(ns)}/missing`);
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toMatch(/^application\/json/);
    expect(r.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'deployments.apps "missing" not found',
      reason: "NotFound",
      details: { name: "missing", group: "apps", kind: "deployments" },
      code: 404,
    });
  });

  it("the default namespace exists after the first start", async () => {
    const r = await t.api.get("/api/v1/namespaces/default");
    expect(r.status).toBe(200);
    expect(r.body.status.phase).toBe("Active");
    expect(r.body.metadata.uid).toBeTruthy();
    expect(r.body.metadata.creationTimestamp).toMatch(RFC3339);
  });
});

describe("replace", () => {
  it("a stale resourceVersion → 409 Conflict with the exact message", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("d"))).body;
    const fresh = structuredClone(created);
    fresh.spec.replicas = 2;
    expect((await t.api.put(`${deploys(ns)}/d`, fresh)).status).toBe(200);
    const stale = structuredClone(created);
    stale.spec.replicas = 3;
    const r = await t.api.put(`${deploys(ns)}/d`, stale);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on deployments.apps "d": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: "d", group: "apps", kind: "deployments" },
      code: 409,
    });
    expect((await t.api.get(`${deploys(ns)}/d`)).body.spec.replicas).toBe(2);
  });

  it("an empty resourceVersion updates unconditionally; uid and creationTimestamp are kept", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("d"))).body;
    // A creationTimestamp set anew must be able to differ: wait until the clock is past its second.
    const createdAt = Date.parse(created.metadata.creationTimestamp);
    await eventually("the clock to pass the creation second", () => Date.now() >= createdAt + 1000);
    const body = deployment("d", { tier: "web" }, 4) as any;
    body.metadata.uid = undefined;
    body.metadata.creationTimestamp = "2001-01-01T00:00:00Z";
    const r = await t.api.put(`${deploys(ns)}/d`, body);
    expect(r.status).toBe(200);
    expect(r.body.metadata.uid).toBe(created.metadata.uid);
    expect(r.body.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    expect(r.body.metadata.labels).toEqual({ tier: "web" });
    expect(r.body.spec.replicas).toBe(4);
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
  });

  it("a different uid in the body → 409 (uid precondition)", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("s"));
    const body = secret("s", { a: "b" }) as any;
    body.metadata.uid = "00000000-0000-0000-0000-000000000000";
    const r = await t.api.put(`${secrets(ns)}/s`, body);
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe("Conflict");
    expect(r.body.message).toMatch(
      /^Operation cannot be fulfilled on secrets "s": StorageError: invalid object, Code: 4, .*Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: [0-9a-f-]{36}$/,
    );
    expect(r.body.details).toMatchObject({ name: "s", kind: "secrets" });
  });

  it("body name different from the URL → 400", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("a"));
    const r = await t.api.put(`${secrets(ns)}/a`, secret("b"));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("the name of the object (b) does not match the name on the URL (a)");
  });

  it("a body without a name → 400 (an empty name mismatches the URL)", async () => {
    const ns = await freshNamespace(t.api);
    await t.api.post(secrets(ns), secret("named"));
    const r = await t.api.put(`${secrets(ns)}/named`, { apiVersion: "v1", kind: "Secret", metadata: {} });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("the name of the object () does not match the name on the URL (named)");
  });

  it("two writers from the same resourceVersion: exactly one wins", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("race"))).body;
    const writes = [2, 3, 4, 5].map((n) => {
      const body = structuredClone(created);
      body.spec.replicas = n;
      return t.api.put(`${deploys(ns)}/race`, body);
    });
    const codes = (await Promise.all(writes)).map((r) => r.status).sort();
    expect(codes).toEqual([200, 409, 409, 409]);
  });

  it("two creates of one name at once: one 201, one 409", async () => {
    const ns = await freshNamespace(t.api);
    const codes = (await Promise.all([1, 2].map(() => t.api.post(secrets(ns), secret("once"))))).map((r) => r.status).sort();
    expect(codes).toEqual([201, 409]);
  });

  it("of a missing object → 404 (no create on update)", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.put(`${secrets(ns)}/ghost`, secret("ghost"));
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('secrets "ghost" not found');
  });

  it("a no-op update keeps the resourceVersion and emits no watch event", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("same"))).body;
    const w = await t.api.watch(`${deploys(ns)}?resourceVersion=${created.metadata.resourceVersion}`);
    const r = await t.api.put(`${deploys(ns)}/same`, created);
    expect(r.status).toBe(200);
    expect(r.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(r.body.metadata.generation).toBe(1);
    expect(await w.eventsBefore("marker", () => t.api.post(deploys(ns), deployment("marker")))).toEqual([]);
    w.close();
  });

  it("generation bumps only when spec changes", async () => {
    const ns = await freshNamespace(t.api);
    const created = (await t.api.post(deploys(ns), deployment("g"))).body;
    const labelled = structuredClone(created);
    labelled.metadata.labels = { x: "y" };
    const r1 = await t.api.put(`${deploys(ns)}/g`, labelled);
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.generation).toBe(1);
    const scaled = structuredClone(r1.body);
    scaled.spec.replicas = 5;
    const r2 = await t.api.put(`${deploys(ns)}/g`, scaled);
    expect(r2.body.metadata.generation).toBe(2);
    // The client cannot set generation itself.
    const forced = structuredClone(r2.body);
    forced.metadata.generation = 42;
    forced.metadata.labels = { x: "z" };
    const r3 = await t.api.put(`${deploys(ns)}/g`, forced);
    expect(r3.body.metadata.generation).toBe(2);
  });

  it("the main endpoint ignores status; /status changes only status", async () => {
    const ns = await freshNamespace(t.api);
    const body = deployment("s") as any;
    body.status = { replicas: 9 };
    const created = (await t.api.post(deploys(ns), body)).body;
    expect(created.status?.replicas).toBeUndefined();

    const main = structuredClone(created);
    main.status = { replicas: 7 };
    const r1 = await t.api.put(`${deploys(ns)}/s`, main);
    expect(r1.status).toBe(200);
    expect(r1.body.status?.replicas).toBeUndefined();

    const viaStatus = structuredClone(r1.body);
    viaStatus.status = { replicas: 3, readyReplicas: 2 };
    viaStatus.spec.replicas = 50;
    const r2 = await t.api.put(`${deploys(ns)}/s/status`, viaStatus);
    expect(r2.status).toBe(200);
    expect(r2.body.status).toMatchObject({ replicas: 3, readyReplicas: 2 });
    expect(r2.body.spec.replicas).toBe(1);
    expect(r2.body.metadata.generation).toBe(1);

    const got = (await t.api.get(`${deploys(ns)}/s`)).body;
    expect(got.status).toMatchObject({ replicas: 3, readyReplicas: 2 });
    expect(got.spec.replicas).toBe(1);

    // GET on /status returns the object too.
    const st = await t.api.get(`${deploys(ns)}/s/status`);
    expect(st.status).toBe(200);
    expect(st.body.status.replicas).toBe(3);
  });

  it("/status of a missing object → 404", async () => {
    const ns = await freshNamespace(t.api);
    const r = await t.api.put(`${deploys(ns)}/ghost/status`, deployment("ghost"));
    expect(r.status).toBe(404);
  });
});

describe("persistence", () => {
  it("objects survive an apiserver restart on the same data directory", async () => {
    const ns = await freshNamespace(t.api);
    const before = (await t.api.get(deploys(ns))).body.metadata.resourceVersion;
    const created = (await t.api.post(deploys(ns), deployment("durable"))).body;
    await t.restart();
    // The change history survives too: a watch from before the restart replays it.
    const w = await t.api.watch(`${deploys(ns)}?resourceVersion=${before}`);
    const replayed = await w.next();
    expect(replayed.type).toBe("ADDED");
    expect(replayed.object).toEqual(created);
    w.close();
    const got = await t.api.get(`${deploys(ns)}/durable`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    // Revisions keep increasing after the restart.
    const next = await t.api.post(secrets(ns), secret("after-restart"));
    expect(Number(next.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect((await t.api.get("/api/v1/namespaces/default")).status).toBe(200);
  });
});
