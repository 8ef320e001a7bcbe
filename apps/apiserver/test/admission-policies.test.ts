// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding against the real apiserver (audit on,
// so that Audit actions and audit annotations can be read back): the kinds' validation and columns,
// and enforcement — Deny with Kubernetes' status and message, Warn, Audit, params from ConfigMaps,
// messageExpression, matchResources, matchConditions, variables, failurePolicy.
import type { AuditEvent } from "@orch/audit";
import { eventually } from "@orch/testing";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer({ tokens: ["bob-token,bob,bob-uid"] });
const GROUP = "admissionregistration.orch.io";
const VAP = `/apis/${GROUP}/v1/validatingadmissionpolicies`;
const VAPB = `/apis/${GROUP}/v1/validatingadmissionpolicybindings`;
let logPath = "";

beforeAll(async () => {
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

const deploymentRule = { operations: ["CREATE", "UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"] };

/** Only writes in `namespace`: tests do not see each other's policies. */
const inNamespace = (namespace: string) => ({ matchLabels: { "kubernetes.io/metadata.name": namespace } });

async function create(path: string, kind: string, name: string, spec: object): Promise<() => Promise<void>> {
  const r = await t.api.post(path, { apiVersion: `${GROUP}/v1`, kind, metadata: { name }, spec });
  expect(r.status, r.text).toBe(201);
  return async () => {
    expect((await t.api.delete(`${path}/${name}`)).status).toBe(200);
  };
}

/** A policy and its binding; returns what removes both. */
async function bind(name: string, policy: object, binding: object): Promise<() => Promise<void>> {
  const removePolicy = await create(VAP, "ValidatingAdmissionPolicy", name, policy);
  const removeBinding = await create(VAPB, "ValidatingAdmissionPolicyBinding", `${name}-binding`, { policyName: name, ...binding });
  return async () => {
    await removeBinding();
    await removePolicy();
  };
}

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "c", image: "nginx" } as { name: string; image: string; securityContext?: object }] },
    },
  },
});

const replicasPolicy = (namespace: string, validation: object = {}) => ({
  matchConstraints: { resourceRules: [deploymentRule], namespaceSelector: inNamespace(namespace) },
  validations: [{ expression: "object.spec.replicas <= 5", message: "replicas must be at most 5", ...validation }],
});

