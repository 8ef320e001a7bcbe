// @orch/scheduler: the app is src/main.ts; these are its parts, for tests.
export * from "./filters.js";
export * from "./resources.js";
export * from "./scheduler.js";
