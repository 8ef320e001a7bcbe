// Deployment, ReplicaSet, ReplicationController, PodTemplate and Pod rules (spec 2.8, 2.9, 2.11), as
// Kubernetes enforces them: each bad object is refused with Kubernetes' code, its causes name the field,
// and nothing is stored; each good case works. docs/rules/workloads.md maps every rule to its test.
import { beforeAll, describe, expect, it } from "vitest";
import { deployment, freshNamespace, paths, useTestServer } from "./harness.js";

const t = useTestServer();
let ns: string;
beforeAll(async () => {
  ns = await freshNamespace(t.api, "wl");
});

const DEPLOYS = () => paths.deployments(ns);
const RSS = () => `/apis/apps/v1/namespaces/${ns}/replicasets`;
const RCS = () => `/api/v1/namespaces/${ns}/replicationcontrollers`;
const PTS = () => `/api/v1/namespaces/${ns}/podtemplates`;
const PODS = () => `/api/v1/namespaces/${ns}/pods`;

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

/** A valid Deployment, changed by `edit`. */
function deploy(name: string, edit: (d: any) => void = () => {}): any {
  const d = deployment(name) as any;
  edit(d);
  return d;
}

const podSpec = (): any => ({ containers: [{ name: "c", image: "nginx" }] });
const template = (labels: Record<string, string> = { app: "x" }): any => ({ metadata: { labels }, spec: podSpec() });

function replicaSet(name: string, edit: (o: any) => void = () => {}): any {
  const o = {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name },
    spec: { selector: { matchLabels: { app: "x" } }, template: template() },
  };
  edit(o);
  return o;
}

function rc(name: string, edit: (o: any) => void = () => {}): any {
  const o = { apiVersion: "v1", kind: "ReplicationController", metadata: { name }, spec: { template: template() } };
  edit(o);
  return o;
}

function pod(name: string, edit: (spec: any, o: any) => void = () => {}): any {
  const o = { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: podSpec() };
  edit(o.spec, o);
  return o;
}

/** A 422 Invalid whose causes name exactly these fields, in order; the object was not stored. */
async function expectInvalid(r: { status: number; body: any }, fields: string[], getPath?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Invalid", code: 422 });
  expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(fields);
  if (getPath) expect((await t.api.get(getPath)).status).toBe(404);
}

/** Creates `body` at `collection` and expects the given invalid fields. */
async function refused(collection: string, body: any, fields: string[]) {
  const r = await t.api.post(collection, body);
  await expectInvalid(r, fields, `${collection}/${body.metadata.name}`);
  return r;
}

const causeOf = (r: { body: any }, field: string) => r.body.details.causes.find((c: any) => c.field === field);

// ---------------------------------------------------------------------------------------------

describe("Deployment: defaults", () => {
  it("fills replicas 1, revisionHistoryLimit 10, progressDeadlineSeconds 600, RollingUpdate 25%/25%", async () => {
    const body = deploy("defaults");
    delete body.spec.replicas;
    const r = await t.api.post(DEPLOYS(), body);
    expect(r.status).toBe(201);
    expect(r.body.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
    });
    // minReadySeconds defaults to 0, which Kubernetes omits (a plain int32 with omitempty).
    expect(r.body.spec.minReadySeconds ?? 0).toBe(0);
    expect(r.body.spec.template.spec).toMatchObject({
      restartPolicy: "Always",
      dnsPolicy: "ClusterFirst",
      terminationGracePeriodSeconds: 30,
      schedulerName: "default-scheduler",
    });
    expect(r.body.spec.template.spec.containers[0]).toMatchObject({
      imagePullPolicy: "Always",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
    });
  });

  it("keeps explicit zeros (replicas, revisionHistoryLimit, minReadySeconds, maxSurge)", async () => {
    const r = await t.api.post(
      DEPLOYS(),
      deploy("zeros", (d) => {
        d.spec.replicas = 0;
        d.spec.revisionHistoryLimit = 0;
        d.spec.minReadySeconds = 0;
        d.spec.strategy = { rollingUpdate: { maxSurge: 0 } };
      }),
    );
    expect(r.status).toBe(201);
    expect(r.body.spec).toMatchObject({
      replicas: 0,
      revisionHistoryLimit: 0,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: "25%" } },
    });
    const got = await t.api.get(`${DEPLOYS()}/zeros`);
    expect(got.body.spec.replicas).toBe(0);
    expect(got.body.spec.revisionHistoryLimit).toBe(0);
  });

  it("does not give Recreate a rollingUpdate", async () => {
    const r = await t.api.post(
      DEPLOYS(),
      deploy("recreate", (d) => (d.spec.strategy = { type: "Recreate" })),
    );
    expect(r.status).toBe(201);
    expect(r.body.spec.strategy).toEqual({ type: "Recreate" });
  });
});