describe("the kinds: Kubernetes' validation, defaults and columns", () => {
  it("defaults failurePolicy, matchPolicy, selectors and rule scope", async () => {
    const r = await t.api.post(VAP, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "defaults" },
      spec: { matchConstraints: { resourceRules: [deploymentRule] }, validations: [{ expression: "true" }] },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.spec).toEqual({
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [{ ...deploymentRule, scope: "*" }],
        matchPolicy: "Equivalent",
        namespaceSelector: {},
        objectSelector: {},
      },
      validations: [{ expression: "true" }],
    });
    expect(r.body.metadata.generation).toBe(1);
    await t.api.delete(`${VAP}/defaults`);
  });

  it("refuses a policy as Kubernetes does, expressions that do not compile or have the wrong type included", async () => {
    const r = await t.api.post(VAP, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "bad" },
      spec: {
        failurePolicy: "Sometimes",
        paramKind: { apiVersion: "v1" },
        matchConstraints: { resourceRules: [], matchPolicy: "Fuzzy" },
        variables: [{ name: "1st", expression: "object.spec" }],
        validations: [
          { expression: "object.spec.replicas <=", reason: "Teapot" },
          { expression: "object.spec.paused", messageExpression: "object.metadata.name", message: "two\nlines" },
          { expression: "params.max > 1" },
        ],
        auditAnnotations: [{ key: "k", valueExpression: "1" }],
      },
    });
    expect(r.status, r.text).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    const causes = r.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
    expect(causes).toEqual([
      'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
      "spec.paramKind.kind: Required value",
      'spec.matchConstraints.matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
      "spec.matchConstraints.resourceRules: Required value",
      'spec.variables[0].name: Invalid value: "1st": name is not a valid CEL identifier',
      expect.stringMatching(
        /^spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <=": compilation failed: ERROR: <input>:1:\d+: Syntax error: /,
      ),
      'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"',
      'spec.validations[1].expression: Invalid value: "object.spec.paused": must evaluate to bool but got dyn',
      'spec.validations[1].messageExpression: Invalid value: "object.metadata.name": must evaluate to string but got dyn',
      'spec.validations[1].message: Invalid value: "two\\nlines": message must not contain line breaks',
      'spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to one of [string null_type] but got int',
    ]);
    expect((await t.api.get(`${VAP}/bad`)).status).toBe(404);
  });

  it("an expression that uses params without a paramKind does not compile", async () => {
    const r = await t.api.post(VAP, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "no-params" },
      spec: { matchConstraints: { resourceRules: [deploymentRule] }, validations: [{ expression: "object.spec.replicas <= params.max" }] },
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.validations[0].expression",
        message:
          "Invalid value: \"object.spec.replicas <= params.max\": compilation failed: ERROR: <input>:1:25: undeclared reference to 'params' (in container '')\n | object.spec.replicas <= params.max\n | ........................^",
      },
    ]);
  });

  it("refuses a binding as Kubernetes does: actions, paramRef, policy name", async () => {
    const r = await t.api.post(VAPB, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: "bad" },
      spec: {
        paramRef: { name: "p", selector: {} },
        validationActions: ["Deny", "Warn", "Deny", "Shout"],
      },
    });
    expect(r.status, r.text).toBe(422);
    const causes = r.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
    expect(causes).toEqual([
      "spec.policyName: Required value",
      "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
      "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
      "spec.paramRef.parameterNotFoundAction: Required value",
      'spec.validationActions[2]: Duplicate value: "Deny"',
      'spec.validationActions[3]: Unsupported value: "Shout": supported values: "Audit", "Deny", "Warn"',
      'spec.validationActions: Invalid value: ["Deny","Warn","Deny","Shout"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    ]);
    const none = await t.api.post(VAPB, {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: "none" },
      spec: { policyName: "p" },
    });
    expect(none.body.details.causes).toEqual([
      {
        reason: "FieldValueRequired",
        field: "spec.validationActions",
        message: "Required value: at least one validation action is required",
      },
    ]);
  });

  it("prints the columns kubectl shows: validations and paramKind; policy name and paramRef", async () => {
    const remove = await bind(
      "columns",
      {
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: { resourceRules: [deploymentRule], namespaceSelector: inNamespace("nowhere") },
        validations: [{ expression: "true" }, { expression: "true" }],
      },
      { paramRef: { name: "limits", namespace: "default", parameterNotFoundAction: "Allow" }, validationActions: ["Deny"] },
    );
    try {
      const table = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" };
      const policies = await t.api.get(`${VAP}/columns`, table);
      expect(policies.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Validations", "ParamKind", "Age"]);
      expect(policies.body.rows[0].cells.slice(0, 3)).toEqual(["columns", 2, "v1/ConfigMap"]);
      const bindings = await t.api.get(`${VAPB}/columns-binding`, table);
      expect(bindings.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "PolicyName", "ParamRef", "Age"]);
      expect(bindings.body.rows[0].cells.slice(0, 3)).toEqual(["columns-binding", "columns", "default/limits"]);
    } finally {
      await remove();
    }
  });

  it("type checking fills status: observedGeneration, and a warning for a field the matched kind does not have", async () => {
    const remove = await create(VAP, "ValidatingAdmissionPolicy", "typo", {
      matchConstraints: { resourceRules: [deploymentRule] },
      validations: [
        { expression: "object.spec.replicax <= 5", messageExpression: "'replicas: ' + string(object.spec.replicas)" },
        {
          expression:
            "object.metadata.labels.team == 'a' && has(object.spec.paused) && object.spec.template.spec.containers[0].image != ''",
        },
      ],
    });
    try {
      const status = await eventually("the policy's type checking", async () => {
        const r = await t.api.get(`${VAP}/typo`);
        return r.body.status?.observedGeneration === 1 && r.body.status;
      });
      expect(status).toEqual({
        observedGeneration: 1,
        typeChecking: {
          expressionWarnings: [
            {
              fieldRef: "spec.validations[0].expression",
              warning:
                "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicax'\n | object.spec.replicax <= 5\n | ...........^\n",
            },
          ],
        },
      });
      // Fixed: the next generation has no warning.
      expect((await t.api.patch(`${VAP}/typo`, { spec: { validations: [{ expression: "object.spec.replicas <= 5" }] } })).status).toBe(200);
      const fixed = await eventually("the new generation's type checking", async () => {
        const r = await t.api.get(`${VAP}/typo`);
        return r.body.status?.observedGeneration === 2 && r.body.status;
      });
      expect(fixed).toEqual({ observedGeneration: 2, typeChecking: {} });
    } finally {
      await remove();
    }
  });

  it("keeps status to the status subresource, and moves the generation with the spec only", async () => {
    const remove = await create(VAP, "ValidatingAdmissionPolicy", "status", {
      matchConstraints: { resourceRules: [deploymentRule] },
      validations: [{ expression: "true" }],
    });
    try {
      // The type-checking controller writes the first generation's status; then it leaves it be.
      await eventually("the policy's status", async () => (await t.api.get(`${VAP}/status`)).body.status?.observedGeneration === 1);
      const status = {
        observedGeneration: 1,
        typeChecking: { expressionWarnings: [{ fieldRef: "spec.validations[0].expression", warning: "w" }] },
      };
      const written = await t.api.patch(`${VAP}/status/status`, { status });
      expect(written.status, written.text).toBe(200);
      expect(written.body.status).toEqual(status);
      expect(written.body.metadata.generation).toBe(1);
      const bad = await t.api.patch(`${VAP}/status/status`, { status: { typeChecking: { expressionWarnings: [{ fieldRef: "x" }] } } });
      expect(bad.status).toBe(422);
      expect(bad.body.details.causes[0].field).toBe("status.typeChecking.expressionWarnings[0].warning");
      const changed = await t.api.patch(`${VAP}/status`, { spec: { validations: [{ expression: "false" }] }, status: {} });
      expect(changed.body.metadata.generation).toBe(2);
      expect(changed.body.status).toEqual(status);
    } finally {
      await remove();
    }
  });
});

