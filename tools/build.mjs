// Bundles each runnable entry point (apps and tools) into one ESM file, so a process starts by
// parsing a single file instead of resolving hundreds of modules. Type checking is `npm run typecheck`.
import { build } from "esbuild";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const entries = [];
for (const area of ["apps", "tools"]) {
  for (const name of readdirSync(area)) {
    // `main.ts` is the process's entry point; `worker.ts`, when there is one, the code main runs on a thread.
    for (const entry of ["main", "worker"]) {
      const main = join(area, name, "src", `${entry}.ts`);
      if (existsSync(main)) entries.push({ main, out: join(area, name, "dist", `${entry}.mjs`) });
    }
  }
}

await Promise.all(
  entries.map(({ main, out }) =>
    build({
      entryPoints: [main],
      outfile: out,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["@orch/source"],
      sourcemap: "linked",
      // Native and dynamically-loaded packages stay in node_modules.
      external: ["better-sqlite3"],
      banner: {
        js: "import { createRequire as __orchCreateRequire } from 'node:module'; const require = __orchCreateRequire(import.meta.url);",
      },
      logLevel: "warning",
    }),
  ),
);