describe("Deployment: selector", () => {
  it("missing selector → 422 spec.selector Required (and the template cannot match it)", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("nosel"), (d) => delete d.spec.selector),
      ["spec.selector", "spec.template.metadata.labels"],
    );
    expect(causeOf(r, "spec.selector")).toEqual({ reason: "FieldValueRequired", message: "Required value", field: "spec.selector" });
  });

  it("empty selector → 422 spec.selector", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("empty"), (d) => (d.spec.selector = {})),
      ["spec.selector"],
    );
    expect(r.body.details.causes[0].message).toBe("Invalid value: {}: empty selector is invalid for deployment");
  });

  it("selector that does not match the template labels → 422 spec.template.metadata.labels", async () => {
    const name = unique("mismatch");
    const r = await refused(
      DEPLOYS(),
      deploy(name, (d) => (d.spec.selector = { matchLabels: { app: "other" } })),
      ["spec.template.metadata.labels"],
    );
    expect(r.body.message).toBe(
      `Deployment.apps "${name}" is invalid: spec.template.metadata.labels: Invalid value: {"app":"${name}"}: \`selector\` does not match template \`labels\``,
    );
  });

  it("matchExpressions are validated; a selector that does not parse → invalid label selector", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(
        unique("expr"),
        (d) => (d.spec.selector = { matchLabels: { app: d.metadata.name }, matchExpressions: [{ key: "tier", operator: "Foo" }] }),
      ),
      ["spec.selector.matchExpressions[0].operator", "spec.selector"],
    );
    expect(causeOf(r, "spec.selector").message).toContain("invalid label selector");
    const inNoValues = await t.api.post(
      DEPLOYS(),
      deploy(
        unique("expr"),
        (d) => (d.spec.selector = { matchLabels: { app: d.metadata.name }, matchExpressions: [{ key: "tier", operator: "In" }] }),
      ),
    );
    expect(inNoValues.status).toBe(422);
    expect(causeOf(inNoValues, "spec.selector.matchExpressions[0].values").message).toBe(
      "Required value: must be specified when `operator` is 'In' or 'NotIn'",
    );
  });

  it("a matchExpressions selector that matches works", async () => {
    const r = await t.api.post(
      DEPLOYS(),
      deploy("exprok", (d) => (d.spec.selector = { matchExpressions: [{ key: "app", operator: "In", values: ["exprok", "x"] }] })),
    );
    expect(r.status).toBe(201);
  });

  it("selector is immutable → 422 spec.selector field is immutable; other changes work", async () => {
    const created = (await t.api.post(DEPLOYS(), deploy("immutable"))).body;
    const changed = structuredClone(created);
    changed.spec.selector = { matchLabels: { app: "immutable", tier: "web" } };
    changed.spec.template.metadata.labels = { app: "immutable", tier: "web" };
    const r = await t.api.put(`${DEPLOYS()}/immutable`, changed);
    await expectInvalid(r, ["spec.selector"]);
    expect(r.body.details.causes[0].message).toBe('Invalid value: {"matchLabels":{"app":"immutable","tier":"web"}}: field is immutable');
    const scaled = structuredClone(created);
    scaled.spec.replicas = 3;
    expect((await t.api.put(`${DEPLOYS()}/immutable`, scaled)).status).toBe(200);
  });
});

