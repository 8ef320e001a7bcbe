import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { defaultDeployment, defaultReplicaSet, Deployment, DeploymentList, ReplicaSet } from "../src/kinds/apps.js";
import { defaultTokenRequest, SelfSubjectReview, TokenRequest, TokenReview } from "../src/kinds/authentication.js";
import { Scale } from "../src/kinds/autoscaling.js";
import { CertificateSigningRequest, ClusterTrustBundle } from "../src/kinds/certificates.js";
import {
  crdSchemaFor,
  crdSchemas,
  defaultCustomResourceDefinition,
  schemaExtensions,
  type JSONSchemaProps,
} from "../src/kinds/apiextensions.js";
import {
  Container,
  defaultNamespace,
  defaultPod,
  defaultPullPolicy,
  defaultReplicationController,
  imageTag,
  Namespace,
  Pod,
  PodSpec,
  PodStatus,
  PodTemplate,
  ReplicationController,
  Secret,
  ServiceAccount,
  Volume,
} from "../src/kinds/core.js";
import { DeviceClass } from "../src/kinds/resource.js";
import { PriorityClass } from "../src/kinds/scheduling.js";
import { listSemantics, type AnySchema } from "../src/schema.js";

const issuePath = (issue: v.BaseIssue<unknown>) => v.getDotPath(issue);

/** Unwraps opt()/nullable wrappers to the schema that carries the list metadata. */
const unwrap = (schema: AnySchema): AnySchema => {
  let current = schema as AnySchema & { wrapped?: AnySchema };
  while (current.wrapped) current = current.wrapped as AnySchema & { wrapped?: AnySchema };
  return current;
};

const deploymentManifest = () => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", labels: { app: "web" } },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        containers: [
          {
            name: "nginx",
            image: "nginx:1.27",
            ports: [{ containerPort: 80, name: "http" }],
            env: [
              { name: "MODE", value: "prod" },
              { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
            ],
            resources: { limits: { cpu: "500m", memory: "128Mi" } },
            readinessProbe: { httpGet: { port: "http" } },
            volumeMounts: [{ name: "cache", mountPath: "/cache" }],
          },
          { name: "sidecar", image: "busybox", command: ["sleep", "infinity"] },
        ],
        volumes: [
          { name: "cache", emptyDir: {} },
          { name: "config", configMap: { name: "web-config" } },
        ],
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                podAffinityTerm: {
                  labelSelector: { matchLabels: { app: "web" } },
                  topologyKey: "kubernetes.io/hostname",
                },
              },
            ],
          },
        },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "web", effect: "NoSchedule" }],
      },
    },
  },
});

