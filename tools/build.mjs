// Bundles each runnable entry point (apps and tools) into one ESM file, so a process starts by
// parsing a single file instead of resolving hundreds of modules. Type checking is `npm run typecheck`.
//
//   node tools/build.mjs                    every app and tool with a src/main.ts
//   node tools/build.mjs apps/apiserver ... only these projects (what each project's Nx `build` target runs)
//
// A project's dist/ is built afresh beside it and swapped in whole once every bundle is written, so
// that what Nx caches as its output is exactly this build's files, and a process started meanwhile (a
// test's control plane while another test packs the control-plane package) finds the old bundles or
// the new ones, never an empty or half-written dist/.
import { build } from "esbuild";
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
/** Where a project's bundles are written before they replace its dist/ (named for this process). */
const NEXT = `dist.next.${process.pid}`;

const projects =
  process.argv.length > 2
    ? process.argv.slice(2).map((dir) => relative(root, resolve(dir)))
    : ["apps", "tools"].flatMap((area) => readdirSync(join(root, area)).map((name) => join(area, name)));

// `main.ts` is the process's entry point; `worker.ts`, when there is one, the code main runs on a
// thread; `testing.ts`, a library entry a package exports (tools/control-plane); `thread.ts` (the
// apiserver's) and `app.ts` (a controller app's, the orchlet's), the code main or a worker runs
// through a V8 code cache, as CommonJS (libs/code-cache).
const ENTRIES = ["main", "worker", "testing", "thread", "app"];
const COMMONJS = new Set(["thread", "app"]);

const entries = [];
const built = [];
for (const project of projects) {
  const found = ENTRIES.map((entry) => ({
    main: join(project, "src", `${entry}.ts`),
    out: join(project, NEXT, `${entry}.${COMMONJS.has(entry) ? "cjs" : "mjs"}`),
  })).filter(({ main }) => existsSync(join(root, main)));
  if (found.length === 0) {
    if (process.argv.length > 2) throw new Error(`${project} has no src/main.ts to build`);
    continue;
  }
  built.push(project);
  entries.push(...found);
}

const results = await Promise.all(
  entries.map(({ main, out }) =>
    build({
      absWorkingDir: root,
      entryPoints: [main],
      bundle: true,
      metafile: true,
      platform: "node",
      target: "node20",
      conditions: ["@orch/source"],
      sourcemap: "linked",
      // Native and dynamically-loaded packages stay in node_modules.
      external: ["better-sqlite3"],
      logLevel: "warning",
      ...(out.endsWith(".cjs")
        ? // The runner passes the bundle's own URL for what the sources read of import.meta.
          { format: "cjs", outfile: out, define: { "import.meta.url": "__importMetaUrl" } }
        : {
            format: "esm",
            // What a bundle imports dynamically (the launcher's NATS client, the logger the apiserver loads
            // to report a failure) becomes a chunk in dist/chunks/, read only when imported: V8 parses
            // every byte of a module it loads, so code a start does not run still cost it time.
            splitting: true,
            outdir: dirname(out),
            entryNames: "[name]",
            outExtension: { ".js": ".mjs" },
            chunkNames: "chunks/[name]-[hash]",
            banner: {
              js: "import { createRequire as __orchCreateRequire } from 'node:module'; const require = __orchCreateRequire(import.meta.url);",
            },
          }),
    }),
  ),
).catch((e) => {
  // A failed build leaves the dist/ it would have replaced as it was.
  for (const project of built) rmSync(join(root, project, NEXT), { recursive: true, force: true });
  throw e;
});
for (const { metafile } of results) for (const out of Object.keys(metafile.outputs)) if (/\.(m|c)js$/.test(out)) asciiOnly(join(root, out));
for (const project of built) {
  const dist = join(root, project, "dist");
  const old = join(root, project, `dist.old.${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(join(root, project, NEXT), dist);
  rmSync(old, { recursive: true, force: true });
}

/**
 * Escapes what non-ASCII characters remain in a bundle. V8 holds a source with even one of them as two
 * bytes a character, and reads and compiles it about a fifth slower (the apiserver's 4 MB at every
 * start). esbuild escapes strings but leaves comments and regular expression literals as written,
 * where a \u escape means the same character.
 */
function asciiOnly(file) {
  const text = readFileSync(file, "utf8");
  if (!/[^\x00-\x7f]/.test(text)) return;
  writeFileSync(
    file,
    text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
  );
}