describe("Deployment: template and strategy", () => {
  it("template.spec.restartPolicy other than Always → 422", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("restart"), (d) => (d.spec.template.spec.restartPolicy = "OnFailure")),
      ["spec.template.spec.restartPolicy"],
    );
    expect(r.body.details.causes[0]).toMatchObject({
      reason: "FieldValueNotSupported",
      message: 'Unsupported value: "OnFailure": supported values: "Always"',
    });
  });

  it("template.spec.activeDeadlineSeconds → 422 Forbidden", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("deadline"), (d) => (d.spec.template.spec.activeDeadlineSeconds = 10)),
      ["spec.template.spec.activeDeadlineSeconds"],
    );
    expect(r.body.details.causes[0].message).toBe("Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported");
  });

  it("rollingUpdate with type Recreate → 422 spec.strategy.rollingUpdate", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("recreate"), (d) => (d.spec.strategy = { type: "Recreate", rollingUpdate: { maxSurge: 1 } })),
      ["spec.strategy.rollingUpdate"],
    );
    expect(r.body.details.causes[0].message).toBe("Forbidden: may not be specified when strategy `type` is 'Recreate'");
  });

  it("an unknown strategy type → 422 spec.strategy", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("strategy"), (d) => (d.spec.strategy = { type: "BlueGreen" })),
      ["spec.strategy"],
    );
    expect(r.body.details.causes[0].message).toContain('supported values: "Recreate", "RollingUpdate"');
  });

  it("maxSurge and maxUnavailable both 0 → 422 maxUnavailable", async () => {
    for (const [surge, unavailable] of [
      [0, 0],
      ["0%", "0%"],
      [0, "0%"],
    ]) {
      const r = await refused(
        DEPLOYS(),
        deploy(unique("zero"), (d) => (d.spec.strategy = { rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } })),
        ["spec.strategy.rollingUpdate.maxUnavailable"],
      );
      expect(r.body.details.causes[0].message).toContain("may not be 0 when `maxSurge` is 0");
    }
  });

  it("int-or-percent format: a bad percent string or a negative number → 422", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("percent"), (d) => (d.spec.strategy = { rollingUpdate: { maxSurge: "5", maxUnavailable: -1 } })),
      ["spec.strategy.rollingUpdate.maxUnavailable", "spec.strategy.rollingUpdate.maxSurge"],
    );
    expect(causeOf(r, "spec.strategy.rollingUpdate.maxSurge").message).toBe(
      `Invalid value: "5": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
    );
    expect(causeOf(r, "spec.strategy.rollingUpdate.maxUnavailable").message).toBe("Invalid value: -1: must be greater than or equal to 0");
  });

  it("maxUnavailable over 100% → 422; maxSurge over 100% is fine", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("over"), (d) => (d.spec.strategy = { rollingUpdate: { maxUnavailable: "110%" } })),
      ["spec.strategy.rollingUpdate.maxUnavailable"],
    );
    expect(r.body.details.causes[0].message).toBe('Invalid value: "110%": must not be greater than 100%');
    const surge = await t.api.post(
      DEPLOYS(),
      deploy("surge200", (d) => (d.spec.strategy = { rollingUpdate: { maxSurge: "200%" } })),
    );
    expect(surge.status).toBe(201);
  });

  it("progressDeadlineSeconds must exceed minReadySeconds → 422", async () => {
    const r = await refused(
      DEPLOYS(),
      deploy(unique("progress"), (d) => {
        d.spec.minReadySeconds = 30;
        d.spec.progressDeadlineSeconds = 30;
      }),
      ["spec.progressDeadlineSeconds"],
    );
    expect(r.body.details.causes[0].message).toBe("Invalid value: 30: must be greater than minReadySeconds");
  });

  it("negative counts → 422 (replicas, minReadySeconds, revisionHistoryLimit, progressDeadlineSeconds)", async () => {
    await refused(
      DEPLOYS(),
      deploy(unique("negative"), (d) => {
        d.spec.replicas = -1;
        d.spec.minReadySeconds = -1;
        d.spec.revisionHistoryLimit = -1;
      }),
      ["spec.replicas", "spec.minReadySeconds", "spec.revisionHistoryLimit"],
    );
    const r = await refused(
      DEPLOYS(),
      deploy(unique("negative"), (d) => (d.spec.progressDeadlineSeconds = -1)),
      ["spec.progressDeadlineSeconds", "spec.progressDeadlineSeconds"],
    );
    expect(r.body.details.causes.map((c: any) => c.message)).toEqual([
      "Invalid value: -1: must be greater than or equal to 0",
      "Invalid value: -1: must be greater than minReadySeconds",
    ]);
  });

  it("updates are validated too (PUT and merge patch), and the stored object is unchanged", async () => {
    const created = (await t.api.post(DEPLOYS(), deploy("upd"))).body;
    const bad = structuredClone(created);
    bad.spec.replicas = -2;
    await expectInvalid(await t.api.put(`${DEPLOYS()}/upd`, bad), ["spec.replicas"]);
    const patched = await t.api.patch(`${DEPLOYS()}/upd`, { spec: { template: { spec: { restartPolicy: "Never" } } } });
    await expectInvalid(patched, ["spec.template.spec.restartPolicy"]);
    const got = (await t.api.get(`${DEPLOYS()}/upd`)).body;
    expect(got.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it("the pod template inside is validated at spec.template (labels at spec.template.labels, as Kubernetes)", async () => {
    await refused(
      DEPLOYS(),
      deploy(unique("tpl"), (d) => {
        d.spec.template.metadata.labels["bad key!"] = "v";
        d.spec.template.spec.containers = [];
      }),
      ["spec.template.labels", "spec.template.spec.containers"],
    );
  });

  it("/status: counts are validated (negative, more ready than replicas)", async () => {
    const created = (await t.api.post(DEPLOYS(), deploy("status"))).body;
    const r = await t.api.put(`${DEPLOYS()}/status/status`, {
      ...created,
      status: { replicas: 1, readyReplicas: 2, availableReplicas: -1 },
    });
    await expectInvalid(r, ["status.availableReplicas", "status.readyReplicas"]);
    const ok = await t.api.put(`${DEPLOYS()}/status/status`, {
      ...created,
      status: { replicas: 2, readyReplicas: 1, availableReplicas: 1 },
    });
    expect(ok.status).toBe(200);
  });

  it("warns about a name that is not a DNS label and about deprecated template fields", async () => {
    const r = await t.api.post(
      DEPLOYS(),
      deploy("web.v1", (d) => {
        d.spec.template.spec.volumes = [{ name: "src", gitRepo: { repository: "https://example.com/r.git" } }];
        d.spec.template.spec.nodeSelector = { "beta.kubernetes.io/os": "linux" };
      }),
    );
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([
      "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
      'spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead',
      "spec.template.spec.volumes[0].gitRepo: deprecated in v1.11",
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("ReplicaSet", () => {
  it("a valid one is created with replicas defaulted to 1", async () => {
    const r = await t.api.post(RSS(), replicaSet("rs-ok"));
    expect(r.status).toBe(201);
    expect(r.body.spec.replicas).toBe(1);
  });

  it("selector required, non-empty, matching the template labels", async () => {
    await refused(
      RSS(),
      replicaSet(unique("rs"), (o) => delete o.spec.selector),
      ["spec.selector", "spec.template.metadata.labels"],
    );
    await refused(
      RSS(),
      replicaSet(unique("rs"), (o) => (o.spec.selector = {})),
      ["spec.selector"],
    );
    await refused(
      RSS(),
      replicaSet(unique("rs"), (o) => (o.spec.selector = { matchLabels: { app: "y" } })),
      ["spec.template.metadata.labels"],
    );
  });

  it("selector is immutable", async () => {
    const created = (await t.api.post(RSS(), replicaSet("rs-imm"))).body;
    const changed = structuredClone(created);
    changed.spec.selector = { matchLabels: {}, matchExpressions: [{ key: "app", operator: "Exists" }] };
    await expectInvalid(await t.api.put(`${RSS()}/rs-imm`, changed), ["spec.selector"]);
  });

  it("template restartPolicy Always only; replicas and minReadySeconds not negative", async () => {
    await refused(
      RSS(),
      replicaSet(unique("rs"), (o) => (o.spec.template.spec.restartPolicy = "Never")),
      ["spec.template.spec.restartPolicy"],
    );
    await refused(
      RSS(),
      replicaSet(unique("rs"), (o) => {
        o.spec.replicas = -1;
        o.spec.minReadySeconds = -5;
      }),
      ["spec.replicas", "spec.minReadySeconds"],
    );
  });

  it("/status: counts are validated", async () => {
    const created = (await t.api.post(RSS(), replicaSet("rs-status"))).body;
    const r = await t.api.put(`${RSS()}/rs-status/status`, { ...created, status: { replicas: 1, fullyLabeledReplicas: 3 } });
    await expectInvalid(r, ["status.fullyLabeledReplicas"]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("ReplicationController", () => {
  it("defaults replicas to 1 and the selector and labels to the template labels", async () => {
    const r = await t.api.post(RCS(), rc("rc-defaults"));
    expect(r.status).toBe(201);
    expect(r.body.spec.replicas).toBe(1);
    expect(r.body.spec.selector).toEqual({ app: "x" });
    expect(r.body.metadata.labels).toEqual({ app: "x" });
  });

  it("keeps an explicit replicas 0", async () => {
    const r = await t.api.post(
      RCS(),
      rc("rc-zero", (o) => (o.spec.replicas = 0)),
    );
    expect(r.status).toBe(201);
    expect(r.body.spec.replicas).toBe(0);
  });

  it("a selector that does not match the template labels → 422", async () => {
    await refused(
      RCS(),
      rc(unique("rc"), (o) => (o.spec.selector = { app: "y" })),
      ["spec.template.metadata.labels"],
    );
  });

  it("template required: without one there is no selector either → 422 spec.selector, spec.template", async () => {
    await refused(
      RCS(),
      rc(unique("rc"), (o) => delete o.spec.template),
      ["spec.selector", "spec.template"],
    );
    // Kubernetes requires the template whatever the replica count (ValidatePodTemplateSpecForRC).
    await refused(
      RCS(),
      rc(unique("rc"), (o) => {
        delete o.spec.template;
        o.spec.selector = { app: "x" };
        o.spec.replicas = 0;
      }),
      ["spec.template"],
    );
  });

  it("template restartPolicy Always only; negative replicas refused; the selector may change", async () => {
    await refused(
      RCS(),
      rc(unique("rc"), (o) => (o.spec.template.spec.restartPolicy = "OnFailure")),
      ["spec.template.spec.restartPolicy"],
    );
    await refused(
      RCS(),
      rc(unique("rc"), (o) => (o.spec.replicas = -1)),
      ["spec.replicas"],
    );
    const created = (await t.api.post(RCS(), rc("rc-mutable"))).body;
    const changed = structuredClone(created);
    changed.spec.selector = { app: "x", tier: "web" };
    changed.spec.template.metadata.labels = { app: "x", tier: "web" };
    expect((await t.api.put(`${RCS()}/rc-mutable`, changed)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------

describe("PodTemplate", () => {
  it("any restartPolicy is fine in a plain template", async () => {
    const r = await t.api.post(PTS(), {
      metadata: { name: "pt-ok" },
      template: { ...template(), spec: { ...podSpec(), restartPolicy: "Never" } },
    });
    expect(r.status).toBe(201);
  });

  it("the template is validated at template.*", async () => {
    await refused(PTS(), { metadata: { name: unique("pt") }, template: { spec: { containers: [{ name: "Bad_Name", image: "x" }] } } }, [
      "template.spec.containers[0].name",
    ]);
    await refused(PTS(), { metadata: { name: unique("pt") }, template: { spec: { ...podSpec(), restartPolicy: "Sometimes" } } }, [
      "template.spec.restartPolicy",
    ]);
  });

  it("a template without a spec needs containers", async () => {
    await refused(PTS(), { metadata: { name: unique("pt") }, template: { metadata: { labels: { a: "b" } } } }, [
      "template.spec.containers",
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("Pod spec: containers", () => {
  it("at least one container → 422 spec.containers Required", async () => {
    const r = await refused(
      PODS(),
      pod(unique("p"), (s) => (s.containers = [])),
      ["spec.containers"],
    );
    expect(r.body.details.causes[0]).toMatchObject({ reason: "FieldValueRequired", message: "Required value" });
    await refused(PODS(), { metadata: { name: unique("p") } }, ["spec.containers"]);
  });

  it("container names: required, DNS labels, unique (across init containers too)", async () => {
    const r = await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.containers = [
          { name: "Web", image: "nginx" },
          { name: "", image: "nginx" },
          { name: "a", image: "x" },
          { name: "a", image: "x" },
        ];
        s.initContainers = [{ name: "a", image: "x" }];
      }),
      ["spec.containers[0].name", "spec.containers[1].name", "spec.containers[3].name", "spec.initContainers[0].name"],
    );
    expect(r.body.details.causes.map((c: any) => c.reason)).toEqual([
      "FieldValueInvalid",
      "FieldValueRequired",
      "FieldValueDuplicate",
      "FieldValueDuplicate",
    ]);
    expect(r.body.details.causes[0].message).toContain("a lowercase RFC 1123 label must consist of");
  });

  it("image required", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => delete s.containers[0].image),
      ["spec.containers[0].image"],
    );
  });

  it("a pod's image may not have surrounding whitespace (templates may)", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => (s.containers[0].image = " nginx")),
      ["spec.containers[0].image"],
    );
    const r = await t.api.post(PTS(), { metadata: { name: "pt-space" }, template: { spec: { containers: [{ name: "c", image: " " }] } } });
    expect(r.status).toBe(201);
  });

  it("restartPolicy, dnsPolicy, imagePullPolicy and terminationMessagePolicy are enums", async () => {
    const r = await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.restartPolicy = "Sometimes";
        s.dnsPolicy = "Google";
        s.containers[0].imagePullPolicy = "Maybe";
        s.containers[0].terminationMessagePolicy = "Stdout";
      }),
      ["spec.containers[0].terminationMessagePolicy", "spec.containers[0].imagePullPolicy", "spec.restartPolicy", "spec.dnsPolicy"],
    );
    expect(causeOf(r, "spec.restartPolicy").message).toBe(
      'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    );
    expect(causeOf(r, "spec.dnsPolicy").message).toBe(
      'Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    );
    expect(causeOf(r, "spec.containers[0].imagePullPolicy").message).toBe(
      'Unsupported value: "Maybe": supported values: "Always", "IfNotPresent", "Never"',
    );
  });

  it("restartPolicy on a regular container is forbidden; on an init container only Always", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.containers[0].restartPolicy = "Always";
        s.initContainers = [{ name: "init", image: "x", restartPolicy: "Never" }];
      }),
      ["spec.containers[0].restartPolicy", "spec.initContainers[0].restartPolicy"],
    );
    const sidecar = await t.api.post(
      PODS(),
      pod("sidecar", (s) => (s.initContainers = [{ name: "side", image: "x", restartPolicy: "Always" }])),
    );
    expect(sidecar.status).toBe(201);
  });
});

describe("Pod spec: ports", () => {
  it("containerPort required and in range; hostPort in range; protocol TCP, UDP or SCTP", async () => {
    const r = await refused(
      PODS(),
      pod(
        unique("p"),
        (s) => (s.containers[0].ports = [{ containerPort: 0 }, { containerPort: 70000, hostPort: 70000, protocol: "HTTP" }]),
      ),
      [
        "spec.containers[0].ports[0].containerPort",
        "spec.containers[0].ports[1].containerPort",
        "spec.containers[0].ports[1].hostPort",
        "spec.containers[0].ports[1].protocol",
      ],
    );
    expect(causeOf(r, "spec.containers[0].ports[1].containerPort").message).toBe(
      "Invalid value: 70000: must be between 1 and 65535, inclusive",
    );
    expect(causeOf(r, "spec.containers[0].ports[1].protocol").message).toBe(
      'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    );
  });

  it("port names: IANA_SVC_NAME syntax, unique within a container", async () => {
    const r = await refused(
      PODS(),
      pod(
        unique("p"),
        (s) =>
          (s.containers[0].ports = [
            { name: "http", containerPort: 80 },
            { name: "http", containerPort: 81 },
            { name: "8080", containerPort: 82 },
          ]),
      ),
      ["spec.containers[0].ports[1].name", "spec.containers[0].ports[2].name"],
    );
    expect(r.body.details.causes[0].reason).toBe("FieldValueDuplicate");
    expect(r.body.details.causes[1].message).toBe('Invalid value: "8080": must contain at least one letter (a-z)');
  });

  it("the same host port twice in a pod → 422 Duplicate", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.containers = [
          { name: "a", image: "x", ports: [{ containerPort: 80, hostPort: 8080 }] },
          { name: "b", image: "x", ports: [{ containerPort: 81, hostPort: 8080 }] },
        ];
      }),
      ["spec.containers[1].ports[0].hostPort"],
    );
  });
});

describe("Pod spec: env", () => {
  it("names: required, printable ASCII without '='", async () => {
    const r = await refused(
      PODS(),
      pod(
        unique("p"),
        (s) =>
          (s.containers[0].env = [
            { name: "A=B", value: "1" },
            { name: "", value: "2" },
            { name: "é", value: "3" },
            { name: "1.ok-Name", value: "4" },
          ]),
      ),
      ["spec.containers[0].env[0].name", "spec.containers[0].env[1].name", "spec.containers[0].env[2].name"],
    );
    expect(r.body.details.causes[0].message).toBe(
      `Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
    );
  });

  it("valueFrom: one source, not together with value; key selectors validated", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.containers[0].env = [
          { name: "A", value: "x", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
          { name: "B", valueFrom: {} },
          { name: "C", valueFrom: { configMapKeyRef: { name: "Bad_Name", key: "a/b" } } },
          { name: "D", valueFrom: { fieldRef: { fieldPath: "spec.nope" } } },
        ];
      }),
      [
        "spec.containers[0].env[0].valueFrom",
        "spec.containers[0].env[1].valueFrom",
        "spec.containers[0].env[2].valueFrom.configMapKeyRef.name",
        "spec.containers[0].env[2].valueFrom.configMapKeyRef.key",
        "spec.containers[0].env[3].valueFrom.fieldRef.fieldPath",
      ],
    );
    const ok = await t.api.post(
      PODS(),
      pod("env-ok", (s) => (s.containers[0].env = [{ name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }])),
    );
    expect(ok.status).toBe(201);
    expect(ok.body.spec.containers[0].env[0].valueFrom.fieldRef.apiVersion).toBe("v1");
  });

  it("envFrom: a prefix with '=' and a source-less entry are refused", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => (s.containers[0].envFrom = [{ prefix: "A=", configMapRef: { name: "cm" } }, {}])),
      ["spec.containers[0].envFrom[0].prefix", "spec.containers[0].envFrom"],
    );
  });
});