describe("Deployment", () => {
  it("parses a realistic manifest and applies the Kubernetes defaults", () => {
    const result = v.safeParse(Deployment, deploymentManifest());
    expect(result.issues).toBeUndefined();
    expect(result.success).toBe(true);
    if (!result.success) return;
    const deployment = result.output;
    defaultDeployment(deployment);

    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.revisionHistoryLimit).toBe(10);
    expect(deployment.spec.progressDeadlineSeconds).toBe(600);
    expect(deployment.spec.minReadySeconds).toBeUndefined();
    expect(deployment.spec.strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
    });
    expect(deployment.status).toEqual({});

    const spec = deployment.spec.template.spec!;
    expect(spec.restartPolicy).toBe("Always");
    expect(spec.dnsPolicy).toBe("ClusterFirst");
    expect(spec.schedulerName).toBe("default-scheduler");
    expect(spec.terminationGracePeriodSeconds).toBe(30);
    expect(spec.securityContext).toEqual({});
    // Only Pod objects get enableServiceLinks and requests-from-limits, not templates.
    expect(spec.enableServiceLinks).toBeUndefined();

    const [nginx, sidecar] = spec.containers;
    expect(nginx!.terminationMessagePath).toBe("/dev/termination-log");
    expect(nginx!.terminationMessagePolicy).toBe("File");
    expect(nginx!.imagePullPolicy).toBe("IfNotPresent");
    expect(nginx!.ports).toEqual([{ containerPort: 80, name: "http", protocol: "TCP" }]);
    expect(nginx!.env![1]!.valueFrom!.fieldRef).toEqual({ apiVersion: "v1", fieldPath: "status.podIP" });
    expect(nginx!.resources.requests).toBeUndefined();
    expect(nginx!.readinessProbe).toEqual({
      httpGet: { port: "http", path: "/", scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(sidecar!.imagePullPolicy).toBe("Always");
    expect(sidecar!.resources).toEqual({});
    expect(spec.volumes![1]!.configMap).toEqual({ name: "web-config", defaultMode: 0o644 });
  });

  it("keeps explicit values, and leaves rollingUpdate alone for Recreate", () => {
    const manifest = deploymentManifest() as ReturnType<typeof deploymentManifest> & { spec: Record<string, unknown> };
    Object.assign(manifest.spec, { replicas: 0, revisionHistoryLimit: 0, strategy: { type: "Recreate" } });
    const deployment = v.parse(Deployment, manifest);
    defaultDeployment(deployment);
    expect(deployment.spec.replicas).toBe(0);
    expect(deployment.spec.revisionHistoryLimit).toBe(0);
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
  });

  it("rejects a wrong type with an issue at spec.replicas", () => {
    const manifest = { ...deploymentManifest(), spec: { ...deploymentManifest().spec, replicas: "three" } };
    const result = v.safeParse(Deployment, manifest);
    expect(result.success).toBe(false);
    expect(result.issues!.map(issuePath)).toEqual(["spec.replicas"]);
  });

  it("rejects a non-integer and an out-of-range int32", () => {
    for (const replicas of [1.5, 2 ** 31]) {
      const manifest = { ...deploymentManifest(), spec: { ...deploymentManifest().spec, replicas } };
      const result = v.safeParse(Deployment, manifest);
      expect(result.issues?.map(issuePath)).toEqual(["spec.replicas"]);
    }
  });

  it("reports missing required fields at their path", () => {
    // (A missing selector decodes: the Deployment strategy refuses it with 422 Required, as Kubernetes.)
    const result = v.safeParse(Deployment, { spec: { template: { spec: {} } } });
    expect(result.issues?.map(issuePath)).toEqual(["spec.template.spec.containers"]);
    const container = v.safeParse(Container, { image: "nginx" });
    expect(container.issues?.map(issuePath)).toEqual(["name"]);
  });

  it("strips unknown fields at every level", () => {
    const manifest = deploymentManifest() as Record<string, unknown>;
    manifest.bogus = 1;
    const spec = manifest.spec as Record<string, unknown>;
    spec.replica = 3;
    const template = spec.template as { spec: { containers: Record<string, unknown>[] } };
    template.spec.containers[0]!.imagePullPolcy = "Always";
    const deployment = v.parse(Deployment, manifest);
    expect(deployment).not.toHaveProperty("bogus");
    expect(deployment.spec).not.toHaveProperty("replica");
    expect(deployment.spec.template.spec!.containers[0]).not.toHaveProperty("imagePullPolcy");
  });

  it("gives every parse its own copy of a default object", () => {
    const first = v.parse(Deployment, deploymentManifest());
    defaultDeployment(first);
    first.spec.template.spec!.containers[0]!.resources.limits!.cpu = "2";
    first.spec.template.spec!.securityContext.runAsUser = 1000;
    const second = v.parse(Deployment, deploymentManifest());
    expect(second.spec.strategy).toEqual({ type: "RollingUpdate" });
    expect(second.spec.template.spec!.securityContext).toEqual({});
    expect(second.spec.template.spec!.containers[1]!.resources).toEqual({});
  });

  it("parses a DeploymentList", () => {
    const list = v.parse(DeploymentList, { apiVersion: "apps/v1", kind: "DeploymentList", items: [deploymentManifest()] });
    expect(list.metadata).toEqual({});
    expect(list.items).toHaveLength(1);
    expect(v.safeParse(DeploymentList, { kind: "DeploymentList" }).success).toBe(false);
  });
});

describe("ReplicaSet", () => {
  it("defaults replicas and status.replicas", () => {
    const rs = v.parse(ReplicaSet, {
      metadata: { name: "web-1" },
      spec: { selector: { matchLabels: { app: "web" } }, template: deploymentManifest().spec.template },
    });
    defaultReplicaSet(rs);
    expect(rs.spec.replicas).toBe(1);
    expect(rs.status).toEqual({ replicas: 0 });
    expect(rs.spec.template.spec!.containers[1]!.imagePullPolicy).toBe("Always");
  });
});

describe("list semantics", () => {
  it("marks containers as a map keyed by name", () => {
    expect(listSemantics(PodSpec.entries.containers)).toEqual({
      listType: "map",
      listMapKeys: ["name"],
      patchStrategy: "merge",
      patchMergeKey: "name",
    });
    expect(listSemantics(unwrap(PodSpec.entries.initContainers))).toMatchObject({ listType: "map", listMapKeys: ["name"] });
  });

  it("marks env as a map keyed by name and ports by containerPort and protocol", () => {
    expect(listSemantics(unwrap(Container.entries.env))).toEqual({
      listType: "map",
      listMapKeys: ["name"],
      patchStrategy: "merge",
      patchMergeKey: "name",
    });
    expect(listSemantics(unwrap(Container.entries.ports))).toMatchObject({
      listType: "map",
      listMapKeys: ["containerPort", "protocol"],
      patchMergeKey: "containerPort",
    });
    expect(listSemantics(unwrap(Container.entries.volumeMounts))).toMatchObject({ listMapKeys: ["mountPath"] });
    expect(listSemantics(unwrap(Container.entries.command))).toEqual({ listType: "atomic" });
  });

  it("keeps the Kubernetes patch strategies that differ from the list type", () => {
    expect(listSemantics(unwrap(PodSpec.entries.volumes))).toMatchObject({
      listType: "map",
      patchStrategy: "merge,retainKeys",
    });
    expect(listSemantics(unwrap(PodStatus.entries.hostIPs))).toEqual({
      listType: "atomic",
      patchStrategy: "merge",
      patchMergeKey: "ip",
    });
    expect(listSemantics(unwrap(PodSpec.entries.tolerations))).toEqual({ listType: "atomic" });
    expect(listSemantics(unwrap(ServiceAccount.entries.secrets))).toMatchObject({ listType: "map", listMapKeys: ["name"] });
    expect(listSemantics(unwrap(ServiceAccount.entries.imagePullSecrets))).toEqual({ listType: "atomic" });
  });
});

describe("Pod", () => {
  it("applies pod-only defaults", () => {
    const pod = v.parse(Pod, {
      metadata: { name: "p" },
      spec: {
        hostNetwork: true,
        containers: [
          {
            name: "c",
            image: "registry.local:5000/team/app",
            ports: [{ containerPort: 8080 }],
            resources: { limits: { cpu: "1" }, requests: { memory: "1Gi" } },
          },
        ],
        volumes: [{ name: "scratch" }],
      },
    });
    defaultPod(pod);
    const container = pod.spec!.containers[0]!;
    expect(container.imagePullPolicy).toBe("Always");
    expect(container.resources.requests).toEqual({ memory: "1Gi", cpu: "1" });
    expect(container.ports![0]).toEqual({ containerPort: 8080, hostPort: 8080, protocol: "TCP" });
    expect(pod.spec!.enableServiceLinks).toBe(true);
    expect(pod.spec!.volumes![0]).toEqual({ name: "scratch", emptyDir: {} });
    expect(pod.status).toEqual({});
  });

  it("decodes the volume sources with their defaults", () => {
    const volume = v.parse(Volume, {
      name: "token",
      projected: {
        sources: [
          { serviceAccountToken: { path: "token", audience: "api" } },
          { clusterTrustBundle: { signerName: "example.com/signer", path: "ca.pem", labelSelector: {} } },
          { downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        ],
      },
    });
    expect(volume.projected!.defaultMode).toBe(0o644);
    expect(volume.projected!.sources![0]!.serviceAccountToken).toEqual({
      path: "token",
      audience: "api",
      expirationSeconds: 3600,
    });
    expect(v.parse(Volume, { name: "h", hostPath: { path: "/var" } }).hostPath).toEqual({ path: "/var", type: "" });
    const ephemeral = v.parse(Volume, {
      name: "e",
      ephemeral: {
        volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } },
      },
    });
    expect(ephemeral.ephemeral!.volumeClaimTemplate!.spec.volumeMode).toBe("Filesystem");
    const image = v.parse(Volume, { name: "i", image: { reference: "quay.io/x/y:latest" } });
    expect(image.image).toEqual({ reference: "quay.io/x/y:latest" });
  });

  it("accepts the null timestamps Go clients send in status", () => {
    const status = v.parse(PodStatus, {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2026-01-02T03:04:05Z" }],
      containerStatuses: [{ name: "c", state: { running: { startedAt: "2026-01-02T03:04:05Z" } } }],
    });
    expect(status.conditions![0]!.lastProbeTime).toBeNull();
    expect(status.containerStatuses![0]).toMatchObject({
      ready: false,
      restartCount: 0,
      image: "",
      imageID: "",
      lastState: {},
    });
  });

  it("derives the pull policy from the image tag as Kubernetes does", () => {
    expect(imageTag("nginx")).toBe("latest");
    expect(imageTag("nginx:latest")).toBe("latest");
    expect(imageTag("localhost:5000/nginx")).toBe("latest");
    expect(imageTag("localhost:5000/nginx:1.2")).toBe("1.2");
    expect(imageTag("nginx@sha256:abc")).toBe("");
    expect(defaultPullPolicy("nginx@sha256:abc")).toBe("IfNotPresent");
    expect(defaultPullPolicy("")).toBe("IfNotPresent");
    expect(defaultPullPolicy("Nginx")).toBe("IfNotPresent");
  });
});