describe("enforcement", () => {
  it("Deny refuses replicas > 5 with Kubernetes' status: 422 Invalid, the policy, binding and message", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind("replicas", replicasPolicy(ns), { validationActions: ["Deny"] });
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 6));
      expect(r.status).toBe(422);
      const message = "ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: replicas must be at most 5";
      expect(r.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `deployments.apps "web" is forbidden: ${message}`,
        reason: "Invalid",
        details: { name: "web", group: "apps", kind: "deployments", causes: [{ message }] },
        code: 422,
      });
      expect((await t.api.get(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).status).toBe(404);
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 5))).status).toBe(201);
      // Updates are validated too: a scale past the limit through a patch.
      const patched = await t.api.patch(`/apis/apps/v1/namespaces/${ns}/deployments/web`, { spec: { replicas: 9 } });
      expect(patched.status).toBe(422);
      expect(patched.body.message).toBe(`deployments.apps "web" is forbidden: ${message}`);
    } finally {
      await remove();
    }
  });

  it("has() tests a field of a list element, as Kubernetes' CEL does", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind(
      "has-indexed",
      replicasPolicy(ns, {
        expression: "has(object.spec.template.spec.containers[0].securityContext)",
        message: "the first container must set a securityContext",
      }),
      { validationActions: ["Deny"] },
    );
    try {
      const refused = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("bare", 1));
      expect(refused.status).toBe(422);
      expect(refused.body.message).toBe(
        `deployments.apps "bare" is forbidden: ValidatingAdmissionPolicy 'has-indexed' with binding 'has-indexed-binding' denied request: the first container must set a securityContext`,
      );
      const secured = deployment("secured", 1);
      secured.spec.template.spec.containers[0]!.securityContext = { runAsNonRoot: true };
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, secured)).status).toBe(201);
    } finally {
      await remove();
    }
  });

  it("compiles as CRD rules do: optional entries and raw bytes literals in matchConditions and validations", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind(
      "literals",
      {
        ...replicasPolicy(ns, {
          expression: "{?'tier': object.metadata.?labels.?tier}.tier.matches(string(br'^[a-z]+\\d?$'))",
          message: "a tier is letters and at most one digit",
        }),
        matchConditions: [{ name: "tiered", expression: "[?object.metadata.?labels.?tier].size() == 1" }],
      },
      { validationActions: ["Deny"] },
    );
    try {
      const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
      expect((await t.api.post(path, deployment("untiered", 1))).status).toBe(201);
      expect((await t.api.post(path, deployment("tiered", 1, { tier: "web2" }))).status).toBe(201);
      const refused = await t.api.post(path, deployment("shouty", 1, { tier: "WEB" }));
      expect(refused.status).toBe(422);
      expect(refused.body.message).toBe(
        `deployments.apps "shouty" is forbidden: ValidatingAdmissionPolicy 'literals' with binding 'literals-binding' denied request: a tier is letters and at most one digit`,
      );
    } finally {
      await remove();
    }
  });

  it("a validation's reason sets the code; without message, the expression is the message", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind("reason", replicasPolicy(ns, { reason: "Forbidden", message: undefined }), { validationActions: ["Deny"] });
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 6));
      expect(r.status).toBe(403);
      expect(r.body.reason).toBe("Forbidden");
      expect(r.body.message).toBe(
        `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'reason' with binding 'reason-binding' denied request: failed expression: object.spec.replicas <= 5`,
      );
    } finally {
      await remove();
    }
  });

  it("messageExpression writes the message from the object", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind(
      "message",
      replicasPolicy(ns, {
        messageExpression: "'replicas ' + string(object.spec.replicas) + ' of ' + object.metadata.name + ' is more than 5'",
      }),
      { validationActions: ["Deny"] },
    );
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("api", 7));
      expect(r.body.message).toBe(
        `deployments.apps "api" is forbidden: ValidatingAdmissionPolicy 'message' with binding 'message-binding' denied request: replicas 7 of api is more than 5`,
      );
    } finally {
      await remove();
    }
  });

  it("Warn lets the write through with a Warning header; Audit records the failure in the audit event", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind("soft", replicasPolicy(ns), { validationActions: ["Warn", "Audit"] });
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 8));
      expect(r.status, r.text).toBe(201);
      expect(r.warnings).toEqual([
        "Validation failed for ValidatingAdmissionPolicy 'soft' with binding 'soft-binding': replicas must be at most 5",
      ]);
      const annotations = await annotationsOf(String(r.headers["audit-id"]));
      expect(JSON.parse(annotations["validation.policy.admission.k8s.io/validation_failure"]!)).toEqual([
        {
          message: "replicas must be at most 5",
          policy: "soft",
          binding: "soft-binding",
          expressionIndex: 0,
          validationActions: ["Warn", "Audit"],
        },
      ]);
    } finally {
      await remove();
    }
  });

  it("params from a ConfigMap: by name (in the request's namespace), by selector, and when none is found", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const limits = (name: string, max: string, labels: Record<string, string> = {}) =>
      t.api.post(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, labels },
        data: { maxReplicas: max },
      });
    expect((await limits("limits", "3")).status).toBe(201);
    const policy = {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      matchConstraints: { resourceRules: [deploymentRule], namespaceSelector: inNamespace(ns) },
      validations: [
        {
          expression: "object.spec.replicas <= int(params.data.maxReplicas)",
          messageExpression: "'at most ' + params.data.maxReplicas + ' replicas (' + params.metadata.name + ')'",
        },
      ],
    };
    const byName = await bind("params", policy, {
      paramRef: { name: "limits", parameterNotFoundAction: "Deny" },
      validationActions: ["Deny"],
    });
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 4));
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(
        `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'params' with binding 'params-binding' denied request: at most 3 replicas (limits)`,
      );
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 3))).status).toBe(201);
      // The param gone: parameterNotFoundAction Deny refuses, as a configuration error under failurePolicy Fail.
      expect((await t.api.delete(`/api/v1/namespaces/${ns}/configmaps/limits`)).status).toBe(200);
      const missing = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("other", 1));
      expect(missing.status).toBe(422);
      expect(missing.body.message).toBe(
        `deployments.apps "other" is forbidden: ValidatingAdmissionPolicy 'params' with binding 'params-binding' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
      );
      // Allow: nothing to validate with, the write goes through.
      expect((await t.api.patch(`${VAPB}/params-binding`, { spec: { paramRef: { parameterNotFoundAction: "Allow" } } })).status).toBe(200);
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("other", 9))).status).toBe(201);
      // By selector: every matching ConfigMap is a param, each validates.
      expect((await limits("small", "2", { limits: "yes" })).status).toBe(201);
      expect((await limits("large", "10", { limits: "yes" })).status).toBe(201);
      const selected = await t.api.patch(`${VAPB}/params-binding`, {
        spec: { paramRef: { name: null, selector: { matchLabels: { limits: "yes" } }, parameterNotFoundAction: "Deny" } },
      });
      expect(selected.status, selected.text).toBe(200);
      const three = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("three", 3));
      expect(three.status).toBe(422);
      expect(three.body.message).toContain("denied request: at most 2 replicas (small)");
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("two", 2))).status).toBe(201);
    } finally {
      await byName();
    }
  });

  it("a binding's matchResources narrows the policy: namespaceSelector and objectSelector", async () => {
    const guarded = await freshNamespace(t.api, "vap");
    const open = await freshNamespace(t.api, "vap");
    expect((await t.api.patch(`/api/v1/namespaces/${guarded}`, { metadata: { labels: { "replicas-limit": "on" } } })).status).toBe(200);
    const remove = await bind(
      "narrow",
      {
        matchConstraints: {
          resourceRules: [deploymentRule],
          namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [guarded, open] }] },
        },
        validations: [{ expression: "object.spec.replicas <= 5", message: "too many" }],
      },
      {
        matchResources: {
          namespaceSelector: { matchLabels: { "replicas-limit": "on" } },
          objectSelector: { matchExpressions: [{ key: "exempt", operator: "DoesNotExist" }] },
        },
        validationActions: ["Deny"],
      },
    );
    try {
      expect((await t.api.post(`/apis/apps/v1/namespaces/${open}/deployments`, deployment("web", 9))).status).toBe(201);
      expect((await t.api.post(`/apis/apps/v1/namespaces/${guarded}/deployments`, deployment("web", 9))).status).toBe(422);
      expect((await t.api.post(`/apis/apps/v1/namespaces/${guarded}/deployments`, deployment("free", 9, { exempt: "yes" }))).status).toBe(
        201,
      );
    } finally {
      await remove();
    }
  });

  it("matchConditions, variables and auditAnnotations; excludeResourceRules and resourceNames", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind(
      "composed",
      {
        matchConstraints: {
          resourceRules: [deploymentRule],
          excludeResourceRules: [{ ...deploymentRule, resourceNames: ["legacy"] }],
          namespaceSelector: inNamespace(ns),
        },
        matchConditions: [{ name: "not-system", expression: "!request.userInfo.username.startsWith('system:serviceaccount:')" }],
        variables: [
          { name: "limit", expression: "object.metadata.?labels.tier.orValue('') == 'big' ? 10 : 5" },
          { name: "over", expression: "object.spec.replicas > variables.limit" },
        ],
        validations: [{ expression: "!variables.over", messageExpression: "'more than ' + string(variables.limit) + ' replicas'" }],
        auditAnnotations: [{ key: "replicas", valueExpression: "string(object.spec.replicas)" }],
      },
      { validationActions: ["Deny"] },
    );
    try {
      const big = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("big", 8, { tier: "big" }));
      expect(big.status, big.text).toBe(201);
      const annotations = await annotationsOf(String(big.headers["audit-id"]));
      expect(annotations["composed/replicas"]).toBe("8");
      const small = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("small", 8));
      expect(small.status).toBe(422);
      expect(small.body.message).toContain("denied request: more than 5 replicas");
      // Excluded by name.
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("legacy", 8))).status).toBe(201);
    } finally {
      await remove();
    }
  });

  it("an evaluation error follows failurePolicy: Fail denies with the CEL error, Ignore admits", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const policy = {
      matchConstraints: { resourceRules: [deploymentRule], namespaceSelector: inNamespace(ns) },
      validations: [{ expression: "object.metadata.labels.team == 'a'" }],
    };
    const remove = await bind("errors", policy, { validationActions: ["Deny"] });
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 1));
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(
        `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'errors' with binding 'errors-binding' denied request: expression 'object.metadata.labels.team == 'a'' resulted in error: no such key: team`,
      );
      expect((await t.api.patch(`${VAP}/errors`, { spec: { failurePolicy: "Ignore" } })).status).toBe(200);
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 1))).status).toBe(201);
    } finally {
      await remove();
    }
  });

  it("authorizer: a check of the request's own resource and of another, as the request's user", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const rbac = "/apis/rbac.authorization.orch.io/v1";
    const role = await t.api.post(`${rbac}/namespaces/${ns}/roles`, {
      apiVersion: "rbac.authorization.orch.io/v1",
      kind: "Role",
      metadata: { name: "deployer" },
      rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["create", "get"] }],
    });
    expect(role.status, role.text).toBe(201);
    const roleBinding = await t.api.post(`${rbac}/namespaces/${ns}/rolebindings`, {
      apiVersion: "rbac.authorization.orch.io/v1",
      kind: "RoleBinding",
      metadata: { name: "deployer" },
      roleRef: { apiGroup: "rbac.authorization.orch.io", kind: "Role", name: "deployer" },
      subjects: [{ apiGroup: "rbac.authorization.orch.io", kind: "User", name: "bob" }],
    });
    expect(roleBinding.status, roleBinding.text).toBe(201);
    const remove = await bind(
      "authz",
      {
        matchConstraints: { resourceRules: [deploymentRule], namespaceSelector: inNamespace(ns) },
        validations: [
          {
            expression: "object.spec.replicas <= 5 || authorizer.requestResource.subresource('scale').check('update').allowed()",
            message: "more than 5 replicas needs the right to scale",
          },
          {
            expression:
              "!has(object.metadata.labels) || !('team' in object.metadata.labels) || authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()",
            message: "a team label needs the right to list secrets",
          },
        ],
      },
      { validationActions: ["Deny"] },
    );
    try {
      const bob = t.api.withToken("bob-token");
      expect((await bob.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("small", 2))).status).toBe(201);
      const big = await bob.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("big", 6));
      expect(big.status).toBe(422);
      expect(big.body.message).toContain("denied request: more than 5 replicas needs the right to scale");
      const team = await bob.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("team", 1, { team: "a" }));
      expect(team.body.message).toContain("denied request: a team label needs the right to list secrets");
      // The administrator may do both.
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("big", 6, { team: "a" }))).status).toBe(201);
    } finally {
      await remove();
    }
  });

  it("a paramKind that is not served is a configuration error of the policy", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const remove = await bind(
      "unknown-param",
      {
        paramKind: { apiVersion: "example.com/v1", kind: "Limits" },
        matchConstraints: { resourceRules: [deploymentRule], namespaceSelector: inNamespace(ns) },
        validations: [{ expression: "true" }],
      },
      { paramRef: { name: "x", parameterNotFoundAction: "Allow" }, validationActions: ["Deny"] },
    );
    try {
      const r = await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 1));
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(
        `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'unknown-param' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'`,
      );
    } finally {
      await remove();
    }
  });

  it("a policy without a binding does nothing, and policies never apply to their own kinds", async () => {
    const ns = await freshNamespace(t.api, "vap");
    const removePolicy = await create(VAP, "ValidatingAdmissionPolicy", "unbound", replicasPolicy(ns));
    try {
      expect((await t.api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment("web", 9))).status).toBe(201);
    } finally {
      await removePolicy();
    }
    const everything = { operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] };
    const remove = await bind(
      "deny-all",
      { matchConstraints: { resourceRules: [everything] }, validations: [{ expression: "false", message: "nothing" }] },
      { validationActions: ["Deny"] },
    );
    // The policy's own binding and policy can still be removed.
    await remove();
  });
});
