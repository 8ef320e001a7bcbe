// What `npm start` runs: the Nx build (`nx run-many -t build`, cached per project), unless nothing that
// goes into a build has changed since this script last saw one succeed; then the program its argument
// names (the launcher's bundle), in this same process: a second Node process would cost its start-up
// (40 to 100 ms) again. Nx alone needs about a second to find that every build is a cache hit (most of it
// loading its own code); this check takes a small fraction of that, which is what keeps `npm start`
// to ready within 1.5 s when nothing changed (issue 18).
//
// "Nothing changed" means: the same SHA-256 over the paths and contents of the build's inputs (every
// file of apps/, libs/ and tools/ but node_modules, dist, test/ folders, *.test.ts and *.md, which is
// what nx.json's build inputs name; the root package.json, lock files, nx.json and tsconfigs), and the
// same paths, sizes and modification times of the files in every dist/ (but the code caches processes
// write there). Inputs are compared by content, not by time, so a checkout or copy that keeps old
// timestamps is still a change. The fingerprint lives in node_modules/.cache/orch/, so `npm ci` starts
// over with a real Nx build.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(import.meta.dirname, "..");
const saved = join(root, "node_modules", ".cache", "orch", "build-fingerprint.json");
const areas = ["apps", "libs", "tools"];
const rootInputs = [
  "package.json",
  "package-lock.json",
  "node_modules/.package-lock.json",
  "nx.json",
  "tsconfig.json",
  "tsconfig.base.json",
];

/** Files under `dir` (relative to the root), sorted, without the folders `skip` rejects. */
function files(dir, skip) {
  const out = [];
  const entries = readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!skip(path, entry.name)) out.push(...files(path, skip));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** A project's own node_modules, dist and test folders are not build inputs; nested node_modules neither. */
const notInput = (path, name) => name === "node_modules" || /^(apps|libs|tools)\/[^/]+\/(dist|test)$/.test(path);

function inputsHash() {
  const hash = createHash("sha256");
  const paths = [
    ...rootInputs.filter((p) => existsSync(join(root, p))),
    ...areas.flatMap((area) => files(area, notInput)).filter((p) => !p.endsWith(".test.ts") && !p.endsWith(".md")),
  ];
  for (const path of paths) {
    hash.update(`${path}\0`);
    hash.update(readFileSync(join(root, path)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

function outputsHash() {
  const hash = createHash("sha256");
  for (const area of ["apps", "tools"]) {
    for (const project of readdirSync(join(root, area)).sort()) {
      const dist = `${area}/${project}/dist`;
      if (!existsSync(join(root, dist))) continue;
      // Not the code caches a process writes beside its bundle at run time (libs/code-cache).
      for (const path of files(dist, () => false).filter((p) => !/\.cache(\.[^/]*\.tmp)?$/.test(p))) {
        const { size, mtimeMs } = statSync(join(root, path));
        hash.update(`${path}\0${size}\0${mtimeMs}\0`);
      }
    }
  }
  return hash.digest("hex");
}

function read(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

function buildIfChanged() {
  const inputs = inputsHash();
  const last = read(saved);
  if (last?.inputs === inputs && last?.outputs === outputsHash()) {
    console.error("[build] nothing changed since the last build");
    return;
  }
  // In-process plugins: starting a worker process per Nx plugin costs more than the whole graph.
  const nx = spawnSync(join(root, "node_modules", ".bin", "nx"), ["run-many", "-t", "build"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NX_ISOLATE_PLUGINS: "false" },
  });
  if (nx.status !== 0) process.exit(nx.status ?? 1);
  // The inputs as they were before the build: a file edited while it ran makes the next start build again.
  mkdirSync(dirname(saved), { recursive: true });
  writeFileSync(`${saved}.${process.pid}`, JSON.stringify({ inputs, outputs: outputsHash() }));
  renameSync(`${saved}.${process.pid}`, saved);
}

buildIfChanged();
const program = process.argv[2];
if (program) await import(pathToFileURL(resolve(root, program)).href);
