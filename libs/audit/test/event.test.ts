import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AuditEvent,
  type AuditSink,
  type RequestAuditConfig,
  RequestAudit,
  backupName,
  microTime,
  openLogBackend,
  sourceIPs,
  truncateUserAgent,
  withoutManagedFields,
} from "../src/index.js";

describe("event fields", () => {
  it("writes timestamps as Kubernetes' MicroTime: UTC, six fractional digits", () => {
    expect(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 6) + 0.789)).toBe("2024-01-02T03:04:05.006789Z");
    expect(microTime(Date.UTC(2024, 0, 2, 3, 4, 5))).toBe("2024-01-02T03:04:05.000000Z");
  });

  it("lists source IPs as Kubernetes does: forwarded, real, then the connection's", () => {
    expect(sourceIPs(undefined, undefined, "::ffff:127.0.0.1")).toEqual(["127.0.0.1"]);
    expect(sourceIPs("10.0.0.1, bogus, 10.0.0.2", "10.0.0.3", "127.0.0.1")).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3", "127.0.0.1"]);
    // The connection is the proxy that said so last: not repeated.
    expect(sourceIPs("10.0.0.1, 127.0.0.1", "10.0.0.1", "127.0.0.1")).toEqual(["10.0.0.1", "127.0.0.1"]);
  });

  it("cuts a user agent past 1024 characters", () => {
    expect(truncateUserAgent("kubectl")).toBe("kubectl");
    expect(truncateUserAgent("x".repeat(1100))).toBe(`${"x".repeat(1024)}...TRUNCATED`);
  });

  it("drops managedFields from an object, a list's items and a table's rows, without touching the original", () => {
    const managed = { name: "a", managedFields: [{ manager: "kubectl" }] };
    const object = { kind: "Pod", metadata: managed };
    expect(withoutManagedFields(object)).toEqual({ kind: "Pod", metadata: { name: "a" } });
    expect(object.metadata.managedFields).toHaveLength(1);
    expect(withoutManagedFields({ kind: "PodList", metadata: {}, items: [object] })).toEqual({
      kind: "PodList",
      metadata: {},
      items: [{ kind: "Pod", metadata: { name: "a" } }],
    });
    expect(withoutManagedFields({ kind: "Table", rows: [{ cells: [], object }] })).toEqual({
      kind: "Table",
      rows: [{ cells: [], object: { kind: "Pod", metadata: { name: "a" } } }],
    });
  });
});