describe("core kinds", () => {
  it("defaults a ReplicationController from its template", () => {
    const rc = v.parse(ReplicationController, {
      metadata: { name: "rc" },
      spec: { template: { metadata: { labels: { app: "x" } }, spec: { containers: [{ name: "c", image: "x:1" }] } } },
    });
    defaultReplicationController(rc);
    expect(rc.spec.replicas).toBe(1);
    expect(rc.spec.selector).toEqual({ app: "x" });
    expect(rc.metadata.labels).toEqual({ app: "x" });
    expect(rc.status).toEqual({ replicas: 0 });
  });

  it("defaults Namespace, Secret and PodTemplate", () => {
    const ns = v.parse(Namespace, { metadata: { name: "team-a" } });
    defaultNamespace(ns);
    expect(ns.metadata.labels).toEqual({ "kubernetes.io/metadata.name": "team-a" });
    expect(ns.status.phase).toBe("Active");
    expect(v.parse(Secret, { data: { k: "dg==" } }).type).toBe("Opaque");
    expect(v.parse(PodTemplate, { metadata: { name: "t" } }).template).toEqual({ metadata: {} });
  });

  it("decodes a ServiceAccount", () => {
    const sa = v.parse(ServiceAccount, {
      metadata: { name: "builder" },
      secrets: [{ name: "builder-token" }],
      imagePullSecrets: [{ name: "regcred" }],
      automountServiceAccountToken: false,
    });
    expect(sa.secrets).toEqual([{ name: "builder-token" }]);
    expect(sa.automountServiceAccountToken).toBe(false);
  });
});

