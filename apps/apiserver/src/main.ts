// The apiserver process. The server runs on a thread of its own whose stack is large enough for what
// it accepts: request bodies may nest 10,000 levels deep, as in Kubernetes, and decoding, validating,
// patching and serializing such an object recurses about that deep, further than a default stack
// (about 1 MiB) allows. This thread only starts the serving threads and relays signals and supervision to them.
import { setFlagsFromString } from "node:v8";
import { Worker } from "node:worker_threads";
import type { ServingThread } from "./serving-thread.js";

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

/**
 * ORCH_APISERVER_THREADS: how many threads serve requests (default 1). Each is a whole apiserver on the
 * same port and database, as replicas are (docs/architecture.md#serving-threads): the first listens,
 * writes the kubeconfigs and runs the cluster's singletons; the others open its listening socket once
 * they are ready, and the kernel hands each new connection to one of them.
 */
function threadCount(): number {
  const value = process.env.ORCH_APISERVER_THREADS || "1";
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`ORCH_APISERVER_THREADS must be a positive integer, not ${JSON.stringify(value)}`);
  return n;
}
const threads = threadCount();

const workers: Worker[] = [];
let stopping = false;
// The logger (pino) is loaded only to report a failure: at every start it would hold back the server's thread.
let reported: Promise<void> = Promise.resolve();
function start(thread: ServingThread): Worker {
  const worker = new Worker(new URL("./worker.mjs", import.meta.url), {
    argv: process.argv.slice(2),
    workerData: thread,
    resourceLimits: { stackSizeMb: STACK_MB, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  worker.on("error", (e) => {
    process.exitCode = 1;
    reported = import("@orch/log").then(({ createLogger }) => createLogger("apiserver").error("failed", e));
  });
  worker.on("exit", (code) => {
    workers.splice(workers.indexOf(worker), 1);
    // One thread ending unasked ends the process (its supervisor restarts it); asked to stop, the last one does.
    if (!stopping || workers.length === 0) void reported.then(() => process.exit(process.exitCode ?? code));
  });
  workers.push(worker);
  return worker;
}

const first = start({ index: 0, threads });
// The first thread reports its listening socket once it serves; the others share it.
first.once("message", (listening: ServingThread["listening"]) => {
  if (stopping) return;
  for (let index = 1; index < threads; index++) start({ index, threads, listening });
});

const stop = () => {
  stopping = true;
  for (const worker of workers) worker.postMessage("stop");
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// Under the launcher, stdin is a pipe from it: when it closes, the launcher is gone and so are we.
if (process.env.ORCH_SUPERVISED === "1") {
  process.stdin.on("end", stop).on("error", stop).resume();
}