describe("RequestAudit", () => {
  const written: AuditEvent[] = [];
  const sink: AuditSink = { write: (e) => void written.push(structuredClone(e)), close: async () => undefined };
  const start = (config: Partial<RequestAuditConfig>) => {
    written.length = 0;
    return new RequestAudit(
      sink,
      { level: "Metadata", omitStages: [], omitManagedFields: false, ...config },
      {
        auditID: "id-1",
        receivedAt: Date.UTC(2024, 0, 1),
        requestURI: "/api/v1/namespaces/default/configmaps",
        verb: "create",
        user: { username: "alice" },
        sourceIPs: ["127.0.0.1"],
        userAgent: undefined,
        objectRef: { resource: "configmaps", namespace: "default", apiVersion: "v1" },
      },
    );
  };

  it("writes each stage not omitted; RequestReceived carries the arrival time", () => {
    const audit = start({ omitStages: ["ResponseStarted"] });
    audit.emit("RequestReceived");
    audit.emit("ResponseStarted");
    audit.setResponseStatus(201);
    audit.emit("ResponseComplete");
    expect(written.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseComplete"]);
    expect(written[0]).toEqual({
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "Metadata",
      auditID: "id-1",
      stage: "RequestReceived",
      requestURI: "/api/v1/namespaces/default/configmaps",
      verb: "create",
      user: { username: "alice" },
      sourceIPs: ["127.0.0.1"],
      objectRef: { resource: "configmaps", namespace: "default", apiVersion: "v1" },
      requestReceivedTimestamp: "2024-01-01T00:00:00.000000Z",
      stageTimestamp: "2024-01-01T00:00:00.000000Z",
    });
    expect(written[1]?.responseStatus).toEqual({ metadata: {}, code: 201 });
    expect(written[1]!.stageTimestamp > written[1]!.requestReceivedTimestamp).toBe(true);
  });

  it("names the object from the request body at Metadata, and keeps the body only from Request on", () => {
    const body = { metadata: { name: "settings", managedFields: [{}] }, data: { a: "1" } };
    const metadata = start({ level: "Metadata" });
    metadata.setRequestObject(body);
    metadata.setResponseObject(body);
    expect(JSON.stringify(metadata.event.objectRef)).toBe(
      '{"resource":"configmaps","namespace":"default","name":"settings","apiVersion":"v1"}',
    );
    expect(metadata.event.requestObject).toBeUndefined();

    const request = start({ level: "Request", omitManagedFields: true });
    request.setRequestObject(body);
    request.setResponseObject(body);
    expect(request.event.requestObject).toEqual({ metadata: { name: "settings" }, data: { a: "1" } });
    expect(request.event.responseObject).toBeUndefined();

    const both = start({ level: "RequestResponse" });
    both.setResponseObject(body);
    expect(both.event.responseObject).toBe(body);
  });

  it("copies a failure Status's fields in Go's order", () => {
    const audit = start({});
    audit.setResponseStatus(403, {
      kind: "Status",
      status: "Failure",
      message: "no",
      reason: "Forbidden",
      details: { kind: "pods" },
    } as never);
    expect(JSON.stringify(audit.event.responseStatus)).toBe(
      '{"metadata":{},"status":"Failure","message":"no","reason":"Forbidden","details":{"kind":"pods"},"code":403}',
    );
  });
});

describe("log backend", () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const event = (n: number, padding = 0): AuditEvent =>
    ({ kind: "Event", auditID: String(n), padding: "x".repeat(padding) }) as unknown as AuditEvent;

  it("appends one JSON event per line, after what the file held, creating its directory", async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-log-"));
    const path = join(dir, "sub", "audit.log");
    const first = await openLogBackend({ path, onError: () => undefined });
    first.write(event(1));
    await first.close();
    const second = await openLogBackend({ path, onError: () => undefined });
    second.write(event(2));
    second.write(event(3));
    await second.close();
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as AuditEvent).auditID)).toEqual(["1", "2", "3"]);
  });

  it("rotates past the size limit and keeps maxBackups old files", async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-log-"));
    const path = join(dir, "audit.log");
    // An older backup of another file, which pruning must leave alone.
    await writeFile(join(dir, "other-2020-01-01T00-00-00.000.log"), "");
    const backend = await openLogBackend({ path, maxSizeMB: 1, maxBackups: 2, onError: () => undefined });
    // ~600 KB each: every second event starts a new file.
    for (let i = 0; i < 8; i++) {
      backend.write(event(i, 600_000));
      // A millisecond apart, so that every rotation gets its own name.
      await new Promise((r) => setTimeout(r, 5));
    }
    await backend.close();
    const names = (await readdir(dir)).sort();
    expect(names.filter((n) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(n))).toHaveLength(2);
    expect(names).toContain("audit.log");
    expect(names).toContain("other-2020-01-01T00-00-00.000.log");
    const current = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(current.length).toBeLessThanOrEqual(2);
    expect((JSON.parse(current.at(-1)!) as AuditEvent).auditID).toBe("7");
  });

  it("rotates before each event that would pass the limit when a backlog is written at once", async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-log-"));
    const path = join(dir, "audit.log");
    const backend = await openLogBackend({ path, maxSizeMB: 1, maxBackups: 3, onError: () => undefined });
    // Queued together, written in one drain: ~600 KB each, so no file may hold two.
    for (let i = 0; i < 4; i++) backend.write(event(i, 600_000));
    await backend.close();
    const names = (await readdir(dir)).sort();
    expect(names).toHaveLength(4);
    const ids = await Promise.all(
      names.map(async (name) =>
        (await readFile(join(dir, name), "utf8"))
          .trimEnd()
          .split("\n")
          .map((l) => (JSON.parse(l) as AuditEvent).auditID),
      ),
    );
    // Backups sort by name (time) before the current file: one event each, in order.
    expect(ids).toEqual([["0"], ["1"], ["2"], ["3"]]);
  });

  it("names a backup as lumberjack does", () => {
    expect(backupName("/var/log/audit.log", new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 10)))).toBe(
      "/var/log/audit-2024-05-06T07-08-09.010.log",
    );
  });

  it("reports a failed write instead of throwing, and goes on", async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-log-"));
    const path = join(dir, "audit.log");
    const errors: string[] = [];
    const backend = await openLogBackend({ path, onError: (message) => errors.push(message) });
    // The disk going away, as the backend meets it: its file handle fails every write.
    await (backend as unknown as { handle: { close(): Promise<void> } }).handle.close();
    expect(() => backend.write(event(1))).not.toThrow();
    await backend.close().catch(() => undefined);
    expect(errors).toEqual(["writing the audit log failed; events lost"]);
  });

  it("refuses to open a path it cannot create", async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-log-"));
    await writeFile(join(dir, "file"), "");
    await expect(openLogBackend({ path: join(dir, "file", "audit.log"), onError: () => undefined })).rejects.toThrow();
  });
});
