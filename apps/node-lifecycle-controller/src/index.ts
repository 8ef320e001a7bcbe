// @orch/node-lifecycle-controller: the app is `main.ts`; its decisions, for tests and readers.
export { type LifecycleConfig, lifecycleConfig } from "./config.js";
export { type LifecycleOptions, nodeLifecycle } from "./lifecycle.js";
