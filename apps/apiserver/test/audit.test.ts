// Audit logging end to end: a real apiserver with an audit policy and log file, driven by kubectl and by
// the test client, and the audit.k8s.io/v1 events it writes read back from the file.
import type { AuditEvent } from "@orch/audit";
import { createAdaptorServer } from "@hono/node-server";
import { Auditor, type AuditSink, parsePolicy } from "@orch/audit";
import { createLogger } from "@orch/log";
import { eventually } from "@orch/testing";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.js";
import { audit, auditID, auditorFromConfig } from "../src/http/audit.js";
import type { Env } from "../src/http/filters.js";
import { respondError } from "../src/http/respond.js";
import { startApiserver } from "../src/server.js";
import { type TestServer, freshNamespace, testLog, useTestServer } from "./harness.js";

const run = promisify(execFile);

const t = useTestServer({ tokens: ['bob-token,bob,bob-uid,"team-b"'] });
let dir: string;
let logPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "orch-audit-test-"));
  logPath = join(dir, "audit.log");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Restarts the apiserver with this policy (and a fresh log). */
async function auditWith(rules: object[], top: object = {}): Promise<void> {
  const policyFile = join(dir, "policy.yaml");
  await writeFile(policyFile, JSON.stringify({ apiVersion: "audit.k8s.io/v1", kind: "Policy", ...top, rules }));
  await rm(logPath, { force: true });
  t.config.audit = { policyFile, logPath, maxSizeMB: 0, maxBackups: 0 };
  await t.restart();
}

function events(): AuditEvent[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent);
}

/** The events of one request, once its last stage is in the log. */
function eventsOf(auditID: string, last: AuditEvent["stage"] = "ResponseComplete"): Promise<AuditEvent[]> {
  return eventually(`audit events of ${auditID} up to ${last}`, () => {
    const mine = events().filter((e) => e.auditID === auditID);
    return mine.some((e) => e.stage === last) && mine;
  });
}

