// csr-approver: approves node agent client certificate requests whose requester is allowed to make
// them, as a SubjectAccessReview decides (Kubernetes' csrapproving controller).
import { runControllerApp } from "@orch/controller";
import { csrApprover } from "./approver.js";
import { csrResource } from "@orch/api";
import type { Csr } from "./csr.js";

export const working = runControllerApp({
  name: "csr-approver",
  setup: (app) => {
    // Only the node agent client signer's requests can be approved here: the others need not be cached.
    const csrs = app.informer<Csr>(csrResource(app.profile), {
      fieldSelector: `spec.signerName=${app.profile.signers.apiserverClientNodeAgent}`,
    });
    app.runController({
      name: "csr-approver",
      sources: [csrs],
      workers: 5,
      reconciler: csrApprover({ client: app.client, csrs, profile: app.profile }),
    });
  },
}).then((app) => app.working);
