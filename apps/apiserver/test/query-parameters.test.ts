// Query parameters converted as Kubernetes' ParameterCodec converts them: booleans are false only for
// "0" and any case of "false" (so the Python client's `watch=True` is a watch), int64s go through
// strconv.ParseInt with its error text as a 400, `pretty` through strconv.ParseBool, `timeout` through
// time.ParseDuration; a DELETE reads its options from the body or the query, never both.
import { describe, expect, it } from "vitest";
import { parseGoDuration } from "../src/http/query.js";
import { deployment, freshNamespace, paths, secret, useTestServer } from "./harness.js";

const t = useTestServer();

/** A namespace holding one Secret, `s`. */
async function namespaceWithSecret(): Promise<string> {
  const ns = await freshNamespace(t.api);
  expect((await t.api.post(paths.secrets(ns), secret("s"))).status).toBe(201);
  return ns;
}

/** The lines of a watch response (a negative timeoutSeconds ends the watch once what is queued is out). */
const watchLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { type: string; object: { kind: string; metadata: Record<string, unknown> } });

describe("booleans (Convert_Slice_string_To_bool)", () => {
  it.each(["true", "True", "TRUE", "t", "T", "1", "yes", "on", ""])("watch=%j is a watch", async (value) => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}?watch=${value}&timeoutSeconds=-1`);
    expect(r.status).toBe(200);
    const events = watchLines(r.text);
    expect(events.map((e) => [e.type, e.object.kind])).toEqual([["ADDED", "Secret"]]);
  });

  it.each(["false", "False", "FALSE", "fAlSe", "0"])("watch=%j is a list", async (value) => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}?watch=${value}`);
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe("SecretList");
  });

  it("only the first of repeated values counts", async () => {
    const ns = await namespaceWithSecret();
    expect((await t.api.get(`${paths.secrets(ns)}?watch=false&watch=true`)).body.kind).toBe("SecretList");
  });

  it("sendInitialEvents=False is given (a pointer), so a list refuses it like sendInitialEvents=True", async () => {
    const ns = await namespaceWithSecret();
    for (const value of ["False", "True", "x"]) {
      const r = await t.api.get(`${paths.secrets(ns)}?sendInitialEvents=${value}`);
      expect(r.status).toBe(422);
      expect(r.body.message).toContain("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
    }
  });

  it("allowWatchBookmarks=yes and sendInitialEvents=T end the initial events with a bookmark", async () => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(
      `${paths.secrets(ns)}?watch=1&sendInitialEvents=T&allowWatchBookmarks=yes&resourceVersionMatch=NotOlderThan&timeoutSeconds=-1`,
    );
    expect(r.status).toBe(200);
    const events = watchLines(r.text);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "BOOKMARK"]);
    expect(events[1]?.object.metadata.annotations).toEqual({ "orch.io/initial-events-end": "true" });
  });

  it("force=False on a non-apply patch is given, so it is forbidden", async () => {
    const ns = await namespaceWithSecret();
    const r = await t.api.patch(`${paths.secrets(ns)}/s?force=False`, { metadata: { labels: { a: "b" } } });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  });

  it("force=yes forces an apply over another manager's field", async () => {
    const ns = await namespaceWithSecret();
    const path = `${paths.secrets(ns)}/s`;
    const config = (value: string) => ({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", labels: { owned: value } } });
    const apply = (query: string, value: string) => t.api.patch(`${path}?${query}`, config(value), "application/apply-patch+yaml");
    expect((await apply("fieldManager=first", "one")).status).toBe(200);
    expect((await apply("fieldManager=second&force=0", "two")).status).toBe(409);
    const forced = await apply("fieldManager=second&force=yes", "two");
    expect(forced.status).toBe(200);
    expect(forced.body.metadata.labels.owned).toBe("two");
  });

  it("orphanDependents=T orphans; orphanDependents=False with a propagationPolicy is a conflict of options", async () => {
    const ns = await freshNamespace(t.api);
    expect((await t.api.post(paths.deployments(ns), deployment("web"))).status).toBe(201);
    const orphaned = await t.api.delete(`${paths.deployments(ns)}/web?orphanDependents=T&dryRun=All`);
    expect(orphaned.status).toBe(200);
    expect(orphaned.body.metadata.finalizers).toEqual(["orphan"]);
    const both = await t.api.delete(`${paths.deployments(ns)}/web?orphanDependents=False&propagationPolicy=Background`);
    expect(both.status).toBe(422);
    expect(both.body.message).toContain("orphanDependents and deletionPropagation cannot be both set");
  });
});

