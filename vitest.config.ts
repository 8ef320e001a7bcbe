import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["@orch/source"] },
  ssr: { resolve: { conditions: ["@orch/source"] } },
  test: {
    include: ["{apps,libs,tools}/*/{src,test}/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
