// Assembles the @orch/control-plane package before `npm pack` (its prepack script): the bundles of the
// launcher, the apiserver and every controller beside the package's own (`orch` and `testing`), and the
// declarations of the test API. Everything of orch is bundled; only better-sqlite3 (native) is a
// dependency the user's npm installs.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

const root = resolve(import.meta.dirname, "..", "..");
const pkg = join(root, "tools", "control-plane");
const controllers = readdirSync(join(root, "apps")).filter(
  (name) => name !== "apiserver" && existsSync(join(root, "apps", name, "src", "main.ts")),
);
execFileSync(
  process.execPath,
  [join(root, "tools", "build.mjs"), "tools/launcher", "apps/apiserver", "tools/control-plane", ...controllers.map((c) => `apps/${c}`)],
  {
    cwd: root,
    stdio: "inherit",
  },
);

const dist = join(pkg, "dist");
/** A bundle's chunks (what it imports dynamically, tools/build.mjs) go beside it, where it imports them from. */
const copyChunks = (from, to) => {
  if (!existsSync(join(from, "chunks"))) return;
  cpSync(join(from, "chunks"), join(to, "chunks"), { recursive: true, filter: (f) => !f.endsWith(".map") });
};
copyFileSync(join(root, "tools", "launcher", "dist", "main.mjs"), join(dist, "launcher.mjs"));
copyChunks(join(root, "tools", "launcher", "dist"), dist);
mkdirSync(join(dist, "apiserver"), { recursive: true });
for (const file of ["main.mjs", "worker.mjs", "thread.cjs"])
  copyFileSync(join(root, "apps", "apiserver", "dist", file), join(dist, "apiserver", file));
copyChunks(join(root, "apps", "apiserver", "dist"), join(dist, "apiserver"));
// The storage finds its schema migrations beside the bundle (libs/storage migrationsFolder).
cpSync(join(root, "libs", "storage", "migrations"), join(dist, "apiserver", "migrations"), { recursive: true });
mkdirSync(join(dist, "controllers"), { recursive: true });
// Each app in a directory of its own: its entry runs the `app.cjs` beside it (libs/code-cache).
for (const name of controllers) {
  const to = join(dist, "controllers", name);
  mkdirSync(to, { recursive: true });
  for (const file of ["main.mjs", "app.cjs"]) {
    if (existsSync(join(root, "apps", name, "dist", file))) copyFileSync(join(root, "apps", name, "dist", file), join(to, file));
  }
  copyChunks(join(root, "apps", name, "dist"), to);
}

// Declarations file by file, without resolving imports: the public types are declared in these files.
for (const file of ["testing", "events"]) {
  const source = readFileSync(join(pkg, "src", `${file}.ts`), "utf8");
  const { outputText, diagnostics } = ts.transpileDeclaration(source, { fileName: `${file}.ts`, compilerOptions: { strict: true } });
  if (diagnostics?.length)
    throw new Error(`${file}.ts: ${diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("\n")}`);
  writeFileSync(join(dist, `${file}.d.ts`), outputText);
}
