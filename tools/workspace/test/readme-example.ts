// The README's controller example, kept here so the type checker proves it still compiles.
import type { Deployment } from "@orch/api";
import { runControllerApp, writeStatus } from "@orch/controller";

export async function example(): Promise<void> {
  await runControllerApp({
    name: "my-controller",
    setup: ({ client, informer, runController }) => {
      const ref = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
      const deployments = informer<Deployment>(ref);
      runController({
        name: "deployments",
        sources: [deployments],
        workers: 2,
        reconciler: {
          async reconcile(key) {
            const d = deployments.getByKey(key);
            if (!d) return; // gone: nothing to do
            await writeStatus(client, ref, d, (o) => {
              o.status = { ...o.status, observedGeneration: o.metadata.generation };
            });
          },
        },
      });
    },
  });
}