describe("Pod spec: resources", () => {
  it("a quantity that does not parse → 400 BadRequest with Kubernetes' message (a decode error, as in Go)", async () => {
    const name = unique("p");
    const r = await t.api.post(
      PODS(),
      pod(name, (s) => (s.containers[0].resources = { limits: { cpu: "two" } })),
    );
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
    expect(r.body.message).toMatch(/^Pod in version "v1" cannot be handled as a Pod: /);
    expect(r.body.message).toContain("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect((await t.api.get(`${PODS()}/${name}`)).status).toBe(404);
    const suffix = await t.api.post(
      DEPLOYS(),
      deploy(unique("q"), (d) => (d.spec.template.spec.containers[0].resources = { requests: { memory: "1ki" } })),
    );
    expect(suffix.status).toBe(400);
    expect(suffix.body.message).toContain("unable to parse quantity's suffix");
  });

  it("quantities are stored in canonical form", async () => {
    const r = await t.api.post(
      PODS(),
      pod(
        "canonical",
        (s) => (s.containers[0].resources = { limits: { cpu: 0.5, memory: "1.5Gi" }, requests: { cpu: "250m", memory: "1000Mi" } }),
      ),
    );
    expect(r.status).toBe(201);
    expect(r.body.spec.containers[0].resources).toEqual({
      limits: { cpu: "500m", memory: "1536Mi" },
      requests: { cpu: "250m", memory: "1000Mi" },
    });
  });

  it("negative values, requests above limits, unknown resource names → 422", async () => {
    const r = await refused(
      PODS(),
      pod(unique("p"), (s) => (s.containers[0].resources = { limits: { cpu: "1", memory: "-1" }, requests: { cpu: "2", foo: "1" } })),
      [
        "spec.containers[0].resources.limits[memory]",
        "spec.containers[0].resources.requests",
        "spec.containers[0].resources.requests[foo]",
        "spec.containers[0].resources.requests[foo]",
        // A pod's requests default to its limits, the negative memory included.
        "spec.containers[0].resources.requests[memory]",
      ],
    );
    expect(r.body.details.causes.map((c: any) => c.message)).toEqual([
      'Invalid value: "-1": must be greater than or equal to 0',
      'Invalid value: "2": must be less than or equal to cpu limit of 1',
      'Invalid value: "foo": must be a standard resource type or fully qualified',
      'Invalid value: "foo": must be a standard resource for containers',
      'Invalid value: "-1": must be greater than or equal to 0',
    ]);
  });

  it("extended resources: whole numbers, requests equal to limits", async () => {
    const r = await refused(
      PODS(),
      pod(
        unique("p"),
        (s) => (s.containers[0].resources = { limits: { "example.com/gpu": "1" }, requests: { "example.com/gpu": "500m" } }),
      ),
      ["spec.containers[0].resources.requests[example.com/gpu]", "spec.containers[0].resources.requests"],
    );
    expect(r.body.details.causes.map((c: any) => c.message)).toEqual([
      'Invalid value: "500m": must be an integer',
      'Invalid value: "500m": must be equal to example.com/gpu limit of 1',
    ]);
  });

  it("a pod's requests default to its limits", async () => {
    const r = await t.api.post(
      PODS(),
      pod("requests", (s) => (s.containers[0].resources = { limits: { cpu: "1" } })),
    );
    expect(r.status).toBe(201);
    expect(r.body.spec.containers[0].resources.requests).toEqual({ cpu: "1" });
  });
});

describe("Pod spec: volumes and mounts", () => {
  it("volume names: DNS labels, unique", async () => {
    await refused(
      PODS(),
      pod(
        unique("p"),
        (s) =>
          (s.volumes = [
            { name: "Data", emptyDir: {} },
            { name: "cache", emptyDir: {} },
            { name: "cache", emptyDir: {} },
          ]),
      ),
      ["spec.volumes[0].name", "spec.volumes[2].name"],
    );
  });

  it("one source per volume, with its required fields", async () => {
    await refused(
      PODS(),
      pod(
        unique("p"),
        (s) =>
          (s.volumes = [
            { name: "a", emptyDir: {}, hostPath: { path: "/x" } },
            { name: "b", secret: {} },
            { name: "c", configMap: { name: "cm", defaultMode: 1000 } },
          ]),
      ),
      ["spec.volumes[0].hostPath", "spec.volumes[1].secret.secretName", "spec.volumes[2].configMap.defaultMode"],
    );
  });

  it("a volumeMount must name an existing volume, with a unique mountPath", async () => {
    const r = await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.volumes = [{ name: "data", emptyDir: {} }];
        s.containers[0].volumeMounts = [
          { name: "missing", mountPath: "/a" },
          { name: "data", mountPath: "/a" },
          { name: "data", mountPath: "/b", subPath: "../etc" },
        ];
      }),
      [
        "spec.containers[0].volumeMounts[0].name",
        "spec.containers[0].volumeMounts[1].mountPath",
        "spec.containers[0].volumeMounts.subPath",
      ],
    );
    expect(r.body.details.causes[0]).toMatchObject({ reason: "FieldValueNotFound", message: 'Not found: "missing"' });
  });

  it("mounts of a valid volume work", async () => {
    const r = await t.api.post(
      PODS(),
      pod("mounts", (s) => {
        s.volumes = [{ name: "data" }];
        s.containers[0].volumeMounts = [{ name: "data", mountPath: "/data" }];
      }),
    );
    expect(r.status).toBe(201);
    expect(r.body.spec.volumes[0]).toEqual({ name: "data", emptyDir: {} });
  });
});

