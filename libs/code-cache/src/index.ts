// @orch/code-cache: runs a process's CommonJS bundle through a V8 code cache kept beside it, so that it
// starts by deserializing its compiled code instead of compiling it again (and with V8 optimizing hot
// code sooner than by default, see runBundle). Compiling the bundle was the
// largest part of the apiserver's start, and a third of each controller's (docs/benchmarks.md); Node 20
// has no compile cache for ES modules (module.enableCompileCache arrived in Node 22), but a classic
// script compiled by vm.Script takes V8's cached data. The first start after a build compiles as before
// and, once the process works, writes the cache with every function compiled so far; later starts
// deserialize them instead of compiling.
//
// The cache sits beside the bundle, so whoever may change the bundle may change it, and nobody else:
// cached data is code. It is named for the bundle file's size, inode and change time (which every write
// or copy of the file moves, unlike the modification time, which npm and copies may keep), so a rebuilt
// bundle never meets an old cache: V8 itself checks only the source's length, its own version and its
// flags (it rejects a cache that does not fit them; the next start then writes a new one).
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { Script } from "node:vm";

export interface CommonJsRun {
  /** The bundle's module.exports. */
  exports: Record<string, unknown>;
  /** Whether V8 took the cache (false on the first start after a build, or when V8 rejected it). */
  fromCache: boolean;
  /** Writes the cache unless it was used; call once the code a start runs has been compiled. Never throws. */
  saveCache(): void;
}

/**
 * Evaluates `file` as a CommonJS module (`exports`, `require`, `module`, `__filename`, `__dirname`, and
 * `__importMetaUrl` for what the bundler left of `import.meta.url`).
 */
export function runCommonJs(file: string): CommonJsRun {
  const source = readFileSync(file, "utf8");
  const { size, ino, ctimeNs } = statSync(file, { bigint: true });
  const cacheFile = `${file}.${size}-${ino}-${ctimeNs}.cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // none yet
  }
  // On the first line, so that line numbers in stack traces are the bundle's own.
  const wrapped = `(function (exports, require, module, __filename, __dirname, __importMetaUrl) {${source}\n})`;
  const script = new Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  return {
    exports: module.exports,
    fromCache,
    saveCache() {
      if (fromCache) return;
      // Replicas or test control planes may start together from one bundle: each writes its own file
      // and renames it into place, so a reader never sees half a cache.
      const temporary = `${cacheFile}.${process.pid}.${Date.now()}.tmp`;
      let fd: number | undefined;
      try {
        // Opened before the cache is serialized (about 140 ms of CPU): a read-only installation, which
        // starts without the cache as before, does not pay for it at every start.
        fd = openSync(temporary, "wx", 0o600);
        writeFileSync(fd, script.createCachedData());
        closeSync(fd);
        fd = undefined;
        renameSync(temporary, cacheFile);
      } catch {
        if (fd !== undefined) closeSync(fd);
        rmSync(temporary, { force: true });
      }
    },
  };
}

/**
 * How much bytecode a function runs before V8 considers optimizing it: a quarter of V8 11's 67,584. Our
 * processes run the same few paths (a pod's create, binding, status and events; a get) thousands of
 * times within seconds, and with the default much of that ran unoptimized for longer: a second rollout of
 * 1,000 pods ran at 392 against 351 pods/s (medians of six alternated pairs; docs/benchmarks.md).
 */
const INTERRUPT_BUDGET = 16 * 1024;

/**
 * A process's whole entry: runs the bundle at `url` (tools/build.mjs makes `thread.cjs` and `app.cjs`
 * bundles), waits for the promise it exports as `ready` (the apiserver serving, a controller app
 * leading with its caches filled), then saves the cache. A rejection is the process's own failure to
 * start, and rejects here; a `ready` that never settles (a replica waiting for its lease) saves nothing.
 */
export async function runBundle(url: URL, ready: string): Promise<void> {
  const run = runCommonJs(fileURLToPath(url));
  await run.exports[ready];
  run.saveCache();
  // Only once started: from the start on, V8 optimized the start's own code too, which runs once (the
  // launcher took 80 ms longer). And after the cache is saved: V8 takes a cache only under the flags it
  // was made with, as a process reads them when it first loads one.
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
}
