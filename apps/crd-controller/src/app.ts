// The crd-controller app (main.ts runs it): the CRD controllers with leader election, as the
// launcher starts them.
import { runControllerApp } from "@orch/controller";
import { setUpCrdControllers } from "./index.js";

export const working = runControllerApp({ name: "crd-controller", setup: setUpCrdControllers }).then((app) => app.working);