describe("integers (strconv.ParseInt)", () => {
  it.each([
    ["limit", "abc", "invalid syntax"],
    ["limit", "", "invalid syntax"],
    ["limit", "1.5", "invalid syntax"],
    ["limit", " 1", "invalid syntax"],
    ["limit", "1_000", "invalid syntax"],
    ["limit", "9223372036854775808", "value out of range"],
    ["timeoutSeconds", "ten", "invalid syntax"],
  ])("a list with %s=%j is a 400: %s", async (name, value, reason) => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}?${name}=${encodeURIComponent(value)}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
    expect(r.body.message).toBe(`strconv.ParseInt: parsing ${JSON.stringify(value)}: ${reason}`);
  });

  it("a watch parses limit too", async () => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}?watch=true&limit=x`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('strconv.ParseInt: parsing "x": invalid syntax');
  });

  it("a sign is allowed: limit=+1 pages by one", async () => {
    const ns = await namespaceWithSecret();
    expect((await t.api.post(paths.secrets(ns), secret("s2"))).status).toBe(201);
    const r = await t.api.get(`${paths.secrets(ns)}?limit=%2B1`);
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(1);
    expect(r.body.metadata.continue).toBeTruthy();
  });

  it("gracePeriodSeconds on a DELETE is parsed the same way", async () => {
    const ns = await namespaceWithSecret();
    const r = await t.api.delete(`${paths.secrets(ns)}/s?gracePeriodSeconds=soon`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('strconv.ParseInt: parsing "soon": invalid syntax');
  });
});

describe("DELETE options come from the body or the query, not both", () => {
  it("with a body, the query's options are not read", async () => {
    const ns = await namespaceWithSecret();
    const r = await t.api.delete(`${paths.secrets(ns)}/s?gracePeriodSeconds=soon&dryRun=x`, {
      kind: "DeleteOptions",
      apiVersion: "v1",
    });
    expect(r.status).toBe(200);
    expect((await t.api.get(`${paths.secrets(ns)}/s`)).status).toBe(404);
  });

  it("without a body, the query's dryRun keeps the object", async () => {
    const ns = await namespaceWithSecret();
    expect((await t.api.delete(`${paths.secrets(ns)}/s?dryRun=All`)).status).toBe(200);
    expect((await t.api.get(`${paths.secrets(ns)}/s`)).status).toBe(200);
  });
});

describe("pretty (strconv.ParseBool, then the user agent)", () => {
  const indented = (text: string) => text.startsWith("{\n  ");
  it.each([
    ["pretty=true", undefined, true],
    ["pretty=T", undefined, true],
    ["pretty=1", undefined, true],
    ["pretty=yes", undefined, false],
    ["pretty=0", "curl/8.5.0", false],
    ["", "curl/8.5.0", true],
    ["", "Wget/1.21", true],
    ["", "Mozilla/5.0 (X11)", true],
    ["pretty=", "curl/8.5.0", true],
    ["", "kubectl/v1.32.0", false],
    ["", undefined, false],
  ])("%j with user agent %j: indented %s", async (query, agent, expected) => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}/s?${query}`, agent ? { headers: { "User-Agent": agent } } : {});
    expect(r.status).toBe(200);
    expect(indented(r.text)).toBe(expected);
  });
});

describe("timeout (time.ParseDuration)", () => {
  it.each([
    ["abc", 'time: invalid duration "abc"'],
    ["10", 'time: missing unit in duration "10"'],
    ["10x", 'time: unknown unit "x" in duration "10x"'],
    [".s", 'time: invalid duration ".s"'],
  ])("timeout=%j is a 400", async (value, reason) => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}?timeout=${value}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`invalid timeout specified in the request URL - ${reason}`);
  });

  it.each(["32s", "1m30s", "1.5h", "0", "-5s", "250ms"])("timeout=%j is accepted", async (value) => {
    const ns = await namespaceWithSecret();
    expect((await t.api.get(`${paths.secrets(ns)}/s?timeout=${encodeURIComponent(value)}`)).status).toBe(200);
  });

  it("durations in Go's units, as nanoseconds", () => {
    expect(parseGoDuration("1h2m3.5s")).toBe(3723.5e9);
    expect(parseGoDuration("1\u00b5s")).toBe(1e3);
    expect(parseGoDuration("1\u03bcs")).toBe(1e3);
    expect(parseGoDuration("-1.5ms")).toBe(-1.5e6);
    expect(parseGoDuration("+.5s")).toBe(0.5e9);
    expect(parseGoDuration("-0")).toBe(0);
    expect(parseGoDuration("")).toBe('time: invalid duration ""');
    expect(parseGoDuration("3000000h")).toBe('time: invalid duration "3000000h"');
  });

  it("a watch ignores timeout, as a long-running request", async () => {
    const ns = await namespaceWithSecret();
    const r = await t.api.get(`${paths.secrets(ns)}?watch=true&timeout=abc&timeoutSeconds=-1`);
    expect(r.status).toBe(200);
  });
});