describe("other groups", () => {
  it("decodes a CertificateSigningRequest and a ClusterTrustBundle", () => {
    const csr = v.parse(CertificateSigningRequest, {
      metadata: { name: "node-csr" },
      spec: {
        request: "LS0t",
        signerName: "example.com/orch-apiserver-client",
        usages: ["client auth"],
        expirationSeconds: 3600,
      },
      status: { conditions: [{ type: "Approved", status: "True", lastUpdateTime: null }] },
    });
    expect(csr.spec.usages).toEqual(["client auth"]);
    expect(csr.status.conditions![0]!.type).toBe("Approved");
    const missing = v.safeParse(CertificateSigningRequest, { spec: { signerName: "x" } });
    expect(missing.issues?.map(issuePath)).toEqual(["spec.request"]);
    expect(v.parse(ClusterTrustBundle, { spec: { trustBundle: "-----BEGIN" } }).spec.trustBundle).toBe("-----BEGIN");
  });

  it("keeps DeviceClass opaque parameters as sent", () => {
    const parameters = {
      apiVersion: "gpu.example.com/v1",
      kind: "Config",
      sharing: { strategy: "TimeSlicing", extra: [1, null] },
    };
    const dc = v.parse(DeviceClass, {
      metadata: { name: "gpu" },
      spec: {
        selectors: [{ cel: { expression: 'device.driver == "gpu.example.com"' } }],
        config: [{ opaque: { driver: "gpu.example.com", parameters } }],
        extendedResourceName: "example.com/gpu",
      },
    });
    expect(dc.spec!.config![0]!.opaque!.parameters).toEqual(parameters);
    // Missing required members decode; the DeviceClass strategy refuses them with 422 Required.
    expect(v.parse(DeviceClass, { spec: { config: [{ opaque: { driver: "d" } }] } }).spec!.config![0]!.opaque!.parameters).toBeUndefined();
    expect(v.parse(DeviceClass, {}).spec).toBeUndefined();
  });

  it("defaults PriorityClass.preemptionPolicy", () => {
    const pc = v.parse(PriorityClass, { metadata: { name: "high" }, value: 1000 });
    expect(pc.preemptionPolicy).toBe("PreemptLowerPriority");
    // A missing value decodes; the PriorityClass strategy refuses it with 422 Required.
    expect(v.parse(PriorityClass, { metadata: { name: "x" } }).value).toBeUndefined();
    expect(v.safeParse(PriorityClass, { metadata: { name: "x" }, value: "1" }).issues?.map(issuePath)).toEqual(["value"]);
  });

  it("decodes the authentication kinds", () => {
    const request = v.parse(TokenRequest, { spec: { audiences: null, expirationSeconds: null, boundObjectRef: null } });
    defaultTokenRequest(request);
    expect(request.spec.expirationSeconds).toBe(3600);
    expect(v.parse(TokenRequest, {}).spec.expirationSeconds).toBe(3600);
    const review = v.parse(TokenReview, { spec: { token: "abc", audiences: ["api"] } });
    expect(review.status.user).toEqual({});
    expect(v.parse(SelfSubjectReview, {}).status).toEqual({ userInfo: {} });
  });

  it("decodes a Scale", () => {
    expect(v.parse(Scale, { spec: { replicas: 3 } })).toMatchObject({ spec: { replicas: 3 }, status: { replicas: 0 } });
  });
});

