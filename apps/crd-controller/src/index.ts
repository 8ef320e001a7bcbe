// @orch/crd-controller: what makes a CustomResourceDefinition usable and removable — the naming,
// establishing and finalizer controllers of Kubernetes' apiextensions-apiserver, run over the HTTPS API.
// The apiserver serves a CRD's kinds once it is Established (apps/apiserver/src/custom-resources.ts).
import type { ControllerAppContext } from "@orch/controller";
import { type Crd, crdResource } from "./crd.js";
import { CrdFinalizer, finalizerFilter } from "./finalizer.js";
import { establishingReconciler } from "./establishing.js";
import { NamingController } from "./naming.js";

export { crdResource } from "./crd.js";

export function setUpCrdControllers(app: ControllerAppContext): void {
  const ref = crdResource(app.profile);
  const crds = app.informer<Crd>(ref);
  const naming = new NamingController(app.client, ref, crds, (name) => namingController.queue.add(name));
  // One worker each, as in Kubernetes: names are decided one CRD at a time.
  const namingController = app.runController({ name: "crd-naming", sources: [crds], reconciler: naming.reconcile });
  app.runController({ name: "crd-establishing", sources: [crds], reconciler: establishingReconciler(app.client, ref, crds) });
  const finalizer = `customresourcecleanup.${app.profile.group("apiextensions")}`;
  app.runController({
    name: "crd-finalizer",
    sources: [{ informer: crds, filter: finalizerFilter(finalizer) }],
    reconciler: new CrdFinalizer({ client: app.client, ref, crds, finalizer }).reconcile,
  });
}
