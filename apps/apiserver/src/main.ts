// The apiserver process. The server runs on a thread of its own whose stack is large enough for what
// it accepts: request bodies may nest 10,000 levels deep, as in Kubernetes, and decoding, validating,
// patching and serializing such an object recurses about that deep, further than a default stack
// (about 1 MiB) allows. This thread only relays signals and supervision to it.
import { setFlagsFromString } from "node:v8";
import { Worker } from "node:worker_threads";

/** Room for every recursive step over a 10,000-level object, with a wide margin (see docs/limits.md). */
const STACK_MB = 64;
/**
 * The server thread's young generation, which V8 splits into two semi-spaces and a large-object space: 24 MiB
 * instead of V8's 48 holds each semi-space at 8 MiB, and the RSS counts both in full once a burst of
 * requests has grown them (16 MiB less with 100,000 objects stored). 12 MiB saved 15 MiB more but cost
 * the writes about a tenth more CPU, the premature promotion of requests still in flight (docs/benchmarks.md).
 */
const YOUNG_GENERATION_MB = 24;

// Whatever the server writes (database, keys, kubeconfigs) is for this user only.
process.umask(0o077);

// V8 lets the old generation grow to several times the live heap before a full collection: with 100,000
// objects that headroom was most of the RSS (~360 MiB for a live heap of ~60 MiB). A full collection once
// the heap has grown by half holds it near 250 MiB, for a few percent of the write rate
// (docs/benchmarks.md). V8 reads it when the server thread's heap is made: set before the thread starts.
setFlagsFromString("--heap-growing-percent=50");

const worker = new Worker(new URL("./worker.mjs", import.meta.url), {
  argv: process.argv.slice(2),
  resourceLimits: { stackSizeMb: STACK_MB, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
});
// The logger (pino) is loaded only to report a failure: at every start it would hold back the server's thread.
let reported: Promise<void> = Promise.resolve();
worker.on("error", (e) => {
  process.exitCode = 1;
  reported = import("@orch/log").then(({ createLogger }) => createLogger("apiserver").error("failed", e));
});
worker.on("exit", (code) => void reported.then(() => process.exit(process.exitCode ?? code)));

const stop = () => worker.postMessage("stop");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// Under the launcher, stdin is a pipe from it: when it closes, the launcher is gone and so are we.
if (process.env.ORCH_SUPERVISED === "1") {
  process.stdin.on("end", stop).on("error", stop).resume();
}