describe("Pod spec: probes and other fields", () => {
  it("a probe needs exactly one handler; liveness successThreshold must be 1", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.containers[0].readinessProbe = { periodSeconds: 5 };
        s.containers[0].livenessProbe = { tcpSocket: { port: 80 }, exec: { command: ["true"] }, successThreshold: 2 };
      }),
      [
        "spec.containers[0].livenessProbe.tcpSocket",
        "spec.containers[0].livenessProbe.successThreshold",
        "spec.containers[0].readinessProbe",
      ],
    );
  });

  // serviceAccountName is checked on pod templates: a pod's account must exist, which admission asks first (403).
  it("hostname, subdomain, nodeName, nodeSelector, activeDeadlineSeconds", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => {
        s.hostname = "a.b";
        s.subdomain = "Sub";
        s.nodeName = "Node_1";
        s.nodeSelector = { "disk/type/x": "ssd" };
        s.activeDeadlineSeconds = 0;
      }),
      ["spec.nodeSelector", "spec.nodeName", "spec.activeDeadlineSeconds", "spec.hostname", "spec.subdomain"],
    );
  });

  it("priorityClassName: validated in templates; a pod's is resolved by the Priority admission first (403)", async () => {
    await refused(
      PTS(),
      {
        apiVersion: "v1",
        kind: "PodTemplate",
        metadata: { name: unique("pt") },
        template: { spec: { ...podSpec(), priorityClassName: "High!" } },
      },
      ["template.spec.priorityClassName"],
    );
    const r = await t.api.post(
      PODS(),
      pod(unique("p"), (s) => (s.priorityClassName = "High!")),
    );
    expect(r.status).toBe(403);
    expect(r.body.message).toMatch(/is forbidden: no PriorityClass with name High! was found$/);
  });

  it("tolerations: operator and effect", async () => {
    await refused(
      PODS(),
      pod(
        unique("p"),
        (s) =>
          (s.tolerations = [
            { key: "k", operator: "Maybe" },
            { operator: "Equal", value: "v" },
            { key: "k", effect: "Sometimes" },
          ]),
      ),
      ["spec.tolerations[0].operator", "spec.tolerations[1].operator", "spec.tolerations[2].effect"],
    );
  });

  it("a negative terminationGracePeriodSeconds is accepted, as Kubernetes does (deletion treats it as 1)", async () => {
    const r = await t.api.post(
      PODS(),
      pod("negative-grace", (s) => (s.terminationGracePeriodSeconds = -1)),
    );
    expect(r.status).toBe(201);
  });

  it("ephemeral containers cannot be set on create", async () => {
    await refused(
      PODS(),
      pod(unique("p"), (s) => (s.ephemeralContainers = [{ name: "debug", image: "busybox" }])),
      ["spec.ephemeralContainers"],
    );
  });
});

