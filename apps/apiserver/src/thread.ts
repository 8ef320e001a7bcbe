// The apiserver itself, on the thread main.ts starts for it (worker.ts runs this bundle, built as
// CommonJS, through a code cache): serves until told to stop, then exits the thread. Also runs the
// maintenance command given in its arguments.
import { createLogger } from "@orch/log";
import { addSigningKey } from "@orch/tokens";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { configFromEnv } from "./config.js";
import { startApiserver } from "./server.js";
import { ONLY_THREAD, type ServingThread } from "./serving-thread.js";

async function run(): Promise<void> {
  // `rotate-service-account-key`: a new signing key beside the old ones, used from the next start on.
  if (process.argv[2] === "rotate-service-account-key") {
    const pki = join(configFromEnv().dataDir, "pki");
    await mkdir(pki, { recursive: true, mode: 0o700 });
    console.log(`new service account signing key: ${await addSigningKey(pki)} (restart the apiserver to sign with it)`);
    process.exit(0);
  }

  const log = createLogger("apiserver");
  const started = Date.now();
  const thread = (workerData as ServingThread | undefined) ?? ONLY_THREAD;
  const apiserver = await startApiserver(configFromEnv(), log, thread);
  log.info(`serving on ${apiserver.url}`, {
    readyMs: Date.now() - started,
    kubeconfig: apiserver.kubeconfigPath,
    ...(thread.threads > 1 ? { thread: thread.index } : {}),
  });
  // The other serving threads start now, on this one's socket.
  if (thread.index === 0 && thread.threads > 1) parentPort?.postMessage(apiserver.listening);

  let stopping = false;
  parentPort?.on("message", (message) => {
    if (message !== "stop" || stopping) return;
    stopping = true;
    void apiserver.close().then(() => process.exit(0));
  });
}

/** Settles once the apiserver serves; a failure to start rejects it. */
export const serving = run();
