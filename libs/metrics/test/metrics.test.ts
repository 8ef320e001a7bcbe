import { describe, expect, it } from "vitest";
import {
  ApiserverMetrics,
  PeakCount,
  type RelayStats,
  type RequestFacts,
  dryRunLabel,
  reportedVerb,
  requestLabels,
  scopeOf,
} from "../src/index.js";

const facts = (over: Partial<RequestFacts>): RequestFacts => ({
  method: "GET",
  verb: "get",
  contentType: undefined,
  dryRun: [],
  group: "apps",
  version: "v1",
  resource: "deployments",
  subresource: "",
  namespace: "default",
  name: "web",
  ...over,
});

describe("request labels, as Kubernetes reports them", () => {
  it("reports the verb from the method, with LIST, WATCH and APPLY told apart", () => {
    expect(reportedVerb(facts({}))).toBe("GET");
    expect(reportedVerb(facts({ method: "HEAD" }))).toBe("GET");
    expect(reportedVerb(facts({ verb: "list", name: "" }))).toBe("LIST");
    expect(reportedVerb(facts({ verb: "watch", name: "" }))).toBe("WATCH");
    expect(reportedVerb(facts({ method: "POST", verb: "create" }))).toBe("POST");
    expect(reportedVerb(facts({ method: "PUT", verb: "update" }))).toBe("PUT");
    expect(reportedVerb(facts({ method: "PATCH", verb: "patch", contentType: "application/merge-patch+json" }))).toBe("PATCH");
    expect(reportedVerb(facts({ method: "PATCH", verb: "patch", contentType: "application/apply-patch+yaml; charset=utf-8" }))).toBe(
      "APPLY",
    );
    expect(reportedVerb(facts({ method: "DELETE", verb: "deletecollection", name: "" }))).toBe("DELETE");
    expect(reportedVerb(facts({ method: "OPTIONS" }))).toBe("other");
  });

  it("scopes one object or a create as resource, a namespace's collection as namespace, the rest as cluster", () => {
    expect(scopeOf({ verb: "get", namespace: "default", name: "web" })).toBe("resource");
    expect(scopeOf({ verb: "create", namespace: "default", name: "" })).toBe("resource");
    expect(scopeOf({ verb: "list", namespace: "default", name: "" })).toBe("namespace");
    expect(scopeOf({ verb: "list", namespace: "", name: "" })).toBe("cluster");
  });

  it("labels dry runs All, nothing, or invalid", () => {
    expect(dryRunLabel([])).toBe("");
    expect(dryRunLabel(["All", "All"])).toBe("All");
    expect(dryRunLabel(["Some"])).toBe("invalid");
  });

  it("never carries the object's name or namespace", () => {
    const labels = requestLabels(facts({ name: "secret-name", namespace: "team-a" }));
    expect(Object.values(labels)).not.toContain("secret-name");
    expect(Object.values(labels)).not.toContain("team-a");
  });
});

describe("PeakCount", () => {
  it("reports the peak of the last second, then forgets it", () => {
    let now = 0;
    const peak = new PeakCount(() => now);
    peak.add(1);
    peak.add(1);
    peak.add(-1);
    expect(peak.value()).toBe(2);
    now = 1500;
    expect(peak.value()).toBe(2);
    now = 3100;
    expect(peak.value()).toBe(1);
    peak.add(-1);
    now = 5000;
    expect(peak.value()).toBe(0);
  });
});

describe("ApiserverMetrics", () => {
  it("exposes requests with Kubernetes' buckets, storage figures and process metrics", async () => {
    const metrics = new ApiserverMetrics({
      storage: async () => ({
        objects: [
          { group: "apps", resource: "deployments", count: 3 },
          { group: "", resource: "pods", count: 2 },
        ],
        sizeBytes: 4096,
        clusterId: "db1",
      }),
    });
    metrics.observe(metrics.series(facts({ method: "POST", verb: "create", name: "" })), 201, 0.003);
    const text = await metrics.expose();
    expect(text).toContain(
      'apiserver_request_total{verb="POST",dry_run="",group="apps",version="v1",resource="deployments",subresource="",scope="resource",component="apiserver",code="201"} 1',
    );
    expect(text).toMatch(/apiserver_request_duration_seconds_bucket\{le="0.005",verb="POST".*\} 1/);
    expect(text).toMatch(/apiserver_request_duration_seconds_bucket\{le="60",verb="POST".*\} 1/);
    expect(text).toContain('apiserver_storage_objects{resource="deployments.apps"} 3');
    expect(text).toContain('apiserver_storage_objects{resource="pods"} 2');
    expect(text).toContain('apiserver_resource_objects{group="",resource="pods"} 2');
    expect(text).toContain('apiserver_storage_size_bytes{storage_cluster_id="db1"} 4096');
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text).not.toContain("orch_event_relay");
  });

  it("reports the relay's lag and what it published when there is a relay", async () => {
    let stats: RelayStats = {
      currentRevision: 10,
      publishedRevision: 7,
      publishedEvents: 5,
      oldestPendingCommittedAt: 1_000,
      connected: true,
    };
    const metrics = new ApiserverMetrics({ relay: async () => stats, now: () => 3_500 });
    let text = await metrics.expose();
    expect(text).toMatch(/^orch_event_relay_lag_revisions 3$/m);
    expect(text).toMatch(/^orch_event_relay_lag_seconds 2.5$/m);
    expect(text).toMatch(/^orch_event_relay_published_events_total 5$/m);
    expect(text).toMatch(/^orch_event_relay_connected 1$/m);
    stats = {
      currentRevision: 10,
      publishedRevision: 10,
      publishedEvents: 8,
      oldestPendingCommittedAt: undefined as unknown as number,
      connected: true,
    };
    text = await metrics.expose();
    expect(text).toMatch(/^orch_event_relay_lag_revisions 0$/m);
    expect(text).toMatch(/^orch_event_relay_lag_seconds 0$/m);
    expect(text).toMatch(/^orch_event_relay_published_events_total 8$/m);
  });
});
