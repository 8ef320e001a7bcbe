// Namespace (core/v1): a scope for names; deleting one empties it first (namespace-finalizer).
import { Namespace, type ObjectHeader, defaultNamespace } from "@orch/api";
import { errors, nameIsDNSLabel } from "@orch/machinery";
import type { KindDefinition } from "../../generic/kind.js";
import { AGE, at, column, defineKind, statusSubresource } from "../../generic/define.js";

const IMMORTAL_NAMESPACES = ["default", "kube-system", "kube-public"];

/** The label naming the namespace; a namespace without a name is refused by validation, which comes after. */
function labelWithName(obj: ObjectHeader): void {
  if (obj.metadata.name) obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name };
}

const namespaceStatus = statusSubresource<Namespace>(
  {
    defaults: defaultNamespace,
    validateName: nameIsDNSLabel,
    prepareForCreate(obj) {
      const spec = (obj.spec ??= {});
      if (!spec.finalizers?.includes("kubernetes")) spec.finalizers = [...(spec.finalizers ?? []), "kubernetes"];
      labelWithName(obj);
    },
    prepareForUpdate(obj, old) {
      // spec.finalizers change only through /finalize.
      obj.spec = old.spec;
      labelWithName(obj);
    },
    specFinalizers: (o) => o.spec?.finalizers ?? [],
    beforeDelete(name) {
      if (IMMORTAL_NAMESPACES.includes(name)) {
        throw errors.forbidden({ group: "", resource: "namespaces" }, name, "this namespace may not be deleted");
      }
    },
    prepareForDelete(o) {
      o.status = { ...o.status, phase: "Terminating" };
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
    strategy: namespaceStatus.strategy,
    subresources: {
      status: namespaceStatus.status,
      finalize: {
        prepareForUpdate(obj, old) {
          const finalizers = obj.spec?.finalizers;
          const status = old.status;
          Object.assign(obj, { spec: { ...old.spec, finalizers }, status });
        },
      },
    },
    printerColumns: [column("Status", "string", (o) => at(o, "status.phase")), AGE],
    deleteReturnsObject: true,
  });
