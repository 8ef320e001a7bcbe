// Core (`v1`) kinds.
import {
  Namespace,
  Pod,
  PodTemplate,
  ReplicationController,
  Secret,
  ServiceAccount,
  defaultNamespace,
  defaultPod,
  defaultPodTemplate,
  defaultReplicationController,
  defaultSecret,
} from "@orch/api";
import type { ObjectHeader } from "@orch/api";
import { errors, nameIsDNSLabel } from "@orch/machinery";
import type { KindDefinition } from "../kind.js";
import { AGE, at, column, defineKind, replicaColumns, statusSubresource } from "./define.js";

const IMMORTAL_NAMESPACES = ["default", "kube-system", "kube-public"];

type Defaulter = (o: never) => void;
const defaults = (fn: Defaulter) => fn as unknown as (o: ObjectHeader) => void;

const namespaceStatus = statusSubresource(
  {
    prepareForCreate(obj) {
      const spec = (obj.spec ??= {}) as { finalizers?: string[] };
      if (!spec.finalizers?.includes("kubernetes")) spec.finalizers = [...(spec.finalizers ?? []), "kubernetes"];
      obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name! };
    },
    prepareForUpdate(obj, old) {
      // spec.finalizers change only through /finalize.
      obj.spec = old.spec;
      obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name! };
    },
  },
  () => ({ phase: "Active" }),
);

export const namespaces = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    shortNames: ["ns"],
    namespaced: false,
    schema: Namespace,
    defaults: defaults(defaultNamespace),
    validateName: nameIsDNSLabel,
    strategy: namespaceStatus.strategy,
    subresources: {
      status: namespaceStatus.status,
      finalize: {
        prepareForUpdate(obj, old) {
          const finalizers = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers;
          const status = old.status;
          Object.assign(obj, { spec: { ...(old.spec as object), finalizers }, status });
        },
      },
    },
    printerColumns: [column("Status", "string", (o) => at(o, "status.phase")), AGE],
    deleteReturnsObject: true,
    specFinalizers: (o) => (o.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [],
    prepareForDelete(o) {
      if (IMMORTAL_NAMESPACES.includes(o.metadata.name!)) {
        throw errors.forbidden({ group: "", resource: "namespaces" }, o.metadata.name!, "this namespace may not be deleted");
      }
      o.status = { ...(o.status as object), phase: "Terminating" };
    },
  });

export const secrets = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
    schema: Secret,
    defaults: defaults(defaultSecret),
    selectableFields: { type: (o) => o.type as string | undefined },
    printerColumns: [
      column("Type", "string", (o) => o.type),
      column("Data", "integer", (o) => Object.keys((o.data as object | undefined) ?? {}).length),
      AGE,
    ],
  });

export const serviceAccounts = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    shortNames: ["sa"],
    namespaced: true,
    schema: ServiceAccount,
    deleteReturnsObject: true,
    printerColumns: [column("Secrets", "integer", (o) => ((o.secrets as unknown[] | undefined) ?? []).length), AGE],
  });

const podStatus = statusSubresource({}, () => ({ phase: "Pending" }));

export const pods = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    shortNames: ["po"],
    categories: ["all"],
    namespaced: true,
    schema: Pod,
    defaults: defaults(defaultPod),
    strategy: podStatus.strategy,
    subresources: { status: podStatus.status },
    deleteReturnsObject: true,
    selectableFields: {
      "spec.nodeName": (o) => (at(o, "spec.nodeName") as string | undefined) ?? "",
      "spec.restartPolicy": (o) => at(o, "spec.restartPolicy") as string | undefined,
      "spec.schedulerName": (o) => at(o, "spec.schedulerName") as string | undefined,
      "spec.serviceAccountName": (o) => at(o, "spec.serviceAccountName") as string | undefined,
      "status.phase": (o) => at(o, "status.phase") as string | undefined,
      "status.podIP": (o) => (at(o, "status.podIP") as string | undefined) ?? "",
      "status.nominatedNodeName": (o) => (at(o, "status.nominatedNodeName") as string | undefined) ?? "",
    },
    printerColumns: [
      column("Ready", "string", (o) => {
        const statuses = (at(o, "status.containerStatuses") as { ready?: boolean }[] | undefined) ?? [];
        const total = ((at(o, "spec.containers") as unknown[] | undefined) ?? []).length;
        return `${statuses.filter((s) => s.ready).length}/${total}`;
      }),
      column("Status", "string", (o) => (o.metadata.deletionTimestamp ? "Terminating" : at(o, "status.phase"))),
      column("Restarts", "string", (o) =>
        String(
          ((at(o, "status.containerStatuses") as { restartCount?: number }[] | undefined) ?? []).reduce(
            (n, s) => n + (s.restartCount ?? 0),
            0,
          ),
        ),
      ),
      AGE,
      column("IP", "string", (o) => at(o, "status.podIP"), 1),
      column("Node", "string", (o) => at(o, "spec.nodeName"), 1),
    ],
  });

export const podTemplates = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "PodTemplate",
    plural: "podtemplates",
    namespaced: true,
    schema: PodTemplate,
    defaults: defaults(defaultPodTemplate),
    deleteReturnsObject: true,
    printerColumns: [
      column("Containers", "string", (o) =>
        ((at(o, "template.spec.containers") as { name?: string }[] | undefined) ?? []).map((c) => c.name).join(","),
      ),
      column("Images", "string", (o) =>
        ((at(o, "template.spec.containers") as { image?: string }[] | undefined) ?? []).map((c) => c.image).join(","),
      ),
      column("Pod Labels", "string", (o) => formatLabels(at(o, "template.metadata.labels"))),
    ],
  });

const rcStatus = statusSubresource();

export const replicationControllers = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ReplicationController",
    plural: "replicationcontrollers",
    shortNames: ["rc"],
    categories: ["all"],
    namespaced: true,
    schema: ReplicationController,
    defaults: defaults(defaultReplicationController),
    strategy: rcStatus.strategy,
    subresources: { status: rcStatus.status },
    printerColumns: replicaColumns((o) => formatLabels(at(o, "spec.selector"))),
  });

export function formatLabels(labels: unknown): string {
  const entries = Object.entries((labels as Record<string, string> | undefined) ?? {});
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${v}`).join(",");
}