const validationRule = { rule: "self.replicas <= 10", message: "too many", reason: "FieldValueForbidden" };

const crdManifest = (prefix: "x-kubernetes" | "x-orch") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    names: { plural: "widgets", kind: "Widget", shortNames: ["wg"] },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["ports"],
                properties: {
                  replicas: { type: "integer", minimum: 0, default: 1 },
                  size: { [`${prefix}-int-or-string`]: true, anyOf: [{ type: "integer" }, { type: "string" }] },
                  ports: {
                    type: "array",
                    [`${prefix}-list-type`]: "map",
                    [`${prefix}-list-map-keys`]: ["name"],
                    items: {
                      type: "object",
                      required: ["name"],
                      properties: { name: { type: "string" }, port: { type: "integer", format: "int32" } },
                    },
                  },
                  labels: { type: "object", additionalProperties: { type: "string" }, [`${prefix}-map-type`]: "atomic" },
                  template: {
                    type: "object",
                    [`${prefix}-preserve-unknown-fields`]: true,
                    [`${prefix}-embedded-resource`]: true,
                  },
                },
                [`${prefix}-validations`]: [validationRule],
              },
              status: { type: "object", properties: { replicas: { type: "integer" } } },
            },
          },
        },
        subresources: { status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } },
        additionalPrinterColumns: [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }],
        selectableFields: [{ jsonPath: ".spec.color" }],
      },
    ],
  },
});

type SpecNode<P extends "x-kubernetes" | "x-orch"> = JSONSchemaProps<P> & { properties: Record<string, JSONSchemaProps<P>> };

