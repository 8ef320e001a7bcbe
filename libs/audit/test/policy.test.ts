import { describe, expect, it } from "vitest";
import { PolicyChecker, type RequestAttributes, parsePolicy } from "../src/index.js";

const policyYaml = (rules: string, top = "") => `apiVersion: audit.k8s.io/v1
kind: Policy
${top}rules:
${rules}`;

const checker = (rules: string, top = "") => new PolicyChecker(parsePolicy(policyYaml(rules, top)));

const alice = { username: "alice", groups: ["dev", "system:authenticated"] };

function resource(over: Partial<Extract<RequestAttributes, { resourceRequest: true }>> = {}): RequestAttributes {
  return {
    user: alice,
    verb: "get",
    resourceRequest: true,
    namespace: "default",
    apiGroup: "",
    resource: "pods",
    subresource: "",
    name: "web",
    ...over,
  };
}

const path = (p: string, verb = "get"): RequestAttributes => ({ user: alice, verb, resourceRequest: false, path: p });

describe("parsePolicy", () => {
  it("reads YAML and JSON, with Kubernetes' defaults for what is left out", () => {
    const fromYaml = parsePolicy(policyYaml("- level: Metadata\n"));
    const fromJson = parsePolicy(JSON.stringify({ apiVersion: "audit.k8s.io/v1", kind: "Policy", rules: [{ level: "Metadata" }] }));
    expect(fromJson).toEqual(fromYaml);
    expect(fromYaml).toMatchObject({ omitStages: [], omitManagedFields: false });
    expect(fromYaml.rules[0]).toMatchObject({ level: "Metadata", users: [], resources: [], omitStages: [] });
    expect(fromYaml.rules[0]?.omitManagedFields).toBeUndefined();
  });

  it.each([
    ["not YAML", "rules: [", /^failed decoding: /],
    ["no kind", "apiVersion: audit.k8s.io/v1\nrules: [{level: None}]", /^failed decoding: Object 'Kind' is missing$/],
    ["another version", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]", /unknown group version field .*v1beta1/],
    ["another kind", "apiVersion: audit.k8s.io/v1\nkind: Event\nrules: [{level: None}]", /unknown group version field/],
    ["no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\n", /^loaded illegal policy with 0 rules$/],
    ["a field of the wrong type", policyYaml("- level: None\n  users: alice\n"), /^failed decoding: rules\.0\.users: /],
  ])("refuses %s", (_what, text, message) => {
    expect(() => parsePolicy(text)).toThrow(message);
  });

  it.each([
    [
      "- level: Verbose\n",
      'rules[0].level: Unsupported value: "Verbose": supported values: "None", "Metadata", "Request", "RequestResponse"',
    ],
    ["- users: [alice]\n", "rules[0].level: Required value"],
    [
      "- level: None\n  omitStages: [Started]\n",
      'rules[0].omitStages[0]: Invalid value: "Started": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
    [
      "- level: None\n  nonResourceURLs: [healthz]\n",
      `rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character`,
    ],
    [
      "- level: None\n  nonResourceURLs: ['/a*/b']\n",
      `rules[0].nonResourceURLs[0]: Invalid value: "/a*/b": non-resource URL wildcards '*' must be the final character of the rule`,
    ],
    [
      "- level: None\n  nonResourceURLs: [/metrics]\n  namespaces: [default]\n",
      'rules[0].nonResourceURLs: Invalid value: ["/metrics"]: rules cannot apply to both regular resources and non-resource URLs',
    ],
    [
      "- level: None\n  resources: [{group: '', resourceNames: [x]}]\n",
      'rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one resource',
    ],
    [
      "- level: None\n  resources: [{group: apps/v1}]\n",
      'rules[0].resources.group: Invalid value: "apps/v1": a lowercase RFC 1123 subdomain',
    ],
  ])("names what is wrong in a rule: %s", (rules, message) => {
    expect(() => parsePolicy(policyYaml(rules))).toThrow(message);
  });

  it("refuses an unknown stage in the policy's own omitStages", () => {
    expect(() => parsePolicy(policyYaml("- level: None\n", "omitStages: [Nope]\n"))).toThrow('omitStages[0]: Invalid value: "Nope"');
  });

  it("reports every error at once, as Kubernetes' aggregate does", () => {
    expect(() => parsePolicy(policyYaml("- level: Loud\n- level: None\n  omitStages: [x]\n"))).toThrow(
      /^\[rules\[0\]\.level: Unsupported value: "Loud".*, rules\[1\]\.omitStages\[0\]: Invalid value: "x".*\]$/,
    );
  });
});

describe("PolicyChecker", () => {
  it("takes the first rule that matches, and None when none does", () => {
    const c = checker(
      "- level: RequestResponse\n  users: [bob]\n- level: Request\n  verbs: [get]\n- level: Metadata\n  verbs: [get, list]\n",
    );
    expect(c.evaluate(resource()).level).toBe("Request");
    expect(c.evaluate(resource({ verb: "list" })).level).toBe("Metadata");
    expect(c.evaluate(resource({ verb: "delete" })).level).toBe("None");
    expect(c.evaluate({ ...resource(), user: { username: "bob", groups: [] } }).level).toBe("RequestResponse");
  });

  it("matches users and groups by the authenticated user; a request without one matches neither", () => {
    const c = checker("- level: Metadata\n  userGroups: [dev]\n- level: Request\n  users: ['']\n- level: RequestResponse\n");
    expect(c.evaluate(resource()).level).toBe("Metadata");
    expect(c.evaluate({ ...resource(), user: { username: "carol", groups: ["ops"] } }).level).toBe("RequestResponse");
    const { user: _user, ...anonymous } = resource();
    expect(c.evaluate(anonymous as RequestAttributes).level).toBe("RequestResponse");
  });

  it("matches namespaces, '' being the cluster scope, and only resource requests", () => {
    const c = checker("- level: Metadata\n  namespaces: ['', kube-system]\n");
    expect(c.evaluate(resource({ namespace: "kube-system" })).level).toBe("Metadata");
    expect(c.evaluate(resource({ namespace: "", resource: "nodes" })).level).toBe("Metadata");
    expect(c.evaluate(resource()).level).toBe("None");
    expect(c.evaluate(path("/version")).level).toBe("None");
  });

  it.each([
    ["pods", "pods", "", true],
    ["pods", "pods", "log", false],
    ["pods/log", "pods", "log", true],
    ["pods/log", "pods", "", false],
    ["*", "pods", "log", true],
    ["*/log", "pods", "log", true],
    ["*/log", "pods", "", false],
    ["*/scale", "pods", "log", false],
    ["pods/*", "pods", "status", true],
    // Kubernetes' checker lets `pods/*` match pods themselves too.
    ["pods/*", "pods", "", true],
    ["pods/*", "services", "status", false],
  ])("resource spec %j against %s/%s: %s", (spec, resourceName, subresource, matches) => {
    const c = checker(`- level: Metadata\n  resources: [{group: '', resources: ['${spec}']}]\n`);
    expect(c.evaluate(resource({ resource: resourceName, subresource })).level).toBe(matches ? "Metadata" : "None");
  });

  it("matches the group exactly, all of a group's resources when none are listed, and resourceNames", () => {
    const c = checker(
      "- level: Metadata\n  resources: [{group: apps}]\n- level: Request\n  resources: [{group: '', resources: [configmaps], resourceNames: [settings]}]\n",
    );
    expect(c.evaluate(resource({ apiGroup: "apps", resource: "deployments", subresource: "scale" })).level).toBe("Metadata");
    expect(c.evaluate(resource({ apiGroup: "batch", resource: "jobs" })).level).toBe("None");
    expect(c.evaluate(resource({ resource: "configmaps", name: "settings" })).level).toBe("Request");
    expect(c.evaluate(resource({ resource: "configmaps", name: "other" })).level).toBe("None");
    expect(c.evaluate(resource({ resource: "configmaps", name: "" })).level).toBe("None");
  });

  it("matches non-resource URLs exactly, by a trailing '*', or all with '*'", () => {
    const c = checker("- level: Metadata\n  nonResourceURLs: [/healthz*, /version]\n- level: Request\n  nonResourceURLs: ['*']\n");
    expect(c.evaluate(path("/healthz")).level).toBe("Metadata");
    expect(c.evaluate(path("/healthz/etcd")).level).toBe("Metadata");
    expect(c.evaluate(path("/version")).level).toBe("Metadata");
    expect(c.evaluate(path("/version/x")).level).toBe("Request");
    expect(c.evaluate(resource()).level).toBe("None");
  });

  it("omits the union of the policy's and the rule's stages, also when no rule matches", () => {
    const c = checker("- level: Metadata\n  verbs: [get]\n  omitStages: [ResponseStarted]\n", "omitStages: [RequestReceived]\n");
    expect([...c.evaluate(resource()).omitStages].sort()).toEqual(["RequestReceived", "ResponseStarted"]);
    expect(c.evaluate(resource({ verb: "list" }))).toEqual({ level: "None", omitStages: ["RequestReceived"], omitManagedFields: false });
  });

  it("takes omitManagedFields from the rule when it says, else from the policy", () => {
    const c = checker("- level: Request\n  verbs: [get]\n  omitManagedFields: false\n- level: Request\n", "omitManagedFields: true\n");
    expect(c.evaluate(resource()).omitManagedFields).toBe(false);
    expect(c.evaluate(resource({ verb: "list" })).omitManagedFields).toBe(true);
  });
});
