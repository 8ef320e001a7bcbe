// GET /metrics on a real apiserver over HTTPS: who may scrape it, and that what it reports follows
// what was sent, under Kubernetes' metric names and labels. Parsed with a Prometheus text-format parser.
import { REQUEST_DURATION_BUCKETS } from "@orch/metrics";
import { eventually, startApiserverProcess, startNatsServer } from "@orch/testing";
import parsePrometheusTextFormat, { type MetricFamily, type Sample } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, adminClient, freshNamespace, paths, secret, useTestServer } from "./harness.js";

const t = useTestServer({ tokens: ['monitor-token,prometheus,u-prom,"system:monitoring"', "nobody-token,nobody,u-nobody"] });

let monitor: Client;
beforeAll(() => {
  monitor = t.api.withToken("monitor-token");
});
afterAll(() => monitor.close());

class Scrape {
  constructor(
    readonly text: string,
    readonly families: MetricFamily[],
  ) {}

  static async of(client: Client): Promise<Scrape> {
    const reply = await client.get("/metrics");
    expect(reply.status, reply.text).toBe(200);
    // The parser folds a histogram's series into one and loses their labels (it handles only unlabelled
    // histograms): read histograms as plain _bucket, _sum and _count samples instead (a family per series).
    return new Scrape(reply.text, parsePrometheusTextFormat(reply.text.replace(/^# TYPE (\S+) histogram$/gm, "# TYPE $1 untyped")));
  }

  family(name: string): MetricFamily | undefined {
    return this.families.find((f) => f.name === name);
  }

  /** The samples of a metric whose labels include `labels` (a histogram's come as a family per series). */
  samples(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.families
      .filter((f) => f.name === name)
      .flatMap((f) => f.metrics)
      .filter((m): m is Sample => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  }

  /** The value of the one sample with exactly these labels (0 when absent, as a counter not yet incremented). */
  value(name: string, labels: Record<string, string> = {}): number {
    const exact = this.samples(name, labels).filter((m) => Object.keys(m.labels ?? {}).length === Object.keys(labels).length);
    expect(exact.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
    return exact[0] ? Number(exact[0].value) : 0;
  }
}

/** Kubernetes' request labels for the core group's secrets. */
const secrets = (verb: string, scope: string, extra: Record<string, string> = {}) => ({
  verb,
  dry_run: "",
  group: "",
  version: "v1",
  resource: "secrets",
  subresource: "",
  scope,
  component: "apiserver",
  ...extra,
});

describe("who may scrape /metrics", () => {
  it("answers 401 without credentials, 403 without the right and 200 to system:monitoring and cluster-admin", async () => {
    const anonymous = t.api.anonymous();
    const nobody = t.api.withToken("nobody-token");
    try {
      const unauthenticated = await anonymous.get("/metrics");
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.body).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401 });

      const forbidden = await nobody.get("/metrics");
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403 });
      expect(forbidden.body.message).toContain('"/metrics"');

      const scraped = await monitor.get("/metrics");
      expect(scraped.status).toBe(200);
      expect(scraped.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect((await t.api.get("/metrics")).status).toBe(200);
    } finally {
      anonymous.close();
      nobody.close();
    }
  });

  it("has Kubernetes' system:monitoring role and binding in the bootstrap policy", async () => {
    const role = await t.api.get("/apis/rbac.authorization.orch.io/v1/clusterroles/system:monitoring");
    expect(role.status).toBe(200);
    expect(role.body.rules).toEqual([
      { verbs: ["get"], nonResourceURLs: expect.arrayContaining(["/metrics", "/livez", "/readyz", "/healthz"]) },
    ]);
    const binding = await t.api.get("/apis/rbac.authorization.orch.io/v1/clusterrolebindings/system:monitoring");
    expect(binding.body.subjects).toEqual([{ kind: "Group", apiGroup: "rbac.authorization.orch.io", name: "system:monitoring" }]);
  });
});

describe("request metrics", () => {
  it("count each request once, by Kubernetes' verb, scope, dry run and code, and time it in Kubernetes' buckets", async () => {
    const ns = await freshNamespace(t.api, "metrics");
    const before = await Scrape.of(monitor);

    for (const name of ["a", "b", "c"]) expect((await t.api.post(paths.secrets(ns), secret(name))).status).toBe(201);
    expect((await t.api.post(paths.secrets(ns), secret("a"))).status).toBe(409);
    expect((await t.api.post(`${paths.secrets(ns)}?dryRun=All`, secret("d"))).status).toBe(201);
    expect((await t.api.get(`${paths.secrets(ns)}/a`)).status).toBe(200);
    expect((await t.api.get(`${paths.secrets(ns)}/missing`)).status).toBe(404);
    expect((await t.api.get(paths.secrets(ns))).status).toBe(200);
    expect((await t.api.get("/api/v1/secrets")).status).toBe(200);
    expect((await t.api.put(`${paths.secrets(ns)}/b`, { ...secret("b"), data: { k: "dg==" } })).status).toBe(200);
    expect((await t.api.patch(`${paths.secrets(ns)}/b`, { metadata: { labels: { x: "y" } } })).status).toBe(200);
    // The body goes as JSON, which is YAML too.
    const applied = await t.api.patch(`${paths.secrets(ns)}/e?fieldManager=metrics-test`, secret("e"), "application/apply-patch+yaml");
    expect(applied.status, applied.text).toBe(201);
    expect((await t.api.delete(`${paths.secrets(ns)}/c`)).status).toBe(200);
    expect((await t.api.delete(paths.secrets(ns))).status).toBe(200);

    const after = await Scrape.of(monitor);
    const rose = (labels: Record<string, string>) =>
      after.value("apiserver_request_total", labels) - before.value("apiserver_request_total", labels);
    expect(rose(secrets("POST", "resource", { code: "201" }))).toBe(3);
    expect(rose(secrets("POST", "resource", { code: "409" }))).toBe(1);
    expect(rose(secrets("POST", "resource", { dry_run: "All", code: "201" }))).toBe(1);
    expect(rose(secrets("GET", "resource", { code: "200" }))).toBe(1);
    expect(rose(secrets("GET", "resource", { code: "404" }))).toBe(1);
    expect(rose(secrets("LIST", "namespace", { code: "200" }))).toBe(1);
    expect(rose(secrets("LIST", "cluster", { code: "200" }))).toBe(1);
    expect(rose(secrets("PUT", "resource", { code: "200" }))).toBe(1);
    expect(rose(secrets("PATCH", "resource", { code: "200" }))).toBe(1);
    expect(rose(secrets("APPLY", "resource", { code: "201" }))).toBe(1);
    expect(rose(secrets("DELETE", "resource", { code: "200" }))).toBe(1);
    expect(rose(secrets("DELETE", "namespace", { code: "200" }))).toBe(1);

    // The histogram has one series per label set without the code: POST 201 and 409 together.
    expect(after.text).toContain("# TYPE apiserver_request_duration_seconds histogram");
    const timed = secrets("POST", "resource");
    const count = "apiserver_request_duration_seconds_count";
    expect(after.value(count, timed) - before.value(count, timed)).toBe(4);
    const buckets = after.samples("apiserver_request_duration_seconds_bucket", timed).map((b) => b.labels!.le!);
    expect(buckets).toEqual([...REQUEST_DURATION_BUCKETS.map(String), "+Inf"]);

    // Never the object's name or namespace, nor a URL, as a label value.
    const values = after.families.flatMap((f) => f.metrics.flatMap((m) => Object.values(m.labels ?? {})));
    expect(values).not.toContain(ns);
    expect(values.filter((v) => v.includes("/") && !v.startsWith("/"))).toEqual([]);
  });

  it("counts nothing for a resource the apiserver does not serve, so a client cannot add series", async () => {
    expect((await t.api.get("/api/v1/namespaces/default/no-such-things")).status).toBe(404);
    expect((await t.api.get("/apis/apps/v1/namespaces/default/deployments/x/no-such-subresource")).status).toBe(404);
    const scrape = await Scrape.of(monitor);
    expect(scrape.samples("apiserver_request_total", { resource: "no-such-things" })).toEqual([]);
    expect(scrape.samples("apiserver_request_total", { subresource: "no-such-subresource" })).toEqual([]);
  });

  it("shows an open watch in apiserver_longrunning_requests and counts it as WATCH when it ends", async () => {
    const ns = await freshNamespace(t.api, "metrics");
    const open = { ...secrets("WATCH", "namespace") } as Record<string, string>;
    delete open.dry_run;
    const finished = secrets("WATCH", "namespace", { code: "200" });
    const before = await Scrape.of(monitor);
    const gaugeBefore = before.value("apiserver_longrunning_requests", open);

    const watch = await t.api.watch(paths.secrets(ns));
    expect(watch.status).toBe(200);
    await eventually(
      "the watch in the gauge",
      async () => (await Scrape.of(monitor)).value("apiserver_longrunning_requests", open) === gaugeBefore + 1,
    );
    expect((await Scrape.of(monitor)).value("apiserver_request_total", finished)).toBe(before.value("apiserver_request_total", finished));

    watch.close();
    const after = await eventually("the watch out of the gauge", async () => {
      const scrape = await Scrape.of(monitor);
      return scrape.value("apiserver_longrunning_requests", open) === gaugeBefore && scrape;
    });
    expect(after.value("apiserver_request_total", finished) - before.value("apiserver_request_total", finished)).toBe(1);
    // Short requests are reported in flight by kind; the scrape itself is no resource request.
    expect(
      after
        .family("apiserver_current_inflight_requests")
        ?.metrics.map((m) => m.labels?.request_kind)
        .sort(),
    ).toEqual(["mutating", "readOnly"]);
  });
});

describe("storage and process metrics", () => {
  it("reports as many stored objects per resource as a list finds, and the database's size", async () => {
    const ns = await freshNamespace(t.api, "metrics");
    for (const name of ["s1", "s2"]) expect((await t.api.post(paths.secrets(ns), secret(name))).status).toBe(201);
    const [allSecrets, allDeployments, allNamespaces] = await Promise.all(
      ["/api/v1/secrets", "/apis/apps/v1/deployments", "/api/v1/namespaces"].map((path) => t.api.get(path)),
    );
    const scrape = await Scrape.of(monitor);
    expect(scrape.value("apiserver_storage_objects", { resource: "secrets" })).toBe(allSecrets!.body.items.length);
    expect(scrape.value("apiserver_storage_objects", { resource: "deployments.apps" })).toBe(allDeployments!.body.items.length);
    expect(scrape.value("apiserver_resource_objects", { group: "", resource: "namespaces" })).toBe(allNamespaces!.body.items.length);
    expect(allSecrets!.body.items.length).toBeGreaterThanOrEqual(2);
    const [size] = scrape.samples("apiserver_storage_size_bytes");
    expect(Number(size!.value)).toBeGreaterThan(0);
    expect(size!.labels?.storage_cluster_id).toMatch(/^[0-9a-z]+$/);
  });

  it("reports the process's CPU and memory", async () => {
    const scrape = await Scrape.of(monitor);
    expect(scrape.value("process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(scrape.value("process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect(scrape.value("process_start_time_seconds")).toBeGreaterThan(0);
    // Without NATS there is no relay, and no relay metrics.
    expect(scrape.family("orch_event_relay_lag_revisions")).toBeUndefined();
  });
});

describe("the event relay's metrics (apiserver process with NATS)", () => {
  it("reports the relay's lag in revisions and seconds while NATS is away, and zero once it caught up", async () => {
    const nats = await startNatsServer();
    const server = await startApiserverProcess({ natsUrl: nats.url });
    const admin = adminClient(server.url, server.dataDir);
    try {
      const relay = async () => {
        const scrape = await Scrape.of(admin);
        return {
          lagRevisions: scrape.value("orch_event_relay_lag_revisions"),
          lagSeconds: scrape.value("orch_event_relay_lag_seconds"),
          published: scrape.value("orch_event_relay_published_events_total"),
          connected: scrape.value("orch_event_relay_connected"),
        };
      };
      const caughtUp = await eventually("the relay caught up", async () => {
        const r = await relay();
        return r.connected === 1 && r.lagRevisions === 0 && r.published > 0 && r;
      });
      expect(caughtUp.lagSeconds).toBe(0);

      await nats.stop();
      await eventually("the relay disconnected", async () => (await relay()).connected === 0);
      expect((await admin.post(paths.secrets("default"), secret(`relay-${Date.now()}`))).status).toBe(201);
      const behind = await eventually("the lag reported", async () => {
        const r = await relay();
        return r.lagRevisions >= 1 && r.lagSeconds > 0 && r;
      });
      expect(behind.published).toBe(caughtUp.published);

      await nats.restart();
      const after = await eventually(
        "the backlog published",
        async () => {
          const r = await relay();
          return r.lagRevisions === 0 && r;
        },
        { timeoutMs: 20_000 },
      );
      expect(after.lagSeconds).toBe(0);
      expect(after.published).toBeGreaterThanOrEqual(caughtUp.published + 1);
    } finally {
      admin.close();
      await server.dispose();
      await nats.stop();
    }
  }, 60_000);
});

describe("requests the apiserver cuts short", () => {
  const short = useTestServer({ requestTimeoutMs: 500 });

  it("counts a request past the deadline as a 504, a termination and an abort", async () => {
    const list = secrets("LIST", "namespace");
    const { dry_run: _dryRun, component: _component, ...aborted } = list;
    const terminated = { ...aborted, component: "apiserver", code: "504" };
    const before = await Scrape.of(short.api);
    const { body } = await short.api.get(paths.secrets("default"));
    // A list at a revision not yet committed waits for it, longer than the deadline (see request-deadline.test.ts).
    const future = Number(body.metadata.resourceVersion) + 1000;
    expect((await short.api.get(`${paths.secrets("default")}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`)).status).toBe(
      504,
    );

    const after = await eventually("the 504 counted", async () => {
      const scrape = await Scrape.of(short.api);
      return scrape.value("apiserver_request_total", { ...list, code: "504" }) === 1 && scrape;
    });
    expect(
      after.value("apiserver_request_terminations_total", terminated) - before.value("apiserver_request_terminations_total", terminated),
    ).toBe(1);
    expect(after.value("apiserver_request_aborts_total", aborted) - before.value("apiserver_request_aborts_total", aborted)).toBe(1);
    // The list before it, answered in time, counts as a 200 only.
    expect(
      after.value("apiserver_request_total", { ...list, code: "200" }) - before.value("apiserver_request_total", { ...list, code: "200" }),
    ).toBe(1);
  });
});