describe("CustomResourceDefinition", () => {
  it("parses x-kubernetes-* extensions under the kubernetes profile", () => {
    const { CustomResourceDefinition } = crdSchemaFor("x-kubernetes");
    const result = v.safeParse(CustomResourceDefinition, crdManifest("x-kubernetes"));
    expect(result.issues).toBeUndefined();
    const crd = result.output as v.InferOutput<typeof CustomResourceDefinition>;
    const spec = crd.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec as SpecNode<"x-kubernetes">;
    const ports = spec.properties.ports!;
    expect(ports["x-kubernetes-list-type"]).toBe("map");
    expect(ports["x-kubernetes-list-map-keys"]).toEqual(["name"]);
    expect(ports.items).toMatchObject({ type: "object", required: ["name"] });
    expect(spec.properties.size!["x-kubernetes-int-or-string"]).toBe(true);
    expect(spec.properties.replicas!.default).toBe(1);
    expect(spec.properties.labels!.additionalProperties).toEqual({ type: "string" });
    expect(spec["x-kubernetes-validations"]).toEqual([validationRule]);
    expect(schemaExtensions(spec.properties.template!, "x-kubernetes")).toEqual({
      "preserve-unknown-fields": true,
      "embedded-resource": true,
    });
  });

  it("parses x-orch-* extensions under the orch profile and prunes the other profile's names", () => {
    const { CustomResourceDefinition } = crdSchemaFor("x-orch");
    const crd = v.parse(CustomResourceDefinition, crdManifest("x-orch"));
    const spec = crd.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec as SpecNode<"x-orch">;
    expect(spec.properties.ports!["x-orch-list-type"]).toBe("map");
    expect(spec.properties.labels!["x-orch-map-type"]).toBe("atomic");
    expect(schemaExtensions(spec.properties.ports!, "x-orch")).toEqual({ "list-type": "map", "list-map-keys": ["name"] });

    const foreign = v.parse(CustomResourceDefinition, crdManifest("x-kubernetes"));
    const foreignSpec = foreign.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec as SpecNode<"x-orch">;
    expect(foreignSpec.properties.ports).not.toHaveProperty("x-kubernetes-list-type");
    expect(crdSchemas["x-orch"]).toBe(crdSchemaFor("x-orch"));
  });

  it("reports type errors deep inside the schema", () => {
    const manifest = crdManifest("x-kubernetes");
    const specProperties = manifest.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;
    const ports = (specProperties as Record<string, Record<string, unknown>>).ports!;
    ports["x-kubernetes-list-map-keys"] = "name";
    const result = v.safeParse(crdSchemaFor("x-kubernetes").CustomResourceDefinition, manifest);
    expect(result.success).toBe(false);
    expect(result.issues!.map(issuePath)).toContain(
      "spec.versions.0.schema.openAPIV3Schema.properties.spec.properties.ports.x-kubernetes-list-map-keys",
    );
  });

  it("applies the CRD defaults", () => {
    const crd = v.parse(crdSchemaFor("x-orch").CustomResourceDefinition, {
      ...crdManifest("x-orch"),
      spec: {
        ...crdManifest("x-orch").spec,
        conversion: {
          strategy: "Webhook",
          webhook: { conversionReviewVersions: ["v1"], clientConfig: { service: { namespace: "ns", name: "conv" } } },
        },
      },
    });
    defaultCustomResourceDefinition(crd);
    expect(crd.spec.names).toMatchObject({ singular: "widget", listKind: "WidgetList" });
    expect(crd.spec.conversion.webhook!.clientConfig!.service!.port).toBe(443);
    expect(crd.status.storedVersions).toEqual(["v1"]);

    const plain = v.parse(crdSchemaFor("x-kubernetes").CustomResourceDefinition, crdManifest("x-kubernetes"));
    expect(plain.spec.conversion).toEqual({ strategy: "None" });
    const fromGo = v.parse(crdSchemaFor("x-kubernetes").CustomResourceDefinition, {
      ...crdManifest("x-kubernetes"),
      status: { conditions: null, acceptedNames: { plural: "", kind: "" }, storedVersions: null },
    });
    defaultCustomResourceDefinition(fromGo);
    expect(fromGo.status.storedVersions).toEqual(["v1"]);
  });
});