async function kubectl(server: TestServer, ...args: string[]): Promise<string> {
  const { stdout } = await run("kubectl", ["--kubeconfig", server.server.kubeconfigPath, ...args]);
  return stdout;
}

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe("audit log", () => {
  it("records who created what with kubectl, at RequestReceived and ResponseComplete", async () => {
    await auditWith([{ level: "Metadata" }]);
    const ns = await freshNamespace(t.api);
    await kubectl(t, "create", "serviceaccount", "robot", "-n", ns);

    const created = await eventually("kubectl's create in the log", () =>
      events().find((e) => e.verb === "create" && e.objectRef?.name === "robot" && e.stage === "ResponseComplete"),
    );
    expect(created).toMatchObject({
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "Metadata",
      requestURI: expect.stringMatching(new RegExp(`^/api/v1/namespaces/${ns}/serviceaccounts`)),
      user: { username: "orch-admin", groups: expect.arrayContaining(["system:masters", "system:authenticated"]) },
      sourceIPs: ["127.0.0.1"],
      userAgent: expect.stringMatching(/^kubectl/),
      objectRef: { resource: "serviceaccounts", namespace: ns, name: "robot", apiVersion: "v1" },
      responseStatus: { metadata: {}, code: 201 },
      annotations: { "authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": "" },
    });
    expect(created.requestObject).toBeUndefined();
    expect(created.responseObject).toBeUndefined();
    expect(created.requestReceivedTimestamp).toMatch(MICRO_TIME);
    expect(created.stageTimestamp >= created.requestReceivedTimestamp).toBe(true);

    const received = events().find((e) => e.auditID === created.auditID && e.stage === "RequestReceived");
    // Received before authorization ran: no decision yet, no answer.
    expect(received).toMatchObject({ verb: "create", stageTimestamp: created.requestReceivedTimestamp });
    expect(received?.responseStatus).toBeUndefined();
    expect(received?.annotations).toBeUndefined();
  });

  it("sends an Audit-ID on every response, the client's own when it sent one, and logs under it", async () => {
    for (const path of ["/healthz", "/version", "/no-such-path", "/api/v1/namespaces"]) {
      const r = await t.api.get(path);
      expect(r.headers["audit-id"], path).toMatch(/^[0-9a-f-]{36}$/);
    }
    const r = await t.api.get("/api/v1/namespaces/default", { headers: { "Audit-ID": "my-own-id" } });
    expect(r.headers["audit-id"]).toBe("my-own-id");
    const [received, completed] = await eventsOf("my-own-id");
    expect([received?.stage, completed?.stage]).toEqual(["RequestReceived", "ResponseComplete"]);
    expect(completed).toMatchObject({ verb: "get", objectRef: { resource: "namespaces", name: "default" }, responseStatus: { code: 200 } });
  });

  it("records a forbidden request with the authorizer's decision and the Status", async () => {
    const r = await t.api.withToken("bob-token").get("/api/v1/namespaces/default/secrets", { headers: { "Audit-ID": "forbidden-1" } });
    expect(r.status).toBe(403);
    const completed = (await eventsOf("forbidden-1")).at(-1);
    expect(completed).toMatchObject({
      verb: "list",
      user: { username: "bob", uid: "bob-uid", groups: expect.arrayContaining(["team-b"]) },
      objectRef: { resource: "secrets", namespace: "default", apiVersion: "v1" },
      responseStatus: { metadata: {}, status: "Failure", reason: "Forbidden", code: 403, message: r.body.message },
      annotations: { "authorization.k8s.io/decision": "forbid" },
    });
  });

  it("records a request nobody could authenticate, without a user, at ResponseStarted", async () => {
    const none = await t.api.anonymous().get("/api/v1/namespaces", { headers: { "Audit-ID": "anonymous-1" } });
    const badToken = await t.api.withToken("nobody").get("/api/v1/namespaces", { headers: { "Audit-ID": "bad-token-1" } });
    expect([none.status, badToken.status]).toEqual([401, 401]);
    const [anonymous] = await eventsOf("anonymous-1", "ResponseStarted");
    expect(anonymous).toMatchObject({
      stage: "ResponseStarted",
      verb: "list",
      user: {},
      objectRef: { resource: "namespaces", apiVersion: "v1" },
      responseStatus: { metadata: {}, code: 401, message: "Authentication failed, no credentials provided" },
    });
    const [bearer] = await eventsOf("bad-token-1", "ResponseStarted");
    expect(bearer?.responseStatus?.message).toBe("Authentication failed, attempted: bearer");
    // That one event is all: no stage follows.
    expect(events().filter((e) => e.auditID === "anonymous-1")).toHaveLength(1);
  });

  it("records a watch at ResponseStarted when its stream opens, and at ResponseComplete when it ends", async () => {
    const ns = await freshNamespace(t.api);
    const watch = await t.api.watch(`/api/v1/namespaces/${ns}/serviceaccounts`, { headers: { "Audit-ID": "watch-1" } });
    expect(watch.headers["audit-id"]).toBe("watch-1");
    const started = await eventsOf("watch-1", "ResponseStarted");
    expect(started.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseStarted"]);
    expect(started[1]).toMatchObject({ verb: "watch", responseStatus: { code: 200 } });
    watch.close();
    const all = await eventsOf("watch-1");
    expect(all.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseStarted", "ResponseComplete"]);
  });

  it("keeps the request body from Request level on, the response from RequestResponse, each only for its rule", async () => {
    await auditWith(
      [
        { level: "RequestResponse", resources: [{ group: "", resources: ["serviceaccounts"] }] },
        { level: "Request", resources: [{ group: "", resources: ["secrets"] }] },
        { level: "Metadata" },
      ],
      { omitManagedFields: true },
    );
    const ns = await freshNamespace(t.api);
    const account = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "sa1", labels: { team: "b" } } };
    const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "s1" }, stringData: { password: "hunter2" } };
    const namespacePatch = { metadata: { labels: { audited: "yes" } } };
    const answer = await t.api.post(`/api/v1/namespaces/${ns}/serviceaccounts?fieldManager=test`, account, {
      headers: { "Audit-ID": "sa-1" },
    });
    expect(answer.body.metadata.managedFields).toHaveLength(1);
    await t.api.post(`/api/v1/namespaces/${ns}/secrets`, secret, { headers: { "Audit-ID": "secret-1" } });
    await t.api.patch(`/api/v1/namespaces/${ns}`, namespacePatch, undefined, { headers: { "Audit-ID": "ns-1" } });

    const sa = (await eventsOf("sa-1")).at(-1)!;
    expect(sa).toMatchObject({ level: "RequestResponse", responseStatus: { code: 201 } });
    expect(sa.requestObject).toEqual(account);
    expect(sa.responseObject).toMatchObject({ kind: "ServiceAccount", metadata: { name: "sa1", namespace: ns, uid: expect.any(String) } });
    // The response had them; omitManagedFields took them out of the record.
    expect((sa.responseObject as { metadata: Record<string, unknown> }).metadata.managedFields).toBeUndefined();

    const created = (await eventsOf("secret-1")).at(-1)!;
    expect(created).toMatchObject({ level: "Request", responseStatus: { code: 201 } });
    expect(created.requestObject).toEqual(secret);
    expect(created.responseObject).toBeUndefined();

    const patched = (await eventsOf("ns-1")).at(-1)!;
    expect(patched).toMatchObject({ level: "Metadata", verb: "patch", responseStatus: { code: 200 } });
    expect(patched.requestObject).toBeUndefined();
  });

  it("keeps managedFields unless the policy omits them", async () => {
    await auditWith([{ level: "RequestResponse" }]);
    const ns = await freshNamespace(t.api);
    const r = await t.api.post(
      `/api/v1/namespaces/${ns}/serviceaccounts?fieldManager=test`,
      { metadata: { name: "sa2", labels: { team: "b" } } },
      { headers: { "Audit-ID": "sa-2" } },
    );
    expect(r.body.metadata.managedFields).toBeDefined();
    const sa = (await eventsOf("sa-2")).at(-1)!;
    expect((sa.responseObject as { metadata: Record<string, unknown> }).metadata.managedFields).toEqual(r.body.metadata.managedFields);
  });

  it("writes no event for an omitted stage, nor for a request whose level is None", async () => {
    await auditWith(
      [
        { level: "None", resources: [{ group: "", resources: ["namespaces"] }] },
        { level: "Metadata", verbs: ["watch"], omitStages: ["ResponseStarted"] },
        { level: "Metadata", resources: [{ group: "", resources: ["serviceaccounts"] }], omitStages: ["ResponseComplete"] },
        { level: "Metadata" },
      ],
      { omitStages: ["RequestReceived"] },
    );
    await t.api.get("/api/v1/namespaces", { headers: { "Audit-ID": "none-1" } });
    await t.api.get("/api/v1/namespaces/default/serviceaccounts", { headers: { "Audit-ID": "omitted-1" } });
    // Events are written in order: once this one's is in, the others' would be too.
    await t.api.get("/api/v1/namespaces/default/secrets", { headers: { "Audit-ID": "marker-1" } });
    const marker = await eventsOf("marker-1");
    // The policy omits RequestReceived for every rule.
    expect(marker.map((e) => e.stage)).toEqual(["ResponseComplete"]);
    expect(events().filter((e) => e.auditID === "none-1")).toEqual([]);
    expect(events().filter((e) => e.auditID === "omitted-1")).toEqual([]);

    const watch = await t.api.watch("/api/v1/namespaces/default/pods?timeoutSeconds=1", { headers: { "Audit-ID": "watch-2" } });
    await watch.ended;
    // ResponseStarted would have come before ResponseComplete.
    expect((await eventsOf("watch-2")).map((e) => e.stage)).toEqual(["ResponseComplete"]);
  });

  it("refuses to start with a policy it cannot use, saying what is wrong", async () => {
    const policyFile = join(dir, "broken.yaml");
    await writeFile(policyFile, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n");
    const dataDir = await mkdtemp(join(tmpdir(), "orch-audit-broken-"));
    try {
      await expect(
        startApiserver({ ...t.config, dataDir, port: 0, audit: { policyFile, logPath, maxSizeMB: 0, maxBackups: 0 } }, testLog),
      ).rejects.toThrow(
        `loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${policyFile}`,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("audit settings", () => {
  it("are Kubernetes' flags as ORCH_AUDIT_*, off when neither file is named", () => {
    const env = {
      ORCH_AUDIT_POLICY_FILE: "policy.yaml",
      ORCH_AUDIT_LOG_PATH: "-",
      ORCH_AUDIT_LOG_MAXSIZE: "5",
      ORCH_AUDIT_LOG_MAXBACKUP: "3",
    };
    expect(configFromEnv(env).audit).toEqual({ policyFile: resolve("policy.yaml"), logPath: "-", maxSizeMB: 5, maxBackups: 3 });
    expect(configFromEnv({ ORCH_AUDIT_LOG_PATH: "audit.log" }).audit).toEqual({
      logPath: resolve("audit.log"),
      maxSizeMB: 0,
      maxBackups: 0,
    });
    expect(configFromEnv({}).audit).toBeUndefined();
    expect(() => configFromEnv({ ...env, ORCH_AUDIT_LOG_MAXBACKUP: "-1" })).toThrow(
      "ORCH_AUDIT_LOG_MAXBACKUP must be a non-negative integer",
    );
  });

  it("record nothing with a policy but no log, as Kubernetes, and say so; the policy is still checked", async () => {
    const lines: { level: string; msg: string }[] = [];
    const log = createLogger("apiserver", { destination: (line) => lines.push(JSON.parse(line) as { level: string; msg: string }) });
    const policyFile = join(dir, "lonely.yaml");
    await writeFile(policyFile, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n");
    expect(await auditorFromConfig({ policyFile, maxSizeMB: 0, maxBackups: 0 }, log)).toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: "ORCH_AUDIT_POLICY_FILE is set but ORCH_AUDIT_LOG_PATH is not: no audit events will be recorded",
      }),
    ]);
    await writeFile(policyFile, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n");
    await expect(auditorFromConfig({ policyFile, maxSizeMB: 0, maxBackups: 0 }, log)).rejects.toThrow("loaded illegal policy with 0 rules");
  });
});

describe("audit of a failure nobody foresaw", () => {
  it("records it at Panic, in place of ResponseComplete, as Kubernetes records a panic", async () => {
    const written: AuditEvent[] = [];
    const sink: AuditSink = { write: (e) => void written.push(structuredClone(e)), close: async () => undefined };
    const auditor = new Auditor(parsePolicy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n"), sink);
    // The apiserver's filters and error handling around a handler that throws.
    const app = new Hono<Env>();
    const admin = { username: "admin", groups: ["system:masters"] };
    app.use("*", auditID());
    app.use("*", async (c, next) => {
      c.set("authenticated", admin);
      c.set("user", admin);
      await next();
    });
    app.use("*", audit(auditor, testLog));
    app.get("*", () => {
      throw new TypeError("boom");
    });
    app.onError((e) => respondError(e));
    const server = createAdaptorServer({ fetch: app.fetch });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/pods/web`, { headers: { "Audit-ID": "panic-1" } });
      expect(r.status).toBe(500);
      await eventually("the Panic event", () => written.some((e) => e.stage === "Panic"));
      expect(written.map((e) => e.stage)).toEqual(["RequestReceived", "Panic"]);
      expect(written[1]).toMatchObject({
        auditID: "panic-1",
        verb: "get",
        objectRef: { resource: "pods", namespace: "default", name: "web" },
        responseStatus: { metadata: {}, status: "Failure", reason: "InternalError", message: "APIServer panic'd: boom", code: 500 },
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
