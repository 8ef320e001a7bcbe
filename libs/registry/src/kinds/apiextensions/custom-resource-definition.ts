// CustomResourceDefinition (apiextensions.<domain>/v1, spec 2.12). Validation is Kubernetes'
// (crd-validation.ts); like Kubernetes' strategy, create starts the status over with the storage
// version as the only stored version, and an update records a new storage version.
import { type CustomResourceDefinition, type NamingProfile, crdSchemaFor, defaultCustomResourceDefinition } from "@orch/api";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { validateCrd, validateCrdName, validateCrdStatus, validateCrdUpdate, recordStorageVersion } from "./crd-validation.js";
import { beginCrdDeletion } from "./custom-resource-kind.js";
import { at, column, defineKind, statusSubresource } from "../../generic/define.js";

export const customResourceDefinitions = (p: NamingProfile): KindDefinition => {
  const prefix = p.extensionPrefix;
  const main: Strategy<CustomResourceDefinition> = {
    defaults: defaultCustomResourceDefinition,
    prepareForCreate(obj) {
      recordStorageVersion(obj);
    },
    prepareForUpdate(obj) {
      recordStorageVersion(obj);
    },
    validateName: validateCrdName,
    validate: (obj) => validateCrd(obj, prefix),
    validateUpdate: (obj, old) => validateCrdUpdate(obj, old, prefix),
    // Deleting a CRD first deletes its instances: the crd-controller's clean-up finalizer holds it.
    prepareForDelete: (obj) => beginCrdDeletion(obj, p),
  };
  const crdStatus = statusSubresource(main, () => ({}));
  return defineKind({
    group: p.group("apiextensions"),
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    shortNames: ["crd", "crds"],
    namespaced: false,
    schema: crdSchemaFor(prefix).CustomResourceDefinition,
    strategy: crdStatus.strategy,
    subresources: { status: { ...crdStatus.status, validateUpdate: (obj) => validateCrdStatus(obj) } },
    // Its own finalizer is not a standard one: apiextensions objects get the generic metadata rules.
    genericMetaValidation: true,
    printerColumns: [column("Created At", "date", (o) => at(o, "metadata.creationTimestamp"))],
  });
};
