// `npm run crd-controller`: the CRD controllers with leader election, as the launcher starts them.
import { runControllerApp } from "@orch/controller";
import { setUpCrdControllers } from "./index.js";

await runControllerApp({ name: "crd-controller", setup: setUpCrdControllers });
