import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["@orch/source"] },
  ssr: { resolve: { conditions: ["@orch/source"] } },
  test: {
    include: ["{apps,libs,tools}/*/{src,test}/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default, one worker fewer than the cores, is a single worker on a two-core machine; most
    // files spend their time waiting on the processes they start (leases, rollouts, restarts), and two
    // at once took the suite there from 1,144 s to 676–738 s, every test passing in four full runs of five
    // (the fifth: tools/launcher/test/custom-resources.test.ts, which now says why if it fails again).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