describe("Pod updates", () => {
  it("the image may change; other spec fields may not; containers may not be added", async () => {
    const created = (await t.api.post(PODS(), pod("upd"))).body;
    const image = structuredClone(created);
    image.spec.containers[0].image = "nginx:2";
    const ok = await t.api.put(`${PODS()}/upd`, image);
    expect(ok.status).toBe(200);
    const other = structuredClone(ok.body);
    other.spec.restartPolicy = "Never";
    const r = await t.api.put(`${PODS()}/upd`, other);
    await expectInvalid(r, ["spec"]);
    expect(r.body.details.causes[0].message).toMatch(
      /^Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`,`spec.initContainers\[\*\].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` \(only additions to existing tolerations\),`spec.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n/,
    );
    const added = structuredClone(ok.body);
    added.spec.containers.push({ name: "d", image: "x" });
    await expectInvalid(await t.api.put(`${PODS()}/upd`, added), ["spec.containers"]);
  });

  it("tolerations may only be added", async () => {
    const created = (
      await t.api.post(
        PODS(),
        pod("tol", (s) => (s.tolerations = [{ key: "a", operator: "Exists" }])),
      )
    ).body;
    const more = structuredClone(created);
    more.spec.tolerations.push({ key: "b", operator: "Exists" });
    const ok = await t.api.put(`${PODS()}/tol`, more);
    expect(ok.status).toBe(200);
    const fewer = structuredClone(ok.body);
    fewer.spec.tolerations = [{ key: "b", operator: "Exists" }];
    await expectInvalid(await t.api.put(`${PODS()}/tol`, fewer), ["spec.tolerations"]);
  });
});

describe("Pod warnings", () => {
  it("warns about a dotted name, duplicate env vars and fractional memory", async () => {
    const r = await t.api.post(
      PODS(),
      pod("web.v1", (s) => {
        s.containers[0].env = [
          { name: "A", value: "1" },
          { name: "A", value: "2" },
        ];
        s.containers[0].resources = { requests: { memory: "0.5" } };
      }),
    );
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([
      "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
      'spec.containers[0].resources.requests[memory]: fractional byte value "500m" is invalid, must be an integer',
      'spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply',
    ]);
  });
});
