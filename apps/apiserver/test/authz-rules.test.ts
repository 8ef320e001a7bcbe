// RBAC rule matching and escalation coverage, case by case as Kubernetes' rule and comparator tests
// have them (plugin/pkg/auth/authorizer/rbac/rbac_test.go, pkg/registry/rbac/validation/policy_comparator_test.go).
import type { PolicyRule } from "@orch/api";
import { type AuthorizationAttributes, compactString, resourceAttributes, uncovered } from "@orch/registry";
import { describe, expect, it } from "vitest";
import { ruleAllows } from "../src/authz/rules.js";

const user = { username: "alice", groups: ["system:authenticated"] };
const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const request = (
  verb: string,
  apiGroup: string,
  resource: string,
  extra: { subresource?: string; name?: string; namespace?: string } = {},
) => resourceAttributes(user, verb, { apiGroup, resource, ...extra });
const path = (verb: string, p: string): AuthorizationAttributes => ({ user, verb, resourceRequest: false, path: p });

describe("rule matching", () => {
  it("matches verbs, groups and resources exactly or by *", () => {
    const r = rule(["get", "list"], [""], ["pods"]);
    expect(ruleAllows(request("get", "", "pods"), r)).toBe(true);
    expect(ruleAllows(request("list", "", "pods"), r)).toBe(true);
    expect(ruleAllows(request("delete", "", "pods"), r)).toBe(false);
    expect(ruleAllows(request("get", "apps", "pods"), r)).toBe(false);
    expect(ruleAllows(request("get", "", "secrets"), r)).toBe(false);
    expect(ruleAllows(request("delete", "apps", "deployments"), rule(["*"], ["*"], ["*"]))).toBe(true);
    expect(ruleAllows(request("get", "apps", "deployments"), rule(["get"], ["*"], ["deployments"]))).toBe(true);
  });

  it("treats a subresource as resource/subresource, and */subresource as that subresource of anything", () => {
    const status = request("update", "apps", "deployments", { subresource: "status" });
    expect(ruleAllows(status, rule(["update"], ["apps"], ["deployments"]))).toBe(false);
    expect(ruleAllows(status, rule(["update"], ["apps"], ["deployments/status"]))).toBe(true);
    expect(ruleAllows(status, rule(["update"], ["apps"], ["*/status"]))).toBe(true);
    expect(ruleAllows(status, rule(["update"], ["apps"], ["*/scale"]))).toBe(false);
    // `*` covers subresources too.
    expect(ruleAllows(status, rule(["update"], ["apps"], ["*"]))).toBe(true);
    // `*/status` says nothing about the main resource.
    expect(ruleAllows(request("update", "apps", "deployments"), rule(["update"], ["apps"], ["*/status"]))).toBe(false);
  });

  it("limits a rule with resourceNames to those names; a request without a name does not match it", () => {
    const r = rule(["get", "list"], [""], ["secrets"], ["token"]);
    expect(ruleAllows(request("get", "", "secrets", { name: "token" }), r)).toBe(true);
    expect(ruleAllows(request("get", "", "secrets", { name: "other" }), r)).toBe(false);
    expect(ruleAllows(request("list", "", "secrets"), r)).toBe(false);
    expect(ruleAllows(request("create", "", "secrets"), rule(["create"], [""], ["secrets"], ["x"]))).toBe(false);
  });

  it("matches non-resource URLs exactly, by a trailing *, or by *", () => {
    const r: PolicyRule = { verbs: ["get"], nonResourceURLs: ["/healthz", "/apis/*"] };
    expect(ruleAllows(path("get", "/healthz"), r)).toBe(true);
    expect(ruleAllows(path("get", "/healthz/ping"), r)).toBe(false);
    expect(ruleAllows(path("get", "/apis/apps/v1"), r)).toBe(true);
    expect(ruleAllows(path("get", "/apis"), r)).toBe(false);
    expect(ruleAllows(path("post", "/healthz"), r)).toBe(false);
    expect(ruleAllows(path("get", "/anything"), { verbs: ["*"], nonResourceURLs: ["*"] })).toBe(true);
    // A resource rule never grants a path, nor a path rule a resource.
    expect(ruleAllows(path("get", "/healthz"), rule(["*"], ["*"], ["*"]))).toBe(false);
    expect(ruleAllows(request("get", "", "pods"), { verbs: ["*"], nonResourceURLs: ["*"] })).toBe(false);
  });
});

describe("escalation coverage", () => {
  it("covers a rule held by the owner, piece by piece across owner rules", () => {
    const owner = [rule(["get", "list"], [""], ["pods"]), rule(["get"], ["apps"], ["deployments"])];
    expect(uncovered(owner, [rule(["get"], ["", "apps"], ["pods"])])).toEqual([rule(["get"], ["apps"], ["pods"])]);
    expect(uncovered(owner, [rule(["list", "get"], [""], ["pods"])])).toEqual([]);
    expect(uncovered([rule(["*"], ["*"], ["*"])], [rule(["delete"], ["x"], ["y"], ["z"])])).toEqual([]);
  });

  it("needs resourceNames held without names or with the same names", () => {
    const named = [rule(["get"], [""], ["secrets"], ["a", "b"])];
    expect(uncovered(named, [rule(["get"], [""], ["secrets"], ["a"])])).toEqual([]);
    expect(uncovered(named, [rule(["get"], [""], ["secrets"])])).toHaveLength(1);
    expect(uncovered(named, [rule(["get"], [""], ["secrets"], ["c"])])).toHaveLength(1);
  });

  it("covers non-resource URLs by prefix", () => {
    const owner: PolicyRule[] = [{ verbs: ["get"], nonResourceURLs: ["/logs/*"] }];
    expect(uncovered(owner, [{ verbs: ["get"], nonResourceURLs: ["/logs/a", "/logs/*"] }])).toEqual([]);
    expect(uncovered(owner, [{ verbs: ["get"], nonResourceURLs: ["/metrics"] }])).toEqual([
      { verbs: ["get"], nonResourceURLs: ["/metrics"] },
    ]);
  });

  it("prints a rule as Kubernetes' escalation message does", () => {
    expect(compactString(rule(["get", "list"], [""], ["pods"]))).toBe('{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}');
    expect(compactString({ verbs: ["get"], nonResourceURLs: ["/x"] })).toBe('{NonResourceURLs:["/x"], Verbs:["get"]}');
    expect(compactString(rule(["get"], ["apps"], ["deployments"], ["web"]))).toBe(
      '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}',
    );
  });
});
