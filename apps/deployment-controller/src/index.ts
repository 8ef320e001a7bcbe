// @orch/deployment-controller: the app is src/main.ts; these are its pure parts, for tests.
export * from "./deployment/util.js";
export * from "./deployment/status.js";
export { isPodActive, isPodAvailable, isPodReady, podsToDelete } from "./pods.js";
export { POD_TEMPLATE_HASH_LABEL, type WellKnownNames, wellKnownNames } from "./resources.js";
