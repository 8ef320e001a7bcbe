import { configFromEnv } from "./config.js";
import { startApiserver } from "./server.js";

const started = Date.now();
const apiserver = await startApiserver(configFromEnv());
console.log(`apiserver serving on ${apiserver.url} (ready in ${Date.now() - started} ms); kubeconfig: ${apiserver.kubeconfigPath}`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void apiserver.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// Under the launcher, stdin is a pipe from it: when it closes, the launcher is gone and so are we.
if (process.env.ORCH_SUPERVISED === "1") {
  process.stdin.on("end", stop).on("error", stop).resume();
}
