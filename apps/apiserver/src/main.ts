import { configFromEnv } from "./config.js";
import { startApiserver } from "./server.js";

const started = Date.now();
const apiserver = await startApiserver(configFromEnv());
console.log(`apiserver serving on ${apiserver.url} (ready in ${Date.now() - started} ms); kubeconfig: ${apiserver.kubeconfigPath}`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void apiserver.close().then(() => process.exit(0));
  });
}
